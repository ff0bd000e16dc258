// Package nodetest is an in-memory network for testing algorithms without
// processes: every node's machine in one process, one virtual clock, messages
// delivered after a fixed latency in send order, timers that fire in time
// order. It is deterministic: the same calls give the same run.
//
// It lives outside _test files so that every algorithm's tests, and users'
// own, can drive machines through it. It can crash and restart a node, block
// a link one way, cut it both ways, isolate a node, and give one direction of
// a link its own latency; it does nothing else to messages.
package nodetest

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/coupharness/coup/nodes"
)

// Report is a report made by a node, with the virtual time it was made.
type Report struct {
	At   time.Duration
	Node string
	nodes.Report
}

// Reply is a node's answer to a client request.
type Reply struct {
	At    time.Duration
	Node  string
	Req   nodes.Request
	OK    bool
	Value string
	// Fields are the body fields of an answer given with ReplyWith.
	Fields any
	Err    nodes.Error
}

// Network is a set of machines connected by perfect links.
type Network struct {
	// Latency is how long every message takes (default 1ms).
	Latency time.Duration
	// Sent counts the messages sent, by type, including those later
	// dropped because their receiver had crashed or the link was cut.
	Sent map[string]int
	// Reports and Replies are every report and answer, in order.
	Reports []Report
	Replies []Reply
	// Trace, when set, is called with each delivered message.
	Trace func(at time.Duration, from, to string, m nodes.Msg)

	spec     nodes.Spec
	order    []string
	ids      map[string]int
	machines map[string]nodes.Machine
	envs     map[string]*env
	crashed  map[string]bool
	cut      map[[2]string]bool
	latency  map[[2]string]time.Duration
	now      time.Duration
	seq      uint64
	queue    events
	leaders  map[string]string
	seed     uint64
	params   map[string]any
}

// New builds a network of len(ids) nodes n1..nN running spec, with the given
// election ids in ring order (nil gives ids 1..N) and parameters.
func New(spec nodes.Spec, n int, ids []int, params map[string]any) (*Network, error) {
	if ids != nil && len(ids) != n {
		return nil, fmt.Errorf("%d ids for %d nodes", len(ids), n)
	}
	net := &Network{
		Latency:  time.Millisecond,
		Sent:     map[string]int{},
		spec:     spec,
		ids:      map[string]int{},
		machines: map[string]nodes.Machine{},
		envs:     map[string]*env{},
		crashed:  map[string]bool{},
		cut:      map[[2]string]bool{},
		latency:  map[[2]string]time.Duration{},
		leaders:  map[string]string{},
		params:   params,
	}
	for i := 0; i < n; i++ {
		name := "n" + strconv.Itoa(i+1)
		net.order = append(net.order, name)
		if ids != nil {
			net.ids[name] = ids[i]
		} else {
			net.ids[name] = i + 1
		}
	}
	for _, name := range net.order {
		if err := net.build(name); err != nil {
			return nil, err
		}
	}
	return net, nil
}

func (net *Network) build(name string) error {
	m, err := net.spec.New(nodes.NewParams(net.params))
	if err != nil {
		return err
	}
	net.machines[name] = m
	net.seed++
	net.envs[name] = &env{net: net, self: name, rng: rand.New(rand.NewPCG(net.seed, 7)), timers: map[string]uint64{}}
	return nil
}

// Nodes returns the node names in ring order.
func (net *Network) Nodes() []string { return net.order }

// Now is the virtual time.
func (net *Network) Now() time.Duration { return net.now }

// Start starts every machine, in ring order.
func (net *Network) Start() {
	for _, name := range net.order {
		net.machines[name].Start(net.envs[name])
	}
}

// Request hands a client request to a node now, from client c1.
func (net *Network) Request(node, op string) { net.Do("c1", node, op, "") }

// Do hands a request from client, with an operation and a value, to a node
// now, and returns the request's id (0 when the node has crashed and the
// request is lost).
func (net *Network) Do(client, node, op, value string) int {
	if net.crashed[node] {
		return 0
	}
	net.seq++
	id := int(net.seq)
	net.machines[node].Request(nodes.Request{Client: client, ID: id, Op: op, Value: value})
	return id
}

// Answer returns the answer to the request with that id, if there is one.
func (net *Network) Answer(id int) (Reply, bool) {
	for _, r := range net.Replies {
		if r.Req.ID == id {
			return r, true
		}
	}
	return Reply{}, false
}

// Deliver hands a message to a node now, as if from a peer, without
// sending it: for tests that feed a machine a message no machine would
// send.
func (net *Network) Deliver(from, to string, m nodes.Msg) {
	if !net.crashed[to] {
		net.machines[to].Receive(from, m)
	}
}

// Crash stops a node: it gets no more messages and its timers never fire.
func (net *Network) Crash(node string) { net.crashed[node] = true }

// Restart replaces a crashed (or live) node by a fresh machine with the same
// id and starts it.
func (net *Network) Restart(node string) error {
	delete(net.crashed, node)
	if err := net.build(node); err != nil {
		return err
	}
	net.machines[node].Start(net.envs[node])
	return nil
}

// Block drops every message from one node to another (one way), including
// those in flight when it is called.
func (net *Network) Block(from, to string) { net.cut[[2]string{from, to}] = true }

// Cut drops every message between a and b, both ways.
func (net *Network) Cut(a, b string) {
	net.Block(a, b)
	net.Block(b, a)
}

// SetLatency gives messages sent from one node to another from now on
// their own latency instead of Latency. Messages already in flight keep
// theirs, so a link whose latency drops may deliver out of order.
func (net *Network) SetLatency(from, to string, d time.Duration) {
	net.latency[[2]string{from, to}] = d
}

// Isolate cuts every link of a node.
func (net *Network) Isolate(node string) {
	for _, o := range net.order {
		if o != node {
			net.Cut(node, o)
		}
	}
}

// Heal restores every link: nothing is blocked and every link has the
// network's Latency again.
func (net *Network) Heal() {
	net.cut = map[[2]string]bool{}
	net.latency = map[[2]string]time.Duration{}
}

// Leader is the node's latest leader belief ("" for none).
func (net *Network) Leader(node string) string { return net.leaders[node] }

// Messages is the total number of messages sent.
func (net *Network) Messages() int {
	total := 0
	for _, c := range net.Sent {
		total += c
	}
	return total
}

// Run processes every event due by limit, in time order, then sets the
// virtual time to limit (if it is not past it already), and returns the
// number of events processed.
func (net *Network) Run(limit time.Duration) int {
	steps := 0
	for net.queue.Len() > 0 && net.queue[0].at <= limit {
		e := heap.Pop(&net.queue).(*event)
		net.now = e.at
		net.fire(e)
		steps++
	}
	net.now = max(net.now, limit)
	return steps
}

// RunFor runs for d of virtual time from now.
func (net *Network) RunFor(d time.Duration) int { return net.Run(net.now + d) }

// Settle runs until no event is left, and fails after max events (a
// machine that never goes quiet).
func (net *Network) Settle(max int) error {
	for i := 0; i < max; i++ {
		if net.queue.Len() == 0 {
			return nil
		}
		e := heap.Pop(&net.queue).(*event)
		net.now = e.at
		net.fire(e)
	}
	return fmt.Errorf("not quiet after %d events", max)
}

func (net *Network) fire(e *event) {
	if net.crashed[e.to] {
		return
	}
	if e.timer != "" {
		en := net.envs[e.to]
		if gen, ok := en.timers[e.timer]; !ok || gen != e.gen || e.env != en {
			return
		}
		delete(en.timers, e.timer)
		net.machines[e.to].Timeout(e.timer)
		return
	}
	if net.cut[[2]string{e.from, e.to}] {
		return
	}
	if net.Trace != nil {
		net.Trace(e.at, e.from, e.to, e.msg)
	}
	net.machines[e.to].Receive(e.from, e.msg)
}

// Leaders returns each live node's leader belief, sorted by node.
func (net *Network) Leaders() map[string]string {
	out := map[string]string{}
	names := append([]string(nil), net.order...)
	sort.Strings(names)
	for _, n := range names {
		if !net.crashed[n] {
			out[n] = net.leaders[n]
		}
	}
	return out
}

type env struct {
	net    *Network
	self   string
	rng    *rand.Rand
	timers map[string]uint64
}

var _ nodes.Env = (*env)(nil)

func (e *env) Self() string               { return e.self }
func (e *env) Nodes() []string            { return e.net.order }
func (e *env) ElectionID(node string) int { return e.net.ids[node] }
func (e *env) Rand() *rand.Rand           { return e.rng }
func (e *env) Logf(string, ...any)        {}

func (e *env) Send(to string, m nodes.Msg) {
	if e.net.envs[e.self] != e {
		return // a crashed-and-replaced incarnation
	}
	e.net.Sent[m.Type()]++
	lat, ok := e.net.latency[[2]string{e.self, to}]
	if !ok {
		lat = e.net.Latency
	}
	e.net.push(&event{at: e.net.now + lat, from: e.self, to: to, msg: m})
}

func (e *env) SetTimer(name string, d time.Duration) {
	e.net.seq++
	e.timers[name] = e.net.seq
	e.net.push(&event{at: e.net.now + d, to: e.self, timer: name, gen: e.net.seq, env: e})
}

func (e *env) CancelTimer(name string) { delete(e.timers, name) }

func (e *env) Report(r nodes.Report) {
	if r.What == "leader" {
		e.net.leaders[e.self] = r.Value
	}
	e.net.Reports = append(e.net.Reports, Report{At: e.net.now, Node: e.self, Report: r})
}

func (e *env) Reply(r nodes.Request, value string) {
	e.net.Replies = append(e.net.Replies, Reply{At: e.net.now, Node: e.self, Req: r, OK: true, Value: value})
}

func (e *env) ReplyWith(r nodes.Request, fields any) {
	e.net.Replies = append(e.net.Replies, Reply{At: e.net.now, Node: e.self, Req: r, OK: true, Fields: fields})
}

func (e *env) Fail(r nodes.Request, er nodes.Error) {
	e.net.Replies = append(e.net.Replies, Reply{At: e.net.now, Node: e.self, Req: r, Err: er})
}

type event struct {
	at    time.Duration
	seq   uint64
	from  string
	to    string
	msg   nodes.Msg
	timer string
	gen   uint64
	env   *env
}

func (net *Network) push(e *event) {
	net.seq++
	e.seq = net.seq
	heap.Push(&net.queue, e)
}

type events []*event

func (q events) Len() int { return len(q) }
func (q events) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q events) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *events) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
