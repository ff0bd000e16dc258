// Package lelann is Le Lann's election on a unidirectional FIFO ring
// (1977), as a pure state machine.
//
// A process wakes up when it is asked to start an election or when it
// receives its first token. On waking it becomes a participant and sends a
// token carrying its own id to its successor, before it forwards anything
// else. Every token is forwarded around the whole ring; each process adds
// every id it sees to the set it collects. When a process's own token
// comes back, every other process's token has already reached it: each
// process sends its own token before forwarding any other, and links are
// FIFO. Its set then holds every id, and it decides locally: the leader is
// the highest id. No announcement is needed.
//
// Each of the n tokens travels n hops: n² messages, however many initiate.
// The algorithm assumes reliable FIFO links and no crashes: one crashed
// process swallows every token and nobody decides.
package lelann

import (
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/ring"
)

// Token carries one process's id around the ring.
type Token struct {
	ID   int    `json:"id"`
	Node string `json:"node"`
}

func (Token) Type() string { return "token" }

// Spec describes the algorithm to the drivers. It has no parameters.
var Spec = nodes.Spec{
	Name:     "lelann",
	Summary:  "FIFO links; every id goes round; each process picks the highest it collected",
	Topology: "ring",
	Elects:   "max",
	Codec:    nodes.NewCodec(Token{}),
	Bound:    Bound,
	New: func(p *nodes.Params) (nodes.Machine, error) {
		if err := p.Unused(); err != nil {
			return nil, err
		}
		return &Machine{}, nil
	},
}

// Bound is the cost of an election: every token goes once round, n² messages
// whatever the number of initiators.
func Bound(n, initiators int) int { return n * n }

// Machine is one process of the ring.
type Machine struct {
	env     nodes.Env
	id      int
	next    string
	awake   bool
	decided bool
	// best is the highest id collected so far, and its node.
	best     int
	bestNode string
	leader   string
}

var _ nodes.Machine = (*Machine)(nil)

// Start learns the node's id and successor.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.id = env.ElectionID(env.Self())
	m.next = ring.Next(env.Nodes(), env.Self())
}

// Request handles "elect": wake up, unless already awake.
func (m *Machine) Request(r nodes.Request) {
	if r.Op != "elect" {
		m.env.Fail(r, nodes.Error{Code: nodes.CodeNotSupported, Text: "lelann only knows elect", Definite: true})
		return
	}
	m.wake()
	m.env.Reply(r, "")
}

// Receive handles a token: wake up first (so that this process's own token
// leaves before the one forwarded), then decide if it is ours, else collect
// and forward it.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	t, ok := msg.(Token)
	if !ok {
		return
	}
	m.wake()
	if t.Node == m.env.Self() {
		m.decide()
		return
	}
	m.collect(t.ID, t.Node)
	m.env.Send(m.next, t)
}

// Timeout is never called: the algorithm sets no timers.
func (m *Machine) Timeout(string) {}

func (m *Machine) wake() {
	if m.awake {
		return
	}
	m.awake = true
	m.collect(m.id, m.env.Self())
	m.env.Report(nodes.Participant(true))
	m.env.Send(m.next, Token{ID: m.id, Node: m.env.Self()})
}

func (m *Machine) collect(id int, node string) {
	if m.bestNode == "" || id > m.best {
		m.best, m.bestNode = id, node
	}
}

// decide picks the highest id collected, once our token is back.
func (m *Machine) decide() {
	if m.decided {
		return
	}
	m.decided = true
	m.env.Report(nodes.Participant(false))
	m.leader = m.bestNode
	m.env.Report(nodes.Leader(m.leader))
}
