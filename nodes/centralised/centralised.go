package centralised

import (
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/bully"
	"github.com/coupharness/coup/nodes/mutex"
)

// Request asks the coordinator for the lock.
type Request struct {
	// Seq numbers the node's requests, so that a late grant or release of
	// an earlier one is told apart from the current one.
	Seq int `json:"seq"`
}

// Grant gives the lock to the node whose request it names.
type Grant struct {
	Seq int `json:"seq"`
}

// Release gives the lock back, or withdraws a request that waits.
type Release struct {
	Seq int `json:"seq"`
}

// Held tells a coordinator the node trusts now that the node is inside, by
// the grant of its request Seq from another coordinator.
type Held struct {
	Seq int `json:"seq"`
}

func (Request) Type() string { return "request" }
func (Grant) Type() string   { return "grant" }
func (Release) Type() string { return "release" }
func (Held) Type() string    { return "held" }

// Params are the algorithm's parameters: bully's (t_trans, t_process,
// t_prime, probe_every; see nodes/bully) and collect.
type Params struct {
	bully.Params
	// Collect ("collect") is how long a new coordinator waits before its
	// first grant, so that the nodes that hold the lock can tell it so.
	// Default T = 2·t_trans + t_process: the announcement's transit, the
	// node's handling, and the answer's transit. "0s" grants at once,
	// racing the declarations.
	Collect time.Duration
}

// ParseParams reads the parameters, with their defaults.
func ParseParams(p *nodes.Params) (Params, error) {
	_, set := p.Map()["collect"]
	collect, err := p.Duration("collect", 0)
	if err != nil {
		return Params{}, err
	}
	bp, err := bully.ParseParams(p) // checks for unknown keys too
	if err != nil {
		return Params{}, err
	}
	if !set {
		collect = bp.T()
	}
	return Params{Params: bp, Collect: collect}, nil
}

// Spec describes the algorithm to the drivers.
var Spec = nodes.Spec{
	Name:     "centralised",
	Summary:  "mutual exclusion: a coordinator elected by bully grants the lock from a FIFO queue (request, grant, release)",
	Topology: "complete",
	Kind:     nodes.KindMutex,
	Elects:   "max",
	Codec: nodes.NewCodec(bully.Election{}, bully.Answer{}, bully.Coordinator{}, bully.Probe{}, bully.Alive{},
		Request{}, Grant{}, Release{}, Held{}),
	New: func(p *nodes.Params) (nodes.Machine, error) {
		params, err := ParseParams(p)
		if err != nil {
			return nil, err
		}
		return New(params), nil
	},
}

// New returns a node with the given parameters.
func New(p Params) *Machine { return &Machine{p: p, elector: bully.New(p.Params)} }

// timerCollect ends a new coordinator's wait before its first grant. Its
// name differs from bully's timers.
const timerCollect = "collect"

// Machine is one node: bully's process, which elects the coordinator, the
// node's side of the lock protocol, and the coordinator's side while this
// node is the coordinator.
type Machine struct {
	p       Params
	elector *bully.Machine
	env     nodes.Env
	front   *mutex.Front

	// The node's side.
	coord string // the coordinator this node trusts; "" for none
	seq   int    // the number of the node's latest request
	asked bool   // that request waits for a grant
	told  string // the coordinator that knows of the request or of the hold; "" for none

	// The coordinator's side.
	leading    bool // this node is the coordinator it trusts
	collecting bool // and waits before its first grant
	lock       lock
}

var _ nodes.Machine = (*Machine)(nil)

// electorEnv is the Env bully runs in: the node's own, except that every
// leader report bully makes is also a change of the coordinator the node
// trusts.
type electorEnv struct {
	nodes.Env
	m *Machine
}

var _ nodes.Env = electorEnv{}

func (e electorEnv) Report(r nodes.Report) {
	e.Env.Report(r)
	if r.What == nodes.Leader("").What {
		e.m.trust(r.Value)
	}
}

// Start starts bully, which begins with an election.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.front = mutex.NewFront(env)
	m.elector.Start(electorEnv{Env: env, m: m})
}

// Request handles acquire and release through the node's Front, and elect
// through bully.
func (m *Machine) Request(r nodes.Request) {
	if r.Op == "elect" {
		m.elector.Request(r)
		return
	}
	switch m.front.Handle(r) {
	case mutex.Want:
		if !m.asked {
			m.ask()
		}
	case mutex.Leave:
		m.leave()
	default:
		if m.asked && !m.front.Waiting() {
			m.withdraw() // every waiting acquire was withdrawn
		}
	}
}

// Receive handles the lock messages and hands bully its own.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	switch x := msg.(type) {
	case Request:
		m.onRequest(claim{from, x.Seq})
	case Held:
		m.onHeld(claim{from, x.Seq})
	case Release:
		m.onRelease(claim{from, x.Seq})
	case Grant:
		m.onGrant(from, x.Seq)
	default:
		m.elector.Receive(from, msg)
	}
}

// Timeout ends a coordinator's wait and hands bully its own timers.
func (m *Machine) Timeout(name string) {
	if name != timerCollect {
		m.elector.Timeout(name)
		return
	}
	m.collecting = false
	m.grant()
}

// send sends a message, to this node itself by handling it at once.
func (m *Machine) send(to string, msg nodes.Msg) {
	if to == m.env.Self() {
		m.Receive(to, msg)
		return
	}
	m.env.Send(to, msg)
}

// trust follows bully's belief: the node now trusts c ("" for none). A
// node that becomes the coordinator starts with an empty lock state; a
// node that stops being it forgets its own. Either way the node tells the
// coordinator it trusts what it wants or holds, unless that coordinator,
// by its id, knows already.
func (m *Machine) trust(c string) {
	if c == m.coord {
		return
	}
	self := m.env.Self()
	if m.coord == self {
		m.leading, m.collecting, m.lock = false, false, lock{}
		m.env.CancelTimer(timerCollect)
	}
	m.coord = c
	if c == self {
		m.leading, m.lock = true, lock{}
		m.collecting = m.p.Collect > 0
		if m.collecting {
			m.env.SetTimer(timerCollect, m.p.Collect)
		}
	}
	m.inform()
}

// inform tells the coordinator the node trusts of its waiting request or
// of its hold, when the coordinator that knows of it (told) is another
// node. A coordinator is known by its id alone: one that crashed and was
// replaced under the same id is, to this node, the same coordinator, and
// it is told nothing.
func (m *Machine) inform() {
	if m.coord == "" || m.coord == m.told {
		return
	}
	var msg nodes.Msg
	switch {
	case m.asked:
		msg = Request{Seq: m.seq}
	case m.front.Inside():
		msg = Held{Seq: m.seq}
	default:
		return
	}
	m.told = m.coord
	m.send(m.coord, msg)
}

// ask makes a new request for the first waiting acquire.
func (m *Machine) ask() {
	m.seq++
	m.asked, m.told = true, ""
	m.inform()
}

// leave gives the lock back, then asks again if another acquire waits.
func (m *Machine) leave() {
	m.giveBack()
	if m.front.Waiting() {
		m.ask()
	}
}

// withdraw gives up the request: nobody at this node waits any more.
func (m *Machine) withdraw() {
	m.asked = false
	m.giveBack()
}

// giveBack tells the coordinator that knows of the request or the hold
// that it is over.
func (m *Machine) giveBack() {
	if to := m.told; to != "" {
		m.told = ""
		m.send(to, Release{Seq: m.seq})
	}
}

// onGrant lets the first waiting acquire in. A grant for a request that no
// longer waits (withdrawn, or from a coordinator that learnt of it before
// the node asked another) is given back to its sender.
func (m *Machine) onGrant(from string, seq int) {
	switch {
	case m.asked && seq == m.seq:
		m.asked, m.told = false, from
		if !m.front.Enter() {
			m.leave() // every acquire was withdrawn meanwhile
			return
		}
		m.inform() // granted by a coordinator the node no longer trusts
	case m.front.Inside() && seq == m.seq:
		// a duplicate of the grant the node is inside by
	default:
		m.send(from, Release{Seq: seq})
	}
}

// onRequest queues a request, at the coordinator.
func (m *Machine) onRequest(c claim) {
	if !m.leading {
		m.env.Logf("request %d from %s ignored: %s is not the coordinator (it trusts %q)", c.seq, c.node, m.env.Self(), m.coord)
		return
	}
	m.lock.request(c)
	m.grant()
}

// onHeld records a hold declared to a new coordinator.
func (m *Machine) onHeld(c claim) {
	if !m.leading {
		m.env.Logf("hold %d of %s ignored: %s is not the coordinator (it trusts %q)", c.seq, c.node, m.env.Self(), m.coord)
		return
	}
	if other := m.lock.held(c); other != "" {
		m.env.Logf("%s says it holds the lock, which %s holds: two nodes are inside", c.node, other)
	}
}

// onRelease ends a hold or withdraws a request, at the coordinator.
func (m *Machine) onRelease(c claim) {
	if !m.leading {
		return
	}
	m.lock.release(c)
	m.grant()
}

// grant gives the free lock to the first request in the queue, unless the
// coordinator is still collecting the holds of the nodes.
func (m *Machine) grant() {
	if m.collecting {
		return
	}
	if c, ok := m.lock.next(); ok {
		m.send(c.node, Grant{Seq: c.seq})
	}
}
