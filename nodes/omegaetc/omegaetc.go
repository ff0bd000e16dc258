// Package omegaetc is the eventual leader detector Ω on a complete graph
// with eventually timely channels, after Chandra and Toueg, as in the
// course material, as a pure state machine.
//
// Every η each process sends ALIVE to every other. Each process trusts one
// process, at first the one with the smallest id, and watches it with a
// timer:
//
//   - ALIVE from the trusted process resets the timer;
//   - ALIVE from a process q with a smaller id than the trusted one means
//     that q was suspected wrongly: q becomes trusted again and the timeout
//     grows by one step, so that q is suspected less readily;
//   - when the timer expires, trust moves to the next id, in id order (and
//     stops at the process itself, which never suspects itself).
//
// After the global stabilisation time every channel delivers within some
// unknown bound Δ. From then on the smallest correct id's ALIVEs always
// reach everyone; each wrong suspicion of it grows the timeout, so after
// finitely many the timeout exceeds η + Δ and trust settles on it for good.
// Before that, processes may trust different leaders, and two may trust
// themselves at once: Ω promises eventual leadership, not exclusion.
//
// Each process reports its trusted process as its leader, and its current
// timeout as the metric "timeout" (in milliseconds) whenever it changes.
package omegaetc

import (
	"strconv"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/ring"
)

// Alive is the heartbeat.
type Alive struct {
	ID int `json:"id"`
}

func (Alive) Type() string { return "alive" }

// Params are the algorithm's parameters, from the scenario's [params]
// table. The defaults suit nodes on one machine.
type Params struct {
	// Eta ("eta") is the heartbeat period η. Default 20ms.
	Eta time.Duration
	// Timeout ("timeout") is the initial timeout on the trusted process.
	// Default 3η.
	Timeout time.Duration
	// Step ("step") is how much the timeout grows after each wrong
	// suspicion. Default η.
	Step time.Duration
}

// ParseParams reads the parameters, with their defaults.
func ParseParams(p *nodes.Params) (Params, error) {
	var out Params
	var err error
	if out.Eta, err = p.PositiveDuration("eta", 20*time.Millisecond); err != nil {
		return out, err
	}
	if out.Timeout, err = p.PositiveDuration("timeout", 3*out.Eta); err != nil {
		return out, err
	}
	if out.Step, err = p.PositiveDuration("step", out.Eta); err != nil {
		return out, err
	}
	return out, p.Unused()
}

// Spec describes the algorithm to the drivers. There is no per-election
// message bound: heartbeats flow for ever (n(n−1) every η).
var Spec = nodes.Spec{
	Name:     "omega-etc",
	Summary:  "ALIVE every η; trust the smallest id not suspected; the timeout grows after each wrong suspicion",
	Topology: "complete",
	Elects:   "min",
	Codec:    nodes.NewCodec(Alive{}),
	New: func(p *nodes.Params) (nodes.Machine, error) {
		params, err := ParseParams(p)
		if err != nil {
			return nil, err
		}
		return &Machine{p: params}, nil
	},
}

// Timer names.
const (
	timerHeartbeat = "heartbeat"
	timerLeader    = "leader"
)

// Machine is one process.
type Machine struct {
	p       Params
	env     nodes.Env
	order   []string // every node, by id, smallest first
	others  []string
	trusted string
	timeout time.Duration
}

var _ nodes.Machine = (*Machine)(nil)

// Start trusts the smallest id and starts the heartbeat.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.order = ring.ByID(env)
	m.others = ring.Others(env)
	m.setTimeout(m.p.Timeout)
	m.trust(m.order[0])
	m.heartbeat()
}

// Request answers "elect" with the trusted process: Ω needs no trigger.
func (m *Machine) Request(r nodes.Request) {
	if r.Op != "elect" {
		m.env.Fail(r, nodes.Error{Code: nodes.CodeNotSupported, Text: "omega-etc only knows elect", Definite: true})
		return
	}
	m.env.Reply(r, m.trusted)
}

// Receive handles ALIVE.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	if _, ok := msg.(Alive); !ok {
		return
	}
	switch {
	case from == m.trusted:
		m.watch()
	case m.env.ElectionID(from) < m.env.ElectionID(m.trusted):
		m.setTimeout(m.timeout + m.p.Step) // from was suspected wrongly
		m.trust(from)
	}
}

// Timeout handles the heartbeat and the expiry of the trusted process's
// timer.
func (m *Machine) Timeout(name string) {
	switch name {
	case timerHeartbeat:
		m.heartbeat()
	case timerLeader:
		m.trust(m.after(m.trusted))
	}
}

func (m *Machine) heartbeat() {
	for _, o := range m.others {
		m.env.Send(o, Alive{ID: m.env.ElectionID(m.env.Self())})
	}
	m.env.SetTimer(timerHeartbeat, m.p.Eta)
}

// after is the node with the next id after node, or self if node is the
// last (trust never passes the process itself).
func (m *Machine) after(node string) string {
	for i, n := range m.order {
		if n == node && i+1 < len(m.order) {
			return m.order[i+1]
		}
	}
	return m.env.Self()
}

func (m *Machine) trust(node string) {
	if m.trusted != node {
		m.trusted = node
		m.env.Report(nodes.Leader(node))
	}
	m.watch()
}

// watch (re)starts the timer on the trusted process; a process does not
// watch itself.
func (m *Machine) watch() {
	if m.trusted == m.env.Self() {
		m.env.CancelTimer(timerLeader)
		return
	}
	m.env.SetTimer(timerLeader, m.timeout)
}

func (m *Machine) setTimeout(d time.Duration) {
	m.timeout = d
	m.env.Report(nodes.Metric("timeout", strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)))
}
