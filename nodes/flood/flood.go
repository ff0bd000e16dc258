// Package flood is the harness's own test traffic, not an election: every
// node sends a numbered ping to every other node at every tick of a timer.
// coup's fault tests run it to see what faults do to a steady, chatty flow
// of messages.
//
// At each tick a node counts a round, reports it (metric "round": the
// round number, which starts again from 1 in a fresh process), then sends
// ping{round, payload} to every peer, the payload being "<sender>/<round>".
// A node that receives a ping whose payload does not match its sender and
// round reports metric "payload_mismatch" with the number of such pings so
// far: an end-to-end check that per-message checksums cannot replace.
//
// Parameters: interval (default 10ms), the time between ticks on the
// node's clock; rounds (default 0, no limit), the number of rounds. It
// answers every client request at once, with no value.
package flood

import (
	"fmt"
	"strconv"
	"time"

	"github.com/coupharness/coup/nodes"
)

// Ping is one node's message of one round.
type Ping struct {
	Round   int    `json:"round"`
	Payload string `json:"payload"`
}

func (Ping) Type() string { return "ping" }

// Payload is the payload a ping of that sender and round must carry.
func Payload(from string, round int) string { return fmt.Sprintf("%s/%d", from, round) }

// Metrics the nodes report.
const (
	MetricRound    = "round"
	MetricMismatch = "payload_mismatch"
)

// Spec describes the algorithm to the drivers.
var Spec = nodes.Spec{
	Name:     "flood",
	Summary:  "harness test traffic: every node pings every other at every tick (not an election)",
	Topology: "complete",
	Codec:    nodes.NewCodec(Ping{}),
	New: func(p *nodes.Params) (nodes.Machine, error) {
		interval, err := p.Duration("interval", 10*time.Millisecond)
		if err != nil {
			return nil, err
		}
		if interval <= 0 {
			return nil, &nodes.ParamError{Key: "interval", Err: "must be more than zero"}
		}
		rounds, err := p.Int("rounds", 0)
		if err != nil {
			return nil, err
		}
		if rounds < 0 {
			return nil, &nodes.ParamError{Key: "rounds", Err: "must not be negative"}
		}
		if err := p.Unused(); err != nil {
			return nil, err
		}
		return &Machine{interval: interval, rounds: rounds}, nil
	},
}

// Machine is one flooding node.
type Machine struct {
	interval   time.Duration
	rounds     int
	env        nodes.Env
	round      int
	mismatches int
}

var _ nodes.Machine = (*Machine)(nil)

const tick = "tick"

// Start arms the first tick.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.env.SetTimer(tick, m.interval)
}

// Timeout runs a round: report it, ping every peer, arm the next tick.
func (m *Machine) Timeout(name string) {
	if name != tick {
		return
	}
	m.round++
	m.env.Report(nodes.Metric(MetricRound, strconv.Itoa(m.round)))
	self := m.env.Self()
	for _, peer := range m.env.Nodes() {
		if peer != self {
			m.env.Send(peer, Ping{Round: m.round, Payload: Payload(self, m.round)})
		}
	}
	if m.rounds == 0 || m.round < m.rounds {
		m.env.SetTimer(tick, m.interval)
	}
}

// Receive checks a ping's payload.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	p, ok := msg.(Ping)
	if !ok || p.Payload == Payload(from, p.Round) {
		return
	}
	m.mismatches++
	m.env.Report(nodes.Metric(MetricMismatch, strconv.Itoa(m.mismatches)))
}

// Request answers at once.
func (m *Machine) Request(r nodes.Request) { m.env.Reply(r, "") }
