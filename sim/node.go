package sim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/wire"
)

// procState is a simulated node's process.
type procState uint8

const (
	down     procState = iota // not running (never started, crashed, stopped)
	starting                  // restarted, not yet up
	up                        // running (perhaps paused)
)

// node is one node of the cluster, across its incarnations.
type node struct {
	s     *Sim
	name  string
	index int32
	id    int    // the election id
	rng   uint64 // the second word of every incarnation's Rand seed

	state  procState
	paused bool
	inc    int32
	m      nodes.Machine
	env    *env
	// rate is the clock rate of the running incarnation; setRate is the
	// one a clock fault set (0: none), which the next incarnation starts
	// with, as a real node gets it through init.
	rate, setRate float64
	// held are the deliveries, requests and control messages that came
	// while the node was paused, in order; heldTimers the timers that
	// expired meanwhile.
	held       []item
	heldTimers []item
	leader     string
	// disk is the node's Storage, kept across its incarnations
	// (storage.go).
	disk *disk
}

// nodeSeed is the second word of a node's Rand seed: the same as a real
// node process's (FNV-1a of its id), so a node draws the same numbers in
// both drivers.
func nodeSeed(seed int64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// start starts a new incarnation: a fresh machine under the same id.
func (n *node) start() {
	s := n.s
	m, err := s.cfg.Spec.New(s.params)
	if err != nil { // New checked the parameters once already
		panic(fmt.Sprintf("sim: %s: %v", n.name, err))
	}
	n.inc++
	n.m = m
	// The incarnation's random source lives in its env: one allocation,
	// not three.
	e := &env{n: n, inc: n.inc, pcg: *rand.NewPCG(uint64(s.cfg.Seed), n.rng)}
	e.rng = *rand.New(&e.pcg)
	n.env = e
	n.state, n.paused = up, false
	n.rate = 1
	if n.setRate > 0 {
		n.rate = n.setRate
	}
	n.leader = ""
	s.record(history.Event{Kind: history.KindProcess, Node: n.name, What: history.ProcStart, Incarnation: int(n.inc), Detail: "simulated"})
	if s.inputs != nil { // the floor's capture: an input of 150 bytes made only then
		s.capture(input{kind: inStart, node: n.index})
	}
	n.call(func() { n.m.Start(n.env) })
}

// end ends the running incarnation for why (crash or stop): what it held
// while paused is dropped as undeliverable, its timers die with it.
func (n *node) end(why string) {
	n.state, n.paused = down, false
	n.m, n.env = nil, nil
	n.leader = ""
	n.heldTimers = nil
	held := n.held
	n.held = nil
	n.s.record(history.Event{Kind: history.KindProcess, Node: n.name, What: why, Incarnation: int(n.inc)})
	for i := range held {
		if held[i].kind == kDeliver {
			n.s.drop(&held[i], n, "down")
		}
	}
}

// stop ends the node at the end of the run, if it is up.
func (n *node) stop() {
	if n.state == up {
		n.end(history.ProcStop)
	}
	n.state = down
}

// call runs one input of the machine. A panic ends the incarnation as a
// real node process would end: it exits, and the exit is recorded.
func (n *node) call(fn func()) {
	inc := n.inc
	defer func() {
		if r := recover(); r != nil {
			n.s.logf("%s: the machine panicked: %v\n%s", n.name, r, debug.Stack())
			if n.inc == inc && n.state == up {
				n.state, n.paused = down, false
				n.m, n.env = nil, nil
				n.leader = ""
				n.heldTimers, n.held = nil, nil
				n.s.record(history.Event{Kind: history.KindProcess, Node: n.name, What: history.ProcExit, Incarnation: int(inc), Detail: fmt.Sprintf("panic: %v", r)})
			}
		}
	}()
	fn()
}

// handle runs a queued item.
func (s *Sim) handle(it *item) {
	s.cnt.steps++
	switch it.kind {
	case kDeliver:
		s.deliver(it)
	case kTimer:
		n := s.nodes[it.to]
		if n.state != up || n.inc != it.inc {
			return // a timer of an incarnation that has ended
		}
		if !n.env.timers.armed(it.name, uint64(it.id)) {
			return // cancelled or set again since
		}
		if n.paused {
			n.heldTimers = append(n.heldTimers, *it)
			return
		}
		n.fire(it)
	case kRequest, kControl:
		n := s.nodes[it.to]
		switch {
		case n.state != up:
			// A request to a node that is down is lost; the client times out.
			s.done(it)
		case n.paused:
			n.hold(it)
		default:
			n.input(it)
			s.done(it)
		}
	case kStart:
		n := s.nodes[it.to]
		n.start()
	case kAfter:
		if !s.cl.stopped {
			it.x.fn()
		}
		s.done(it)
	case kOpTimeout:
		s.cl.complete(int(it.id), history.OpInfo, "timed out", nil)
	}
}

// fire runs an expired timer.
func (n *node) fire(it *item) {
	n.env.timers.clear(it.name)
	name := it.name
	if n.s.inputs != nil { // the floor's capture: an input of 150 bytes made only then
		n.s.capture(input{kind: inTimeout, node: n.index, name: name})
	}
	n.call(func() { n.m.Timeout(name) })
}

// hold keeps an input of a paused node until it resumes, within the bound
// of a real node's queue: beyond it a message is dropped as an overflow,
// and anything else is lost.
func (n *node) hold(it *item) {
	if len(n.held) >= lifecycle.OutboxSize {
		if it.kind == kDeliver {
			n.s.drop(it, n, "overflow")
		}
		return
	}
	n.held = append(n.held, *it)
}

// input hands a running node a request or a control message.
func (n *node) input(it *item) {
	switch it.kind {
	case kRequest:
		req := it.x.req
		if n.s.inputs != nil { // the floor's capture: an input of 150 bytes made only then
			n.s.capture(input{kind: inRequest, node: n.index, req: req})
		}
		n.call(func() { n.m.Request(req) })
	case kControl:
		n.rate = it.x.rate
		n.s.logf("%s: clock rate %g", n.name, it.x.rate)
	case kDeliver:
		n.s.handOver(n, it)
	}
}

// resume runs what a paused node missed: first the timers that expired
// (a resumed process's runtime fires them at once), then what arrived, in
// order. Each is checked again: a handler may end the node.
func (n *node) resume() {
	timers, held := n.heldTimers, n.held
	n.heldTimers, n.held = nil, nil
	inc := n.inc
	for i := range timers {
		it := &timers[i]
		if n.state != up || n.inc != inc {
			break
		}
		if n.env.timers.armed(it.name, uint64(it.id)) {
			n.fire(it)
		}
	}
	for i := range held {
		it := &held[i]
		if n.state == up && n.inc == inc && !n.paused {
			n.input(it)
		} else if it.kind == kDeliver {
			n.s.drop(it, n, "down")
		}
	}
}

// env is one incarnation's environment (nodes.Env). Once the incarnation
// has ended, everything it does is ignored.
type env struct {
	n      *node
	inc    int32
	pcg    rand.PCG
	rng    rand.Rand // drawing from pcg
	timers timers
}

// timers are an incarnation's armed timers: each name with the generation
// of its latest setting. A machine has a handful of timer names, so a
// slice searched in order beats a map.
type timers []timerSlot

type timerSlot struct {
	name string
	gen  uint64 // 0: not armed
}

func (t *timers) set(name string, gen uint64) {
	for i := range *t {
		if (*t)[i].name == name {
			(*t)[i].gen = gen
			return
		}
	}
	*t = append(*t, timerSlot{name, gen})
}

func (t timers) armed(name string, gen uint64) bool {
	for i := range t {
		if t[i].name == name {
			return t[i].gen == gen
		}
	}
	return false
}

func (t timers) clear(name string) {
	for i := range t {
		if t[i].name == name {
			t[i].gen = 0
			return
		}
	}
}

var _ nodes.Env = (*env)(nil)

func (e *env) live() bool { return e.n.inc == e.inc && e.n.state == up }

func (e *env) Self() string    { return e.n.name }
func (e *env) Nodes() []string { return e.n.s.cfg.Nodes }
func (e *env) ElectionID(node string) int {
	if n := e.n.s.node(node); n != nil {
		return n.id // a scan of a few nodes, not a map's hash
	}
	return 0
}
func (e *env) Rand() *rand.Rand { return &e.rng }

func (e *env) Logf(format string, args ...any) {
	if e.n.s.cfg.Log != nil {
		e.n.s.logf("%s: %s", e.n.name, fmt.Sprintf(format, args...))
	}
}

func (e *env) Send(to string, m nodes.Msg) {
	if e.live() {
		e.n.s.send(e.n, to, m)
	}
}

func (e *env) SetTimer(name string, d time.Duration) {
	if !e.live() {
		return
	}
	s := e.n.s
	s.gen++
	e.timers.set(name, s.gen)
	if e.n.rate != 1 {
		d = time.Duration(float64(d) / e.n.rate)
	}
	s.push(item{at: s.now + d, kind: kTimer, to: e.n.index, inc: e.inc, id: int64(s.gen), name: name})
}

func (e *env) CancelTimer(name string) {
	if e.live() {
		e.timers.clear(name)
	}
}

func (e *env) Report(r nodes.Report) {
	if !e.live() {
		return
	}
	if r.What == history.ReportLeader {
		e.n.leader = r.Value
	}
	e.n.s.record(history.Event{Kind: history.KindReport, Node: e.n.name, What: r.What, Value: r.Value, Name: r.Name, Term: r.Term})
}

func (e *env) Reply(r nodes.Request, value string) {
	if e.live() {
		body, _ := json.Marshal(wire.ReplyBody{Type: r.Op + "_ok", InReplyTo: r.ID, Value: value}) // always marshals
		e.n.s.cl.answerString(r.ID, wire.ReplyHead{Type: r.Op + "_ok", InReplyTo: r.ID}, body, value)
	}
}

func (e *env) ReplyWith(r nodes.Request, fields any) {
	if !e.live() {
		return
	}
	body, err := wire.Reply(r.Op+"_ok", r.ID, fields)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", e.n.name, err)) // an answer that cannot be encoded is a bug of the machine
	}
	e.n.s.cl.answer(r.ID, wire.ReplyHead{Type: r.Op + "_ok", InReplyTo: r.ID}, body)
}

func (e *env) Fail(r nodes.Request, er nodes.Error) {
	if !e.live() {
		return
	}
	code := er.Code
	head := wire.ReplyHead{Type: "error", InReplyTo: r.ID, Code: &code, Text: er.Text, Definite: er.Definite}
	body, _ := json.Marshal(head) // always marshals
	e.n.s.cl.answer(r.ID, head, body)
}

// reject reports a message the node would not act on, as a real node does.
func (n *node) reject(why string, id int64) {
	n.s.record(history.Event{Kind: history.KindReport, Node: n.name, What: history.ReportRejected, Value: why, Msg: id})
}
