// Package toy is a module outside coup's that uses coup as a library: two
// toy election machines, one safe and one not, simulated by its test.
// coup's own test (external_test.go) copies it into a temporary module
// that requires coup by its module path.
package toy

import (
	"time"

	"github.com/coupharness/coup"
)

// Beat is a node's heartbeat: "I am up".
type Beat struct{}

// Type names the message on the wire.
func (Beat) Type() string { return "beat" }

// Period is how often a node beats; a peer not heard from for Silence is
// taken for down.
const (
	Period  = 20 * time.Millisecond
	Silence = 5 * Period
)

// Highest trusts the highest node it has heard from lately, itself
// included. It is unsafe: a node cut off from the highest one trusts the
// next, while the highest trusts itself, so two nodes claim leadership.
var Highest = coup.Node{Name: "highest", New: newMachine(false), Messages: []coup.Msg{Beat{}}}

// Fixed trusts the first node, always: trivially safe.
var Fixed = coup.Node{Name: "fixed", New: newMachine(true), Messages: []coup.Msg{Beat{}}}

func newMachine(fixed bool) func(p *coup.Params) (coup.Machine, error) {
	return func(p *coup.Params) (coup.Machine, error) {
		return &machine{fixed: fixed, heard: map[string]int{}}, p.Unused()
	}
}

type machine struct {
	env    coup.Env
	fixed  bool
	beats  int            // this node's beats so far: its clock
	heard  map[string]int // the beat at which each peer was last heard
	leader string
}

func (m *machine) Start(env coup.Env) {
	m.env = env
	if m.fixed {
		m.env.Report(coup.Report{What: "leader", Value: env.Nodes()[0]})
		return
	}
	m.Timeout("beat")
}

func (m *machine) Receive(from string, _ coup.Msg) { m.heard[from] = m.beats }

func (m *machine) Timeout(string) {
	m.beats++
	leader := m.env.Self()
	for _, n := range m.env.Nodes() {
		if n == leader {
			continue
		}
		if at, ok := m.heard[n]; ok && m.beats-at <= int(Silence/Period) && m.env.ElectionID(n) > m.env.ElectionID(leader) {
			leader = n
		}
		m.env.Send(n, Beat{})
	}
	if leader != m.leader && m.beats > int(Silence/Period) { // once it has heard its peers
		m.leader = leader
		m.env.Report(coup.Report{What: "leader", Value: leader})
	}
	m.env.SetTimer("beat", Period)
}

func (m *machine) Request(r coup.Request) {
	m.env.Fail(r, coup.Error{Code: 10, Text: "not supported", Definite: true})
}
