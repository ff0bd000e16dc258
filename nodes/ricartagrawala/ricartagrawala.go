// Package ricartagrawala is Ricart and Agrawala's mutual exclusion (1981)
// by multicast and Lamport clocks, as a pure state machine.
//
// Each node keeps a Lamport clock and a state: released, wanted or held.
// To enter, a node sets its state to wanted, stamps a request with its
// clock and sends it to every other node, then waits for a reply from each
// of the N−1. A node that receives a request (T, j) replies at once unless
// it holds the critical section, or wants it and its own request (T', i)
// is earlier: T' < T, or T' = T and i < j (election ids break ties). Those
// requests it defers, and replies to them when it leaves. Every entry
// therefore costs 2(N−1) messages: N−1 requests and N−1 replies; a client
// waits one round trip when nobody else wants the critical section, and
// the synchronisation delay (from one node leaving to the next entering)
// is one message.
//
// Each acquire is one entry: after a release the node asks again, with a
// new timestamp, if another of its clients waits. There is no fault
// tolerance: a crashed node never replies, so every later request waits
// forever.
package ricartagrawala

import (
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/mutex"
)

// Request asks every other node for the critical section.
type Request struct {
	// Clock is the request's Lamport timestamp.
	Clock int `json:"clock"`
}

// Reply grants a request.
type Reply struct {
	// Clock is the sender's Lamport clock.
	Clock int `json:"clock"`
	// Stamp is the timestamp of the request it grants.
	Stamp int `json:"stamp"`
}

func (Request) Type() string { return "request" }
func (Reply) Type() string   { return "reply" }

// Spec describes the algorithm to the drivers.
var Spec = nodes.Spec{
	Name:     "ricart-agrawala",
	Summary:  "mutual exclusion: Lamport-stamped requests multicast to all, deferred replies, entry after N−1 replies",
	Topology: "complete",
	Kind:     nodes.KindMutex,
	Codec:    nodes.NewCodec(Request{}, Reply{}),
	New: func(p *nodes.Params) (nodes.Machine, error) {
		if err := p.Unused(); err != nil {
			return nil, err
		}
		return &Machine{}, nil
	},
}

// state is a node's relation to the critical section.
type state int

const (
	released state = iota
	wanted
	held
)

// deferral is a request answered only when the node leaves.
type deferral struct {
	node  string
	stamp int
}

// Machine is one node.
type Machine struct {
	env      nodes.Env
	front    *mutex.Front
	id       int
	peers    []string
	state    state
	clock    int
	stamp    int             // the timestamp of this node's request, while wanted
	replied  map[string]bool // the peers that granted it
	deferred []deferral
}

var _ nodes.Machine = (*Machine)(nil)

// Start learns the node's id and peers.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.front = mutex.NewFront(env)
	m.id = env.ElectionID(env.Self())
	for _, n := range env.Nodes() {
		if n != env.Self() {
			m.peers = append(m.peers, n)
		}
	}
}

// Request handles acquire and release.
func (m *Machine) Request(r nodes.Request) {
	switch m.front.Handle(r) {
	case mutex.Want:
		if m.state == released {
			m.ask()
		}
	case mutex.Leave:
		m.leave()
	}
}

// Receive handles requests and replies.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	switch x := msg.(type) {
	case Request:
		m.tick(x.Clock)
		mine := m.state == wanted && earlier(m.stamp, m.id, x.Clock, m.env.ElectionID(from))
		if m.state == held || mine {
			m.deferred = append(m.deferred, deferral{node: from, stamp: x.Clock})
			return
		}
		m.env.Send(from, Reply{Clock: m.clock, Stamp: x.Clock})
	case Reply:
		m.tick(x.Clock)
		if m.state != wanted || x.Stamp != m.stamp {
			return // an answer to an older request
		}
		m.replied[from] = true
		if len(m.replied) == len(m.peers) {
			m.enter()
		}
	}
}

// Timeout is never called: the algorithm sets no timers.
func (m *Machine) Timeout(string) {}

// earlier reports whether request (t1, id1) goes before (t2, id2).
func earlier(t1, id1, t2, id2 int) bool {
	return t1 < t2 || (t1 == t2 && id1 < id2)
}

// tick advances the Lamport clock past a received timestamp.
func (m *Machine) tick(seen int) {
	m.clock = max(m.clock, seen) + 1
}

// ask multicasts a new request.
func (m *Machine) ask() {
	m.state = wanted
	m.clock++
	m.stamp = m.clock
	m.replied = map[string]bool{}
	for _, p := range m.peers {
		m.env.Send(p, Request{Clock: m.stamp})
	}
	if len(m.peers) == 0 {
		m.enter()
	}
}

// enter holds the critical section for the first waiting client; if every
// waiting acquire was withdrawn meanwhile, it leaves at once.
func (m *Machine) enter() {
	m.state = held
	if !m.front.Enter() {
		m.leave()
	}
}

// leave answers the deferred requests, then asks again if a client waits.
func (m *Machine) leave() {
	m.state = released
	for _, d := range m.deferred {
		m.env.Send(d.node, Reply{Clock: m.clock, Stamp: d.stamp})
	}
	m.deferred = nil
	if m.front.Waiting() {
		m.ask()
	}
}
