// Package tokenring is token-ring mutual exclusion on a unidirectional
// ring, as a pure state machine.
//
// One token circulates round the ring. A node may enter the critical
// section only while it holds the token; it keeps the token while one of
// its clients is inside, and passes it to its successor when that client
// releases. A node that receives the token and has no client waiting
// passes it on.
//
// What an idle ring does: the token keeps circulating, as in the course
// material, so an entry costs from 1 message (the successor of the last
// holder wants it) to an unbounded number (nobody wants it for a while),
// and a waiting node waits from 0 to N hops. The idle_hold parameter makes
// a node keep an unwanted token for a while before passing it, which
// bounds the idle traffic at the cost of a longer wait.
//
// The first node of the ring holds the token at the start. It keeps it for
// start_hold before passing it the first time, because a token passed to a
// node that is not running yet is lost; its own clients may use it
// meanwhile.
//
// Each acquire is one entry: after a release the token goes round before
// the same node enters again. There is no fault tolerance: a crashed
// holder takes the token with it, and a crashed node swallows the token
// when it is passed to it; either way no node ever enters again.
package tokenring

import (
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/mutex"
)

// Token is the permission to enter, passed along the ring.
type Token struct {
	// Passes counts the times the token has been passed, for the logs.
	Passes int `json:"passes"`
}

func (Token) Type() string { return "token" }

// Config are the algorithm's parameters.
type Config struct {
	// StartHold is how long the first node keeps the token after it starts
	// before passing it the first time, so that every node is up
	// (params.start_hold, default 100ms).
	StartHold time.Duration
	// IdleHold is how long a node keeps a token that none of its clients
	// wants before passing it on (params.idle_hold, default 0: at once,
	// so the token circulates continuously).
	IdleHold time.Duration
}

// DefaultStartHold is the default of Config.StartHold.
const DefaultStartHold = 100 * time.Millisecond

// Spec describes the algorithm to the drivers.
var Spec = nodes.Spec{
	Name:     "token-ring",
	Summary:  "mutual exclusion: one token circulates round a unidirectional ring; only its holder enters",
	Topology: "ring",
	Kind:     nodes.KindMutex,
	Codec:    nodes.NewCodec(Token{}),
	New: func(p *nodes.Params) (nodes.Machine, error) {
		var c Config
		var err error
		if c.StartHold, err = p.Duration("start_hold", DefaultStartHold); err != nil {
			return nil, err
		}
		if c.IdleHold, err = p.Duration("idle_hold", 0); err != nil {
			return nil, err
		}
		if err := p.Unused(); err != nil {
			return nil, err
		}
		return &Machine{cfg: c}, nil
	},
}

// timerPass fires when a held, unwanted token is due to move on.
const timerPass = "pass"

// Machine is one node of the ring.
type Machine struct {
	cfg   Config
	env   nodes.Env
	front *mutex.Front
	next  string
	token *Token // the token, while this node holds it
}

var _ nodes.Machine = (*Machine)(nil)

// Start learns the successor; the first node of the ring takes the token.
func (m *Machine) Start(env nodes.Env) {
	m.env = env
	m.front = mutex.NewFront(env)
	m.next = successor(env.Nodes(), env.Self())
	if ring := env.Nodes(); len(ring) > 0 && ring[0] == env.Self() {
		m.token = &Token{}
		m.keep(m.cfg.StartHold)
	}
}

func successor(ring []string, self string) string {
	for i, n := range ring {
		if n == self {
			return ring[(i+1)%len(ring)]
		}
	}
	return self
}

// Request handles acquire and release.
func (m *Machine) Request(r nodes.Request) {
	switch m.front.Handle(r) {
	case mutex.Want:
		if m.token != nil && !m.front.Inside() {
			m.env.CancelTimer(timerPass)
			m.front.Enter()
		}
	case mutex.Leave:
		m.pass()
	}
}

// Receive takes the token: enter if a client waits, else move it on.
func (m *Machine) Receive(from string, msg nodes.Msg) {
	t, ok := msg.(Token)
	if !ok {
		return
	}
	if m.token != nil {
		// Two tokens met (a duplicated message): they merge.
		m.env.Logf("a second token arrived from %s while holding one; keeping one", from)
		return
	}
	m.token = &t
	if m.front.Waiting() {
		m.front.Enter()
		return
	}
	m.keep(m.cfg.IdleHold)
}

// Timeout moves on a token nobody wanted.
func (m *Machine) Timeout(name string) {
	if name != timerPass || m.token == nil || m.front.Inside() {
		return
	}
	if m.front.Waiting() {
		m.front.Enter()
		return
	}
	m.pass()
}

// keep holds an unwanted token for d, then passes it.
func (m *Machine) keep(d time.Duration) {
	if d <= 0 {
		m.pass()
		return
	}
	m.env.SetTimer(timerPass, d)
}

// pass sends the token to the successor. A ring of one keeps it.
func (m *Machine) pass() {
	m.env.CancelTimer(timerPass)
	if m.next == m.env.Self() {
		if m.front.Waiting() {
			m.front.Enter()
		}
		return
	}
	t := *m.token
	t.Passes++
	m.token = nil
	m.env.Send(m.next, t)
}
