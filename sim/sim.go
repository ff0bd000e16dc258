package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/process"
	"github.com/coupharness/coup/workloads"
)

// Config is one simulated run: the algorithm, the cluster, the network and
// its faults, the workload, and how long it all lasts. FromScenario builds
// it from a scenario; an algorithm's tests may build one by hand.
type Config struct {
	// Spec is the algorithm every node runs.
	Spec nodes.Spec
	// Nodes are the node ids in ring order (default n1..nN for N =
	// len(IDs), or n1..n3).
	Nodes []string
	// IDs are the election ids of Nodes, in the same order; nil gives each
	// node the number in its name, as a real node does.
	IDs []int
	// Params are the algorithm's parameters.
	Params map[string]any
	// Seed seeds every random choice: the nemesis's schedules, targets
	// and fates, each node's Env.Rand, and the restart times.
	Seed int64
	// Checksums makes senders sum every body and receivers verify it (only
	// a corrupted copy can fail).
	Checksums bool
	// Latency and Jitter are the network's base one-way delay and its
	// uniform random addition; FIFO keeps each link in order.
	Latency, Jitter time.Duration
	FIFO            bool
	// Faults are the nemesis's faults, each already checked
	// (nemesis.Fault.Check, as scenario loading does).
	Faults []nemesis.Fault
	// Duration is when the faults are healed; Recovery how long the run
	// goes on after the heal. Run uses them; RunUntil ignores them but for
	// the nemesis, which plans nothing at or after Duration (0: no fault
	// ever starts).
	Duration, Recovery time.Duration
	// RecordMessages records every message's send, delivery and fate as an
	// event; they are counted either way.
	RecordMessages bool
	// Workload drives the clients (nil: none).
	Workload workloads.Workload
	// OpTimeout is how long a client waits for an answer (default 1s).
	OpTimeout time.Duration
	// Restart bounds how long a restarted node takes to come up, as a real
	// process takes to start and answer init: each restart draws a time in
	// [Restart.Min, Restart.Max) from the seeded source. The zero value is
	// DefaultRestart.
	Restart Span
	// Meta, when set, is recorded as the history's first event.
	Meta *history.Meta
	// History, when set, receives the history as JSON lines. The events
	// are kept in memory either way.
	History io.Writer
	// Log, when set, receives the simulator's log and every node's Logf
	// lines, stamped with the virtual time.
	Log io.Writer
	// EventsHint is how many events the run is expected to record (for
	// example the count of the last run of the same scenario): with a
	// good hint the history is kept in one slice from the start. It
	// changes nothing but speed.
	EventsHint int
	// RoundTrip sends every message through the algorithm's codec (encode,
	// then decode) as a real node would, instead of passing the value. It
	// is slower; a run must give the same history with or without it.
	RoundTrip bool
	// Strategy is how the run explores the choices the scenario leaves
	// open (the zero value: Random, uniform random choices).
	Strategy Strategy
}

// Span is a range of durations, [Min, Max).
type Span struct{ Min, Max time.Duration }

// DefaultRestart is how long a restart takes by default: the time a real
// built-in node process takes to start and answer init on one machine
// (measured at 4–5ms between the crash and the start events of a replace).
var DefaultRestart = Span{Min: 3 * time.Millisecond, Max: 6 * time.Millisecond}

// StopTime is how long after the recovery window the nodes are stopped,
// running meanwhile: the time a real harness takes to kill a node and read
// its output to the end. A check that judges the cluster at the end of the
// window (termination) sees it as a real run shows it, still up.
const StopTime = time.Millisecond

// The seeded stream of restart times (the nemesis has its own streams).
const restartStream = 0x7265737461727473

// ErrBadConfig wraps a configuration the simulator cannot run.
var ErrBadConfig = errors.New("bad simulator configuration")

// Sim is one simulated cluster. It is not safe for concurrent use; distinct
// Sims share nothing and may run in parallel.
type Sim struct {
	cfg    Config
	params *nodes.Params // the machines' parameters, read by each New
	now    time.Duration
	seq    uint64
	q      queue
	nodes  []*node
	byName map[string]*node
	ids    map[string]int
	rec    *recorder
	nem    *nemesis.Nemesis
	rng    *rand.Rand // restart times
	cl     *clients
	cnt    counters
	msgID  int64
	copies []nemesis.Copy  // the fates' buffer, reused
	extras []*extra        // the extras of items done with, for new items (queue.go)
	ports  []*nemesis.Port // each link's state in the network, by from×n+to
	gen    uint64          // timer generations

	// The strategy's state: nil under Random.
	pct  *pct
	bias *bias

	// life drives the run: the nemesis, the heal, the recovery window and
	// the end, as for every driver.
	life *lifecycle.Run
	// closed is set once the history is closed: log lines are flushed at
	// once from then on.
	closed bool
	// inputs, when not nil, receives every call into a machine (the
	// floor's capture, floor.go).
	inputs *[]input
}

// New builds a simulated cluster; Start starts it.
func New(cfg Config) (*Sim, error) {
	if cfg.Spec.New == nil || cfg.Spec.Codec == nil {
		return nil, fmt.Errorf("%w: the algorithm's spec needs New and a Codec", ErrBadConfig)
	}
	if len(cfg.Nodes) == 0 {
		n := len(cfg.IDs)
		if n == 0 {
			n = 3
		}
		for i := range n {
			cfg.Nodes = append(cfg.Nodes, fmt.Sprintf("n%d", i+1))
		}
	}
	if len(cfg.IDs) != 0 && len(cfg.IDs) != len(cfg.Nodes) {
		return nil, fmt.Errorf("%w: %d ids for %d nodes", ErrBadConfig, len(cfg.IDs), len(cfg.Nodes))
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = time.Second
	}
	if cfg.Restart == (Span{}) {
		cfg.Restart = DefaultRestart
	}
	if cfg.Restart.Min < 0 || cfg.Restart.Max < cfg.Restart.Min {
		return nil, fmt.Errorf("%w: restart span [%s, %s)", ErrBadConfig, cfg.Restart.Min, cfg.Restart.Max)
	}
	if cfg.Workload == nil {
		cfg.Workload = workloads.None{}
	}
	if _, err := cfg.Spec.New(nodes.NewParams(cfg.Params)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	// Every incarnation's machine reads the parameters checked here: one
	// table for the run, not one each.
	params := nodes.NewParams(cfg.Params)
	s := &Sim{
		cfg:    cfg,
		params: params,
		byName: make(map[string]*node, len(cfg.Nodes)),
		ids:    make(map[string]int, len(cfg.Nodes)),
		rng:    rand.New(rand.NewPCG(uint64(cfg.Seed), restartStream)),
		q:      newQueue(),
	}
	slab := make([]node, len(cfg.Nodes)) // the nodes in one allocation
	s.nodes = make([]*node, 0, len(cfg.Nodes))
	for i, name := range cfg.Nodes {
		if s.byName[name] != nil {
			return nil, fmt.Errorf("%w: node %q twice", ErrBadConfig, name)
		}
		n := &slab[i]
		*n = node{s: s, name: name, index: int32(i), rng: nodeSeed(cfg.Seed, name)}
		s.nodes = append(s.nodes, n)
		s.byName[name] = n
		if len(cfg.IDs) > 0 {
			n.id = cfg.IDs[i]
		} else {
			n.id = process.DefaultID(name)
		}
		s.ids[name] = n.id
	}
	s.rec = newRecorder(cfg.History, func() int64 { return int64(s.now) }, cfg.EventsHint)
	ncfg := nemesis.Config{
		Nodes: cfg.Nodes, Faults: cfg.Faults, Duration: cfg.Duration, Seed: cfg.Seed,
		Latency: cfg.Latency, Jitter: cfg.Jitter, FIFO: cfg.FIFO,
	}
	switch st := cfg.Strategy.For(cfg.Seed); st.Name {
	case "", Random:
	case PCT:
		s.pct = newPCT(cfg.Seed, len(cfg.Nodes), st.Depth, cfg.Duration+cfg.Recovery)
		ncfg.Spread = s.spreadFunc()
	case Bias:
		s.bias = newBias(cfg.Faults)
	default:
		return nil, fmt.Errorf("%w: unknown strategy %q", ErrBadConfig, st.Name)
	}
	parts := lifecycle.Parts{Nemesis: ncfg, Meta: cfg.Meta, Duration: cfg.Duration, Recovery: cfg.Recovery}
	lcfg := lifecycle.Config{OneGoroutine: true}
	if s.bias != nil {
		lcfg.Hold = s.bias
	}
	s.life = parts.New(driver{s}, lcfg)
	s.nem = s.life.Nemesis()
	s.cl = &clients{s: s, w: cfg.Workload, timeout: cfg.OpTimeout, pending: map[int]pendingOp{}}
	return s, nil
}

// Now is the virtual time since the run's zero.
func (s *Sim) Now() time.Duration { return s.now }

// Nodes are the node ids in ring order.
func (s *Sim) Nodes() []string { return s.cfg.Nodes }

// Start records the meta event and starts every node in ring order at the
// run's zero. RunUntil, RunFor and Finish call it first; it does its work
// once.
func (s *Sim) Start() { _ = s.life.Start(context.Background()) }

// Run runs the whole lifecycle of a run, as every driver does
// (lifecycle.Run): start, the workload and the faults until Duration, the
// heal, the recovery window, the stop of every node and the end event. It
// returns the history.
func (s *Sim) Run() (*history.History, error) { return s.Finish() }

// RunUntil runs the cluster, the workload and the nemesis's planned and
// triggered faults until the virtual time t: the nemesis's actions due at
// t are carried out, nothing else due at t runs yet.
func (s *Sim) RunUntil(t time.Duration) { _ = s.life.Until(context.Background(), t) }

// RunFor runs for d of virtual time from now.
func (s *Sim) RunFor(d time.Duration) { s.RunUntil(s.now + d) }

// step runs the earliest queued item.
func (s *Sim) step() {
	slot := s.q.take()
	it := s.q.at(slot)
	s.now = it.at
	s.handle(it)
	s.q.release(slot)
}

// Finish ends a run as every driver does (lifecycle.Run.Finish): the
// nemesis until Duration (what was due is carried out, late), the heal of
// every fault in force, the recovery window, the stop of every node
// (pending client operations end as info) and the end event with the
// counts. It returns the history.
func (s *Sim) Finish() (*history.History, error) {
	_ = s.life.Finish(context.Background())
	return s.history(), s.rec.flush()
}

// history is the recorded history, read as history.Read would read its
// file (but for the events, which are not copied).
func (s *Sim) history() *history.History {
	h := &history.History{Events: s.rec.events()}
	for i := range h.Events {
		switch e := &h.Events[i]; e.Kind {
		case history.KindMeta:
			if e.Meta != nil {
				h.Meta = *e.Meta
			}
		case history.KindEnd:
			h.Ended = true
		}
	}
	return h
}

// shutdown stops the workload and every node, and counts what is still in
// flight.
func (s *Sim) shutdown() {
	s.cl.stop()
	for _, n := range s.nodes {
		n.stop()
	}
	left := 0
	s.q.each(func(it *item) {
		if it.kind == kDeliver {
			left++
		}
	})
	s.q.reset()
	if left > 0 {
		s.cnt.other.add(history.CountInFlight, int64(left))
	}
}

// Events are the events recorded so far; the slice must not be changed.
func (s *Sim) Events() []history.Event { return s.rec.events() }

// Leader is a node's latest leader belief ("" for none, or when it is
// down).
func (s *Sim) Leader(node string) string {
	n := s.byName[node]
	if n == nil || n.state != up {
		return ""
	}
	return n.leader
}

// Leaders are the latest leader beliefs of the nodes that are up, by node.
func (s *Sim) Leaders() map[string]string {
	out := map[string]string{}
	for _, n := range s.nodes {
		if n.state == up {
			out[n.name] = n.leader
		}
	}
	return out
}

// Invoke has a client invoke an operation on a node now, as a workload
// would (recorded, answered or timed out).
func (s *Sim) Invoke(process, node, f, value string) {
	s.cl.Invoke(workloads.Op{Process: process, Node: node, F: f, Value: value})
}

// Stats are figures about a simulated run.
type Stats struct {
	// Delivered counts the message copies handed to a receiver (corrupted
	// ones included); Sent the messages sent.
	Delivered, Sent int64
	// Steps counts the queued items run (deliveries, timers, requests...).
	Steps int64
	// Virtual is the virtual time reached.
	Virtual time.Duration
}

// Stats returns the run's figures so far.
func (s *Sim) Stats() Stats {
	return Stats{Delivered: s.cnt.delivered, Sent: s.cnt.sent, Steps: s.cnt.steps, Virtual: s.now}
}

// record records an event and hands the nemesis what it must observe; it
// returns the event as recorded.
func (s *Sim) record(e history.Event) *history.Event {
	kept := s.rec.record(e)
	s.life.Watch(kept)
	return kept
}

// recordMsg records a message's event (send, duplicate, deliver, drop),
// written where it is kept (recorder.msg). The nemesis observes no
// message event (nemesis.Relevant), so the lifecycle is not shown it.
func (s *Sim) recordMsg(what string, id int64, src, dest, mtype, reason string) {
	s.rec.msg(what, id, src, dest, mtype, reason)
}

func (s *Sim) push(it item) {
	s.seq++
	it.seq = s.seq
	if s.pct != nil {
		switch it.kind {
		case kDeliver:
			it.prio = s.pct.prio(it.from)
		case kTimer:
			it.prio = s.pct.prio(it.to)
		}
	}
	s.q.push(it)
}

// logf writes a line to the log, stamped with the virtual time, the
// history's; logAt stamps it at, the time of the event it is about.
func (s *Sim) logf(format string, args ...any) { s.logAt(s.now, format, args...) }

func (s *Sim) logAt(at time.Duration, format string, args ...any) {
	if s.cfg.Log == nil {
		return
	}
	fmt.Fprintf(s.cfg.Log, "%12.6fs "+format+"\n", append([]any{float64(at) / 1e9}, args...)...)
	if s.closed {
		_ = s.flushLog()
	}
}

// flushLog flushes a log that buffers (one with a Flush method, such as a
// bufio.Writer).
func (s *Sim) flushLog() error {
	if f, ok := s.cfg.Log.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}
