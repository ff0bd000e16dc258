package sim

// Deliberately broken algorithms, for the benchmark of the search
// strategies (variants_test.go). Each is the catalogue's algorithm with
// one rule wrong; they live in test code so that nothing else can run
// them.

import (
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/mutex"
)

// raTies is Ricart–Agrawala (nodes/ricartagrawala) with a wrong
// tie-break: a request with the same timestamp as the node's own is never
// deferred to, so two nodes asking with equal stamps both reply to each
// other and both enter.
var raTies = nodes.Spec{
	Name: "ricart-agrawala", Topology: "complete", Kind: nodes.KindMutex,
	Codec: nodes.NewCodec(raRequest{}, raReply{}),
	New:   func(p *nodes.Params) (nodes.Machine, error) { return &raMachine{}, p.Unused() },
}

type raRequest struct {
	Clock int `json:"clock"`
}
type raReply struct {
	Clock int `json:"clock"`
	Stamp int `json:"stamp"`
}

func (raRequest) Type() string { return "request" }
func (raReply) Type() string   { return "reply" }

type raMachine struct {
	env      nodes.Env
	front    *mutex.Front
	id       int
	peers    []string
	state    int // 0 released, 1 wanted, 2 held
	clock    int
	stamp    int
	replied  map[string]bool
	deferred []raDeferral
}

type raDeferral struct {
	node  string
	stamp int
}

func (m *raMachine) Start(env nodes.Env) {
	m.env = env
	m.front = mutex.NewFront(env)
	m.id = env.ElectionID(env.Self())
	for _, n := range env.Nodes() {
		if n != env.Self() {
			m.peers = append(m.peers, n)
		}
	}
}

func (m *raMachine) Request(r nodes.Request) {
	switch m.front.Handle(r) {
	case mutex.Want:
		if m.state == 0 {
			m.ask()
		}
	case mutex.Leave:
		m.leave()
	}
}

func (m *raMachine) Receive(from string, msg nodes.Msg) {
	switch x := msg.(type) {
	case raRequest:
		m.clock = max(m.clock, x.Clock) + 1
		mine := m.state == 1 && m.stamp < x.Clock // the broken tie-break: equal stamps never defer
		if m.state == 2 || mine {
			m.deferred = append(m.deferred, raDeferral{node: from, stamp: x.Clock})
			return
		}
		m.env.Send(from, raReply{Clock: m.clock, Stamp: x.Clock})
	case raReply:
		m.clock = max(m.clock, x.Clock) + 1
		if m.state != 1 || x.Stamp != m.stamp {
			return
		}
		m.replied[from] = true
		if len(m.replied) == len(m.peers) {
			m.enter()
		}
	}
}

func (m *raMachine) Timeout(string) {}

func (m *raMachine) ask() {
	m.state = 1
	m.clock++
	m.stamp = m.clock
	m.replied = map[string]bool{}
	for _, p := range m.peers {
		m.env.Send(p, raRequest{Clock: m.stamp})
	}
}

func (m *raMachine) enter() {
	m.state = 2
	if !m.front.Enter() {
		m.leave()
	}
}

func (m *raMachine) leave() {
	m.state = 0
	for _, d := range m.deferred {
		m.env.Send(d.node, raReply{Clock: m.clock, Stamp: d.stamp})
	}
	m.deferred = nil
	if m.front.Waiting() {
		m.ask()
	}
}

// crNoRule is Chang–Roberts (nodes/changroberts) without the participant
// rule: a node that receives a smaller id sends its own again even when it
// is already a participant, so ids that should be swallowed multiply.
var crNoRule = nodes.Spec{
	Name: "chang-roberts", Topology: "ring", Kind: nodes.KindElection, Elects: "max",
	Codec: nodes.NewCodec(crElection{}, crElected{}),
	Bound: func(n, initiators int) int {
		if initiators <= 1 {
			return 3*n - 1
		}
		return n*(n+1)/2 + n
	},
	New: func(p *nodes.Params) (nodes.Machine, error) { return &crMachine{}, p.Unused() },
}

type crElection struct {
	ID int `json:"id"`
}
type crElected struct {
	ID   int    `json:"id"`
	Node string `json:"node"`
}

func (crElection) Type() string { return "election" }
func (crElected) Type() string  { return "elected" }

type crMachine struct {
	env         nodes.Env
	id          int
	next        string
	participant bool
	leader      string
}

func (m *crMachine) Start(env nodes.Env) {
	m.env = env
	m.id = env.ElectionID(env.Self())
	ring := env.Nodes()
	for i, n := range ring {
		if n == env.Self() {
			m.next = ring[(i+1)%len(ring)]
		}
	}
}

func (m *crMachine) Request(r nodes.Request) {
	if !m.participant {
		m.setParticipant(true)
		m.env.Send(m.next, crElection{ID: m.id})
	}
	m.env.Reply(r, "")
}

func (m *crMachine) Receive(from string, msg nodes.Msg) {
	switch x := msg.(type) {
	case crElection:
		switch {
		case x.ID > m.id:
			m.setParticipant(true)
			m.env.Send(m.next, x)
		case x.ID < m.id:
			m.setParticipant(true) // no participant rule: always send its own id
			m.env.Send(m.next, crElection{ID: m.id})
		default:
			m.setParticipant(false)
			m.setLeader(m.env.Self())
			m.env.Send(m.next, crElected{ID: m.id, Node: m.env.Self()})
		}
	case crElected:
		if x.Node == m.env.Self() {
			return
		}
		m.setParticipant(false)
		m.setLeader(x.Node)
		m.env.Send(m.next, x)
	}
}

func (m *crMachine) Timeout(string) {}

func (m *crMachine) setParticipant(p bool) {
	if m.participant != p {
		m.participant = p
		m.env.Report(nodes.Participant(p))
	}
}

func (m *crMachine) setLeader(l string) {
	if m.leader != l {
		m.leader = l
		m.env.Report(nodes.Leader(l))
	}
}
