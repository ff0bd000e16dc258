// Package hirschbergsinclair is Hirschberg and Sinclair's election on a
// bidirectional ring (1980), as a pure state machine.
//
// A candidate works in phases k = 0, 1, 2, … In phase k it sends a probe
// carrying its id both ways round the ring, to travel 2^k hops. A process
// that receives a probe:
//
//   - with a larger id than its own: forwards it in the same direction, or,
//     at the probe's 2^k-th hop, sends a reply back towards the candidate;
//   - with a smaller id: swallows it;
//   - with its own id: the probe went all the way round, so no larger id
//     exists; it is elected and announces it round the ring.
//
// Replies are forwarded back to their candidate. A candidate that gets both
// replies of phase k is the largest id within 2^k hops on both sides and
// goes to phase k+1; one that misses a reply lost and stays quiet. A process
// that is not yet awake when a probe reaches it wakes up and becomes a
// candidate first, as if it had been asked: so every process is a candidate
// in phase 0 whoever initiates, and the cost of an election depends only on
// the ids, never on which process was asked first.
//
// At most ⌈n/(2^(k−1)+1)⌉ candidates take part in phase k, each costing at
// most 4·2^k messages, over ⌈log2 n⌉+1 phases; with the n messages of the
// announcement an election costs at most 8n(⌈log2 n⌉+1) messages: O(n log n)
// against Chang–Roberts' O(n²). It assumes reliable links and no crashes.
//
// A message carries its direction ("right" is towards the successor in ring
// order, "left" towards the predecessor), so that a ring of two, whose two
// neighbours are the same node, works too.
package hirschbergsinclair

import (
	"math/bits"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/ring"
)

// Directions round the ring.
const (
	Right = "right" // towards the successor
	Left  = "left"  // towards the predecessor
)

// Probe carries a candidate's id outwards in its phase.
type Probe struct {
	ID    int    `json:"id"`
	Node  string `json:"node"`
	Phase int    `json:"phase"`
	Hops  int    `json:"hops"` // hops travelled so far, this one included
	Dir   string `json:"dir"`
}

// Reply carries a probe's success back to its candidate.
type Reply struct {
	ID    int    `json:"id"`
	Node  string `json:"node"`
	Phase int    `json:"phase"`
	Dir   string `json:"dir"`
}

// Elected announces the winner round the ring (rightwards).
type Elected struct {
	ID   int    `json:"id"`
	Node string `json:"node"`
}

func (Probe) Type() string   { return "probe" }
func (Reply) Type() string   { return "reply" }
func (Elected) Type() string { return "elected" }

// Spec describes the algorithm to the drivers. It has no parameters.
var Spec = nodes.Spec{
	Name:     "hirschberg-sinclair",
	Summary:  "probes of 2^k hops both ways in phase k; O(n log n) messages",
	Topology: "bidirectional ring",
	Elects:   "max",
	Codec:    nodes.NewCodec(Probe{}, Reply{}, Elected{}),
	Bound:    Bound,
	New: func(p *nodes.Params) (nodes.Machine, error) {
		if err := p.Unused(); err != nil {
			return nil, err
		}
		return &Machine{}, nil
	},
}

// Bound is the analysis's bound on an election among n processes:
// 8n(⌈log2 n⌉+1), announcement included, however many initiate.
func Bound(n, initiators int) int { return 8 * n * (CeilLog2(n) + 1) }

// CeilLog2 is ⌈log2 n⌉ (0 for n ≤ 1).
func CeilLog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// maxPhase is the largest phase a probe may carry: 2^maxPhase hops is
// more than any ring has nodes.
const maxPhase = 40

// Machine is one process of the ring.
type Machine struct {
	env         nodes.Env
	id          int
	left, right string
	awake       bool
	phase       int
	replies     int // replies received in the current phase
	elected     bool
	leader      string
}

var _ nodes.Machine = (*Machine)(nil)

// Start learns the node's id and its two neighbours.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.id = env.ElectionID(env.Self())
	m.right = ring.Next(env.Nodes(), env.Self())
	m.left = ring.Prev(env.Nodes(), env.Self())
}

// Request handles "elect": become a candidate, unless already awake.
func (m *Machine) Request(r nodes.Request) {
	if r.Op != "elect" {
		m.env.Fail(r, nodes.Error{Code: nodes.CodeNotSupported, Text: "hirschberg-sinclair only knows elect", Definite: true})
		return
	}
	m.wake()
	m.env.Reply(r, "")
}

// Receive handles probes, replies and the announcement.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	switch x := msg.(type) {
	case Probe:
		if x.Phase < 0 || x.Phase > maxPhase {
			m.env.Logf("ignoring a probe with phase %d", x.Phase)
			return
		}
		m.wake()
		m.probe(x)
	case Reply:
		m.reply(x)
	case Elected:
		if x.Node == m.env.Self() {
			return // the announcement went round
		}
		m.env.Report(nodes.Participant(false))
		m.setLeader(x.Node)
		m.env.Send(m.right, x)
	}
}

// Timeout is never called: the algorithm sets no timers.
func (m *Machine) Timeout(string) {}

func (m *Machine) probe(p Probe) {
	switch {
	case p.Node == m.env.Self():
		if !m.elected { // the second probe, from the other side, is dropped
			m.becomeLeader()
		}
	case p.ID < m.id:
		// swallowed
	case p.Hops < 1<<p.Phase:
		p.Hops++
		m.send(p.Dir, p)
	default:
		back := opposite(p.Dir)
		m.send(back, Reply{ID: p.ID, Node: p.Node, Phase: p.Phase, Dir: back})
	}
}

func (m *Machine) reply(r Reply) {
	if r.Node != m.env.Self() {
		m.send(r.Dir, r)
		return
	}
	if r.Phase != m.phase {
		return
	}
	m.replies++
	if m.replies == 2 {
		m.phase++
		m.sendProbes()
	}
}

// wake makes the process a candidate in phase 0, unless it is awake
// already.
func (m *Machine) wake() {
	if m.awake {
		return
	}
	m.awake = true
	m.env.Report(nodes.Participant(true))
	m.sendProbes()
}

func (m *Machine) sendProbes() {
	m.replies = 0
	self := m.env.Self()
	m.send(Right, Probe{ID: m.id, Node: self, Phase: m.phase, Hops: 1, Dir: Right})
	m.send(Left, Probe{ID: m.id, Node: self, Phase: m.phase, Hops: 1, Dir: Left})
}

func (m *Machine) becomeLeader() {
	m.elected = true
	m.env.Report(nodes.Participant(false))
	m.setLeader(m.env.Self())
	m.env.Send(m.right, Elected{ID: m.id, Node: m.env.Self()})
}

func (m *Machine) send(dir string, msg nodes.Msg) {
	if dir == Left {
		m.env.Send(m.left, msg)
		return
	}
	m.env.Send(m.right, msg)
}

func (m *Machine) setLeader(l string) {
	if m.leader != l {
		m.leader = l
		m.env.Report(nodes.Leader(l))
	}
}

func opposite(dir string) string {
	if dir == Left {
		return Right
	}
	return Left
}
