// Package changroberts is Chang and Roberts' election on a unidirectional
// ring (1979), as a pure state machine.
//
// Each process has a participant flag. An initiator marks itself a
// participant and sends election(its id) to its successor. A process that
// receives election(j):
//
//   - j greater than its id: marks itself a participant and forwards it;
//   - j smaller, and not yet a participant: marks itself a participant and
//     sends election(its id) instead;
//   - j smaller, already a participant: swallows it;
//   - j its own id: it has the highest id; it is elected, clears its flag
//     and sends elected(itself) around the ring.
//
// A process that receives elected(k) clears its flag, records k as leader
// and forwards it, unless it is k. One initiator costs at most 3n−1
// messages; n initiators in the worst arrangement (ids decreasing along the
// ring) cost n(n+1)/2 election messages plus n elected messages. There is no
// fault tolerance: one crashed process stops the election.
package changroberts

import (
	"github.com/coupharness/coup/nodes"
)

// Election carries a candidate id around the ring.
type Election struct {
	ID int `json:"id"`
}

// Elected announces the winner around the ring.
type Elected struct {
	ID   int    `json:"id"`
	Node string `json:"node"`
}

func (Election) Type() string { return "election" }
func (Elected) Type() string  { return "elected" }

// Spec describes the algorithm to the drivers.
var Spec = nodes.Spec{
	Name:     "chang-roberts",
	Summary:  "unidirectional ring; the highest id wins; ids are swallowed by larger ones",
	Topology: "ring",
	Kind:     nodes.KindElection,
	Elects:   "max",
	Codec:    nodes.NewCodec(Election{}, Elected{}),
	Bound:    Bound,
	New: func(p *nodes.Params) (nodes.Machine, error) {
		if err := p.Unused(); err != nil {
			return nil, err
		}
		return &Machine{}, nil
	},
}

// Machine is one process of the ring.
type Machine struct {
	env         nodes.Env
	id          int
	next        string
	participant bool
	leader      string
}

var _ nodes.Machine = (*Machine)(nil)

// Start learns the node's id and successor.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.id = env.ElectionID(env.Self())
	m.next = Successor(env.Nodes(), env.Self())
}

// Successor is the node after self in ring order.
func Successor(ring []string, self string) string {
	for i, n := range ring {
		if n == self {
			return ring[(i+1)%len(ring)]
		}
	}
	return self
}

// Request handles "elect": become an initiator.
func (m *Machine) Request(r nodes.Request) {
	if r.Op != "elect" {
		m.env.Fail(r, nodes.Error{Code: nodes.CodeNotSupported, Text: "chang-roberts only knows elect", Definite: true})
		return
	}
	if !m.participant {
		m.becomeParticipant()
		m.env.Send(m.next, Election{ID: m.id})
	}
	m.env.Reply(r, "")
}

// Receive handles election and elected messages.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	switch x := msg.(type) {
	case Election:
		switch {
		case x.ID > m.id:
			m.becomeParticipant()
			m.env.Send(m.next, x)
		case x.ID < m.id:
			if !m.participant {
				m.becomeParticipant()
				m.env.Send(m.next, Election{ID: m.id})
			}
		default:
			m.becomeLeader()
		}
	case Elected:
		if x.Node == m.env.Self() {
			return // the announcement went round
		}
		m.setParticipant(false)
		m.setLeader(x.Node)
		m.env.Send(m.next, x)
	}
}

// Timeout is never called: the algorithm sets no timers.
func (m *Machine) Timeout(string) {}

func (m *Machine) becomeParticipant() { m.setParticipant(true) }

func (m *Machine) becomeLeader() {
	m.setParticipant(false)
	m.setLeader(m.env.Self())
	m.env.Send(m.next, Elected{ID: m.id, Node: m.env.Self()})
}

func (m *Machine) setParticipant(p bool) {
	if m.participant != p {
		m.participant = p
		m.env.Report(nodes.Participant(p))
	}
}

func (m *Machine) setLeader(l string) {
	if m.leader != l {
		m.leader = l
		m.env.Report(nodes.Leader(l))
	}
}

// Bound is the worst case of an election: 3n−1 messages with one
// initiator; n(n+1)/2 election messages plus n elected when several
// initiate (the worst is all initiating with ids decreasing along the
// ring).
func Bound(n, initiators int) int {
	if initiators <= 1 {
		return 3*n - 1
	}
	return n*(n+1)/2 + n
}

// Cost is the number of messages an election costs when exactly one
// process (the initiator-th, 0-based, in ring order) initiates: the
// initiator's id and each larger id it meets travel until they reach the
// highest, whose id goes once round (n), then elected goes round (n).
func Cost(ids []int, initiator int) (election, elected int) {
	n := len(ids)
	top := 0
	for i, id := range ids {
		if id > ids[top] {
			top = i
		}
	}
	hops := (top - initiator + n) % n // from the initiator to the highest
	return hops + n, n
}
