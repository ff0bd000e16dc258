// Package bully is Garcia-Molina's bully election (1982) on a complete
// graph, as a pure state machine.
//
// Every process knows every other's id. Time is bounded: a message takes at
// most Ttrans to arrive and at most Tprocess to be handled, so a request
// that gets no reply within T = 2·Ttrans + Tprocess will never get one.
//
//   - Each process other than the coordinator probes the coordinator
//     periodically; no reply within T means the coordinator is dead, and
//     the process starts an election.
//   - A process that starts an election sends election to every higher id.
//     With no answer within T it is the highest live process: it declares
//     itself coordinator and sends coordinator to every lower id. With an
//     answer it waits T′ for a coordinator message, and otherwise starts
//     again.
//   - A process that receives election from a lower id answers it and
//     starts its own election, unless it has one under way.
//   - A process that receives coordinator(j) records j as the coordinator;
//     if j is lower than its own id it starts an election (and will win).
//   - A process that starts, or restarts after a crash, begins with an
//     election: the highest id takes over even from a live coordinator,
//     hence the name.
//
// The worst case is the lowest id detecting the crash of the coordinator
// (id n): every lower process sends election to every higher one
// (n(n−1)/2), each answers every lower one ((n−1)(n−2)/2), and n−1 tells
// the n−2 others: n²−n−1 messages, O(n²). The best case is n−1 detecting:
// n−2 messages. It guarantees the highest live id is elected only as long as
// the timing assumptions hold: a coordinator slower than T, or a crashed one
// replaced with the same id, yields two coordinators.
package bully

import (
	"time"

	"github.com/coupharness/coup/nodes"
)

// Election asks the higher processes whether any is alive.
type Election struct {
	ID int `json:"id"`
}

// Answer tells a lower process that a higher one is alive and takes over.
type Answer struct {
	ID int `json:"id"`
}

// Coordinator announces the new coordinator to the lower processes.
type Coordinator struct {
	ID   int    `json:"id"`
	Node string `json:"node"`
}

// Probe asks the coordinator whether it is alive.
type Probe struct{}

// Alive answers a probe.
type Alive struct{}

func (Election) Type() string    { return "election" }
func (Answer) Type() string      { return "answer" }
func (Coordinator) Type() string { return "coordinator" }
func (Probe) Type() string       { return "probe" }
func (Alive) Type() string       { return "alive" }

// Params are the algorithm's parameters, from the scenario's [params]
// table. The defaults suit nodes on one machine (loopback, millisecond
// latencies).
type Params struct {
	// TTrans ("t_trans") is the assumed bound on a message's transit time.
	// Default 10ms.
	TTrans time.Duration
	// TProcess ("t_process") is the assumed bound on the time a process
	// takes to handle a message. Default 5ms.
	TProcess time.Duration
	// TPrime ("t_prime") is T′, how long a process that got an answer waits
	// for a coordinator message before it starts again. It must cover the
	// answering process's own election (T) plus the announcement's transit.
	// Default 2·T + TProcess.
	TPrime time.Duration
	// ProbeEvery ("probe_every") is the interval between probes of the
	// coordinator. Default 50ms.
	ProbeEvery time.Duration
}

// T is the reply timeout, 2·Ttrans + Tprocess.
func (p Params) T() time.Duration { return 2*p.TTrans + p.TProcess }

// ParseParams reads the parameters, with their defaults.
func ParseParams(p *nodes.Params) (Params, error) {
	var out Params
	var err error
	if out.TTrans, err = p.PositiveDuration("t_trans", 10*time.Millisecond); err != nil {
		return out, err
	}
	if out.TProcess, err = p.Duration("t_process", 5*time.Millisecond); err != nil {
		return out, err
	}
	if out.TPrime, err = p.PositiveDuration("t_prime", 2*out.T()+out.TProcess); err != nil {
		return out, err
	}
	if out.ProbeEvery, err = p.PositiveDuration("probe_every", 50*time.Millisecond); err != nil {
		return out, err
	}
	return out, p.Unused()
}

// Spec describes the algorithm to the drivers.
var Spec = nodes.Spec{
	Name:     "bully",
	Summary:  "timeouts detect a dead coordinator; the highest live id takes over",
	Topology: "complete",
	Elects:   "max",
	Codec:    nodes.NewCodec(Election{}, Answer{}, Coordinator{}, Probe{}, Alive{}),
	Bound:    Bound,
	New: func(p *nodes.Params) (nodes.Machine, error) {
		params, err := ParseParams(p)
		if err != nil {
			return nil, err
		}
		return New(params), nil
	},
}

// New returns a process with the given parameters, for algorithms that
// run bully inside their own machine to elect a coordinator: they wrap the
// Env they pass to Start to see its leader reports, and hand it the
// messages and timers that are bully's.
func New(p Params) *Machine { return &Machine{p: p} }

// Bound is the most election, answer and coordinator messages one election
// among n processes can cost while the timing assumptions hold and nobody
// crashes during it, whoever starts it: every process sends election to
// every higher one once (n(n−1)/2) and each is answered (n(n−1)/2); the
// highest live process announces once for its own election and once for
// each it receives (at most n·(n−1)). Probes are not counted. The classic
// worst case, the lowest id detecting the coordinator's crash, costs
// n²−n−1 (see WorstCase).
func Bound(n, initiators int) int { return 2 * n * (n - 1) }

// WorstCase is the cost of an election when the lowest id detects the
// crash of the coordinator, the highest of n ids: n²−n−1.
func WorstCase(n int) int { return n*n - n - 1 }

// Timer names.
const (
	timerAnswers     = "answers"     // T: waiting for an answer to election
	timerCoordinator = "coordinator" // T′: waiting for coordinator after an answer
	timerProbe       = "probe"       // the next probe of the coordinator
	timerProbeReply  = "probe-reply" // T: waiting for the coordinator's reply
)

// state is where a process stands in an election.
type state int

const (
	idle     state = iota // no election under way
	electing              // sent election, waiting T for an answer
	waiting               // got an answer, waiting T′ for coordinator
)

// Machine is one process.
type Machine struct {
	p             Params
	env           nodes.Env
	id            int
	higher, lower []string
	state         state
	probing       bool // a probe is out, waiting for its reply
	leader        string
	participant   bool
}

var _ nodes.Machine = (*Machine)(nil)

// Start sorts the other processes into higher and lower ids, starts
// probing, and begins with an election.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.id = env.ElectionID(env.Self())
	for _, n := range env.Nodes() {
		switch id := env.ElectionID(n); {
		case n == env.Self():
		case id > m.id:
			m.higher = append(m.higher, n)
		default:
			m.lower = append(m.lower, n)
		}
	}
	m.env.SetTimer(timerProbe, m.p.ProbeEvery)
	m.startElection()
}

// Request handles "elect": start an election, unless one is under way.
func (m *Machine) Request(r nodes.Request) {
	if r.Op != "elect" {
		m.env.Fail(r, nodes.Error{Code: nodes.CodeNotSupported, Text: "bully only knows elect", Definite: true})
		return
	}
	m.startElection()
	m.env.Reply(r, "")
}

// Receive handles the five messages.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	switch x := msg.(type) {
	case Election:
		m.env.Send(from, Answer{ID: m.id})
		m.startElection()
	case Answer:
		if m.state == electing {
			m.env.CancelTimer(timerAnswers)
			m.state = waiting
			m.env.SetTimer(timerCoordinator, m.p.TPrime)
		}
	case Coordinator:
		m.env.CancelTimer(timerAnswers)
		m.env.CancelTimer(timerCoordinator)
		m.state = idle
		m.stopProbing()
		m.setParticipant(false)
		m.setLeader(x.Node)
		if x.ID < m.id {
			m.startElection() // bully it
		}
	case Probe:
		m.env.Send(from, Alive{})
	case Alive:
		if from == m.leader {
			m.stopProbing()
		}
	}
}

// Timeout handles the four timers.
func (m *Machine) Timeout(name string) {
	switch name {
	case timerAnswers:
		if m.state == electing {
			m.becomeCoordinator() // nobody higher is alive
		}
	case timerCoordinator:
		if m.state == waiting {
			m.state = idle
			m.startElection() // the answering process died before announcing
		}
	case timerProbe:
		m.env.SetTimer(timerProbe, m.p.ProbeEvery)
		if m.state == idle && m.leader != "" && m.leader != m.env.Self() && !m.probing {
			m.probing = true
			m.env.Send(m.leader, Probe{})
			m.env.SetTimer(timerProbeReply, m.p.T())
		}
	case timerProbeReply:
		m.probing = false
		if m.state == idle {
			m.setLeader("") // the coordinator is dead
			m.startElection()
		}
	}
}

func (m *Machine) startElection() {
	if m.state != idle {
		return
	}
	m.stopProbing()
	m.setParticipant(true)
	if len(m.higher) == 0 {
		m.becomeCoordinator()
		return
	}
	m.state = electing
	for _, h := range m.higher {
		m.env.Send(h, Election{ID: m.id})
	}
	m.env.SetTimer(timerAnswers, m.p.T())
}

func (m *Machine) becomeCoordinator() {
	m.state = idle
	m.setParticipant(false)
	m.setLeader(m.env.Self())
	for _, l := range m.lower {
		m.env.Send(l, Coordinator{ID: m.id, Node: m.env.Self()})
	}
}

func (m *Machine) stopProbing() {
	m.probing = false
	m.env.CancelTimer(timerProbeReply)
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
