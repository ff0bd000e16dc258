// Package omegaminimal is the eventual leader detector Ω with minimal
// synchrony, after Aguilera, Delporte-Gallet, Fauconnier and Toueg (2003),
// as in the course material, as a pure state machine.
//
// Only one correct process need be a ◇-source: after some unknown time its
// outgoing links deliver within an unknown bound. Every other link may be
// lossy and slow for ever. Each process p keeps a suspicion counter
// suspect[q] for every process q, and:
//
//   - every η sends (ALIVE, its sequence number, its suspicion vector) to
//     every other process;
//   - on the first receipt of each heartbeat (origin, sequence number),
//     relays it to every other process, merges the vector into its own by
//     taking the maximum of each entry, and restarts its timer on the
//     heartbeat's origin q, set to η + suspect[q] time units;
//   - when the timer on q expires, raises suspect[q] by one and restarts it;
//   - trusts as leader the process k that minimises (suspect[k], id of k).
//
// The ◇-source's counter stops growing, since eventually its heartbeats
// always arrive within its timeout; the vectors, merged by maximum, carry
// everyone's counters to everyone; so the processes whose counters stay
// bounded are eventually known to all, and every process settles on the
// same one, the one with the smallest bounded counter and then the
// smallest id. When no correct process is ever suspected for long (all links
// timely, crashes only) the counters of the correct processes stay equal
// and that is the smallest correct id. Before settling, processes may trust
// different leaders.
//
// Each process reports its leader, and the trusted process's suspicion
// counter as a metric (leader_suspicions); the heartbeats flow for ever, with
// (n−1)² messages per process every η, relays included.
package omegaminimal

import (
	"slices"
	"strconv"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/ring"
)

// Heartbeat is an ALIVE message with its origin's sequence number and the
// suspicion vector of the process that sent it first, one counter per node
// in the order of the node list.
type Heartbeat struct {
	Origin  string `json:"origin"`
	Seq     int    `json:"seq"`
	Suspect []int  `json:"suspect"`
}

func (Heartbeat) Type() string { return "heartbeat" }

// Params are the algorithm's parameters, from the scenario's [params]
// table. The defaults suit nodes on one machine.
type Params struct {
	// Eta ("eta") is the heartbeat period η. Default 20ms.
	Eta time.Duration
	// Unit ("unit") is the time one suspicion adds to the timeout on a
	// process: the timer on q runs η + suspect[q]·unit. Default 10ms.
	Unit time.Duration
}

// ParseParams reads the parameters, with their defaults.
func ParseParams(p *nodes.Params) (Params, error) {
	var out Params
	var err error
	if out.Eta, err = p.PositiveDuration("eta", 20*time.Millisecond); err != nil {
		return out, err
	}
	if out.Unit, err = p.PositiveDuration("unit", 10*time.Millisecond); err != nil {
		return out, err
	}
	return out, p.Unused()
}

// Spec describes the algorithm to the drivers. There is no per-election
// message bound: heartbeats flow for ever.
var Spec = nodes.Spec{
	Name:     "omega-minimal",
	Summary:  "relayed heartbeats with suspicion vectors; trust the least suspected; needs one eventually timely source",
	Topology: "complete",
	Elects:   "min",
	Codec:    nodes.NewCodec(Heartbeat{}),
	New: func(p *nodes.Params) (nodes.Machine, error) {
		params, err := ParseParams(p)
		if err != nil {
			return nil, err
		}
		return &Machine{p: params}, nil
	},
}

const timerHeartbeat = "heartbeat"

// timerOn names the timer on a process.
func timerOn(q string) string { return "suspect:" + q }

// Machine is one process.
type Machine struct {
	p       Params
	env     nodes.Env
	all     []string       // the node list; suspect is indexed like it
	index   map[string]int // node -> index in all
	others  []string
	suspect []int
	seq     int
	seen    map[string]int // origin -> highest sequence number received
	leader  string
	// counted is the trusted process's counter as last reported (the
	// metric leader_suspicions), -1 before the first report.
	counted int
}

var _ nodes.Machine = (*Machine)(nil)

// Start sends the first heartbeat and starts a timer on every other
// process.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.all = env.Nodes()
	m.index = make(map[string]int, len(m.all))
	for i, n := range m.all {
		m.index[n] = i
	}
	m.others = ring.Others(env)
	m.suspect = make([]int, len(m.all))
	m.seen = map[string]int{}
	m.counted = -1
	for _, q := range m.others {
		m.watch(q)
	}
	m.elect()
	m.heartbeat()
}

// Request answers "elect" with the current leader: Ω needs no trigger.
func (m *Machine) Request(r nodes.Request) {
	if r.Op != "elect" {
		m.env.Fail(r, nodes.Error{Code: nodes.CodeNotSupported, Text: "omega-minimal only knows elect", Definite: true})
		return
	}
	m.env.Reply(r, m.leader)
}

// Receive handles a heartbeat: only its first receipt counts.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	h, ok := msg.(Heartbeat)
	if !ok || h.Origin == m.env.Self() || h.Seq <= m.seen[h.Origin] {
		return
	}
	if _, known := m.index[h.Origin]; !known || len(h.Suspect) != len(m.all) {
		m.env.Logf("ignoring a malformed heartbeat from %s", from)
		return
	}
	m.seen[h.Origin] = h.Seq
	for _, o := range m.others {
		if o != h.Origin && o != from {
			m.env.Send(o, h)
		}
	}
	for i, s := range h.Suspect {
		m.suspect[i] = max(m.suspect[i], s)
	}
	m.watch(h.Origin)
	m.elect()
}

// Timeout handles the heartbeat and the expiry of a timer on a process.
func (m *Machine) Timeout(name string) {
	if name == timerHeartbeat {
		m.heartbeat()
		return
	}
	for _, q := range m.others {
		if name == timerOn(q) {
			m.suspect[m.index[q]]++
			m.watch(q)
			m.elect()
			return
		}
	}
}

func (m *Machine) heartbeat() {
	m.seq++
	h := Heartbeat{Origin: m.env.Self(), Seq: m.seq, Suspect: slices.Clone(m.suspect)}
	for _, o := range m.others {
		m.env.Send(o, h)
	}
	m.env.SetTimer(timerHeartbeat, m.p.Eta)
}

func (m *Machine) watch(q string) {
	m.env.SetTimer(timerOn(q), m.p.Eta+time.Duration(m.suspect[m.index[q]])*m.p.Unit)
}

// elect trusts the process minimising (suspect, id), and reports the
// trusted process's counter whenever it changes (the metric
// leader_suspicions): it stops growing once the process has settled on a
// ◇-source, and grows for ever when there is none.
func (m *Machine) elect() {
	best := m.all[0]
	for _, k := range m.all[1:] {
		sk, sb := m.suspect[m.index[k]], m.suspect[m.index[best]]
		if sk < sb || sk == sb && m.env.ElectionID(k) < m.env.ElectionID(best) {
			best = k
		}
	}
	if best != m.leader {
		m.leader = best
		m.env.Report(nodes.Leader(best))
	}
	if c := m.suspect[m.index[best]]; c != m.counted {
		m.counted = c
		m.env.Report(nodes.Metric(MetricLeaderSuspicions, strconv.Itoa(c)))
	}
}

// MetricLeaderSuspicions is the metric a process reports: how many times
// the process it trusts has been suspected, as far as it knows.
const MetricLeaderSuspicions = "leader_suspicions"
