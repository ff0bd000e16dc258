// Package ringcommander is the ring election with id collection under a
// commander, the second ring variant of the course material, as a pure
// state machine.
//
// A client asks one process, the commander, to run an election. The
// election goes through two stages, each once round a unidirectional ring:
//
//   - gathering: the commander sends an election message to its successor;
//     each process adds its node and id to the message's member list and
//     forwards it. Back at the commander, the list holds every process.
//   - confirmation: the commander picks the highest id of the list, takes it
//     as leader and sends a coordinator message with the winner and the
//     membership round the ring; each process records the leader and
//     forwards it. Back at the commander, the election is confirmed, and the
//     commander answers the client with the winner's node id.
//
// Both messages carry a payload, chosen by the commander, whose checksum
// the commander keeps. Every process forwards the payload as it got it; the
// commander verifies it when each stage comes back, end to end, independent
// of the per-message checksums of the transport (which a forwarding process
// that alters a message can simply recompute). It reports the result once
// per election, as a report with what "payload" and value "intact" or
// "corrupt". A corrupt payload ends the election: the client gets an error
// (definite after gathering, since nothing was announced; indeterminate
// after confirmation, since the leader was announced).
//
// Each stage has a timeout. A crashed process swallows the stage's message,
// so the commander, once the timeout passes, fails the client's operation
// with a definite error naming the stage. Unlike the variant that skips a
// dead successor, there are no acknowledgements here: the ring must be
// whole. An election costs 2n messages. It elects the highest id.
package ringcommander

import (
	"fmt"
	"hash/crc32"
	"slices"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/ring"
)

// Member is one process in a member list.
type Member struct {
	Node string `json:"node"`
	ID   int    `json:"id"`
}

// Election gathers the members round the ring.
type Election struct {
	Commander string   `json:"commander"`
	Round     int      `json:"round"`
	Members   []Member `json:"members"`
	Payload   string   `json:"payload"`
}

// Coordinator announces the winner and the membership round the ring.
type Coordinator struct {
	Commander string   `json:"commander"`
	Round     int      `json:"round"`
	Leader    string   `json:"leader"`
	LeaderID  int      `json:"leader_id"`
	Members   []Member `json:"members"`
	Payload   string   `json:"payload"`
}

func (Election) Type() string    { return "election" }
func (Coordinator) Type() string { return "coordinator" }

// Params are the algorithm's parameters, from the scenario's [params]
// table. The harness gives a client operation one second before it records
// it as indeterminate, so the two timeouts together should stay under it.
type Params struct {
	// GatherTimeout ("gather_timeout") is how long the commander waits for
	// the election message to come back. Default 300ms.
	GatherTimeout time.Duration
	// ConfirmTimeout ("confirm_timeout") is how long the commander waits
	// for the coordinator message to come back. Default 300ms.
	ConfirmTimeout time.Duration
}

// ParseParams reads the parameters, with their defaults.
func ParseParams(p *nodes.Params) (Params, error) {
	var out Params
	var err error
	if out.GatherTimeout, err = p.PositiveDuration("gather_timeout", 300*time.Millisecond); err != nil {
		return out, err
	}
	if out.ConfirmTimeout, err = p.PositiveDuration("confirm_timeout", 300*time.Millisecond); err != nil {
		return out, err
	}
	return out, p.Unused()
}

// Spec describes the algorithm to the drivers.
var Spec = nodes.Spec{
	Name:     "ring-commander",
	Summary:  "a commander gathers every id, then announces the highest; stage timeouts, end-to-end payload check",
	Topology: "ring",
	Elects:   "max",
	Codec:    nodes.NewCodec(Election{}, Coordinator{}),
	Bound:    Bound,
	New: func(p *nodes.Params) (nodes.Machine, error) {
		params, err := ParseParams(p)
		if err != nil {
			return nil, err
		}
		return &Machine{p: params}, nil
	},
}

// Bound is the cost of one commanded election: n messages to gather, n to
// confirm. Each initiator commands its own election.
func Bound(n, initiators int) int { return 2 * n * max(initiators, 1) }

// Stages of the commander's election, which name its timers.
const (
	stageGathering    = "gathering"
	stageConfirmation = "confirmation"
)

// PayloadSum is the end-to-end checksum of a payload.
func PayloadSum(payload string) uint32 { return crc32.ChecksumIEEE([]byte(payload)) }

// Machine is one process of the ring.
type Machine struct {
	p           Params
	env         nodes.Env
	id          int
	next        string
	leader      string
	participant bool

	// The election this process commands, if any.
	round int
	stage string // "" when none is under way
	req   nodes.Request
	sum   uint32
}

var _ nodes.Machine = (*Machine)(nil)

// Start learns the node's id and successor.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.id = env.ElectionID(env.Self())
	m.next = ring.Next(env.Nodes(), env.Self())
}

// Request handles "elect": command an election.
func (m *Machine) Request(r nodes.Request) {
	if r.Op != "elect" {
		m.env.Fail(r, nodes.Error{Code: nodes.CodeNotSupported, Text: "ring-commander only knows elect", Definite: true})
		return
	}
	if m.stage != "" {
		m.env.Fail(r, nodes.Error{Code: nodes.CodeTemporarilyUnavailable, Text: fmt.Sprintf("%s is already commanding an election (%s)", m.env.Self(), m.stage), Definite: true})
		return
	}
	m.round++
	m.req = r
	payload := fmt.Sprintf("%s/%d/%016x", m.env.Self(), m.round, m.env.Rand().Uint64())
	m.sum = PayloadSum(payload)
	m.setParticipant(true)
	m.enter(stageGathering)
	m.env.Send(m.next, Election{
		Commander: m.env.Self(), Round: m.round, Payload: payload,
		Members: []Member{{Node: m.env.Self(), ID: m.id}},
	})
}

// Receive handles the two stages' messages: a process forwards them, the
// commander ends the stage.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	switch x := msg.(type) {
	case Election:
		if x.Commander == m.env.Self() {
			m.gathered(x)
			return
		}
		m.setParticipant(true)
		x.Members = append(slices.Clip(x.Members), Member{Node: m.env.Self(), ID: m.id})
		m.env.Send(m.next, x)
	case Coordinator:
		if x.Commander == m.env.Self() {
			m.confirmed(x)
			return
		}
		m.setParticipant(false)
		m.setLeader(x.Leader)
		m.env.Send(m.next, x)
	}
}

// gathered ends the gathering stage: verify the payload, pick the winner,
// announce it.
func (m *Machine) gathered(e Election) {
	if e.Round != m.round || m.stage != stageGathering {
		m.env.Logf("ignoring a stale election message of round %d", e.Round)
		return
	}
	m.env.CancelTimer(stageGathering)
	if !m.intact(e.Payload, stageGathering, true) {
		return
	}
	win := Member{Node: m.env.Self(), ID: m.id}
	for _, mb := range e.Members {
		if mb.ID > win.ID {
			win = mb
		}
	}
	m.env.Logf("gathered %d members; %s (id %d) wins", len(e.Members), win.Node, win.ID)
	m.setLeader(win.Node)
	m.enter(stageConfirmation)
	m.env.Send(m.next, Coordinator{
		Commander: m.env.Self(), Round: m.round, Leader: win.Node, LeaderID: win.ID,
		Members: e.Members, Payload: e.Payload,
	})
}

// confirmed ends the election: verify the payload and answer the client.
func (m *Machine) confirmed(c Coordinator) {
	if c.Round != m.round || m.stage != stageConfirmation {
		m.env.Logf("ignoring a stale coordinator message of round %d", c.Round)
		return
	}
	m.env.CancelTimer(stageConfirmation)
	if !m.intact(c.Payload, stageConfirmation, false) {
		return
	}
	m.env.Report(nodes.Report{What: "payload", Value: "intact"})
	m.finish()
	m.env.Reply(m.req, c.Leader)
}

// intact verifies a payload that came back; a corrupt one is reported and
// ends the election with an error.
func (m *Machine) intact(payload, stage string, definite bool) bool {
	if PayloadSum(payload) == m.sum {
		return true
	}
	m.env.Report(nodes.Report{What: "payload", Value: "corrupt"})
	m.finish()
	// Code 14 (abort) says by itself that nothing happened, which holds
	// only before the leader was announced; after it, 13 (crash) leaves the
	// outcome open.
	code := nodes.CodeAbort
	if !definite {
		code = nodes.CodeCrash
	}
	m.env.Fail(m.req, nodes.Error{
		Code: code, Definite: definite,
		Text: fmt.Sprintf("payload corrupt after %s: checksum %08x, want %08x", stage, PayloadSum(payload), m.sum),
	})
	return false
}

// Timeout fails the election whose stage timed out.
func (m *Machine) Timeout(name string) {
	if name != m.stage {
		return
	}
	d := m.p.GatherTimeout
	if name == stageConfirmation {
		d = m.p.ConfirmTimeout
	}
	m.finish()
	m.env.Fail(m.req, nodes.Error{
		Code: nodes.CodeTimeout, Definite: true,
		Text: fmt.Sprintf("%s timed out after %s: the message did not come back round the ring", name, d),
	})
}

func (m *Machine) enter(stage string) {
	m.stage = stage
	d := m.p.GatherTimeout
	if stage == stageConfirmation {
		d = m.p.ConfirmTimeout
	}
	m.env.SetTimer(stage, d)
}

func (m *Machine) finish() {
	m.stage = ""
	m.setParticipant(false)
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
