package nemesis

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
)

// Cluster is what process faults act on. Each driver implements it: the
// harness with real processes, the simulator with simulated ones.
type Cluster interface {
	// Crash kills a node's process (SIGKILL, or its simulated equivalent).
	Crash(node string) error
	// Restart starts a fresh process for a node that is down, under the
	// same id; it does the init handshake and knows nothing of the past.
	Restart(node string) error
	// Pause stops a node (SIGSTOP): it neither reads nor writes until
	// resumed, and stays live.
	Pause(node string) error
	// Resume continues a paused node (SIGCONT).
	Resume(node string) error
	// ClockRate makes a node's timers run rate times fast (1 is normal).
	ClockRate(node string, rate float64) error
}

// Skew is what a clock fault does to a node's clocks, as a Clocker
// carries it out: the zero Skew puts them right.
type Skew struct {
	// Offset is the jump when the fault begins.
	Offset time.Duration
	// Rate is how fast the clocks run from then on; 0 or 1 is the true
	// rate.
	Rate float64
	// Clocks are the clocks skewed.
	Clocks Clocks
	// Fault names the occurrence ("faults[0]#1"), for the history.
	Fault string
}

// IsZero reports whether the skew leaves the clocks true.
func (s Skew) IsZero() bool { return s.Offset == 0 && (s.Rate == 0 || s.Rate == 1) }

// Clocker is a Cluster that skews a node's clocks beyond a rate of its
// timers: a driver of real processes. Apply gives it every clock action;
// a Cluster that is not one gets ClockRate for a rate, and a clock fault
// with an offset is refused before it runs.
type Clocker interface {
	Clock(node string, s Skew) error
}

// Replacer is a Cluster that replaces a node its own way: the server
// driver wipes a real server's data and lets it join again. Apply replaces
// a node of any other Cluster by a crash and a restart.
type Replacer interface {
	Replace(node string) error
}

// DiskFault is what a power failure or a disk fault does to a node's
// disk, as a PowerFailer or a Disker carries it out.
type DiskFault struct {
	// PowerFail is a power failure's loss (a crash's).
	PowerFail PowerFail
	// Mode, Files, Bits, Zero, Truncate, Delay and Ops are a disk
	// fault's (Fault's fields of the same names; Delay a slow disk's).
	Mode           DiskMode
	Files          string
	Bits           int
	Zero, Truncate int64
	Delay          time.Duration
	Ops            string
	// Fault names the occurrence ("faults[0]#1"), for the history.
	Fault string
}

func diskOf(f *Fault, name string) DiskFault {
	return DiskFault{PowerFail: f.PowerFail, Mode: f.DiskMode, Files: f.Files, Bits: f.Bits, Zero: f.Zero,
		Truncate: f.Truncate, Delay: f.Delay, Ops: f.Ops, Fault: name}
}

// PowerFailer is a Cluster whose nodes have disks that know what was
// synced: a power failure of nodes kills every process of each at once,
// all of them first (several nodes are one coordinated failure), then
// loses, on each node's disk, what was not synced, as mode says; the
// nodes stay down until restarted. fault names the occurrence. Apply
// gives it every crash with a PowerFail; a Cluster that is not one gets
// an error.
type PowerFailer interface {
	PowerFail(nodes []string, mode PowerFail, fault string) error
}

// Disker is a Cluster whose nodes' disks take faults: the start (start
// true) and the end of a disk fault on a node. A corrupt fault only
// starts.
type Disker interface {
	Disk(node string, d DiskFault, start bool) error
}

// Config is what a nemesis needs to know of a run.
type Config struct {
	// Nodes are the node ids in ring order.
	Nodes []string
	// Faults are the scenario's faults, each already Checked.
	Faults []Fault
	// Duration is when the heal comes: nothing starts at or after it.
	Duration time.Duration
	// Seed seeds the schedule (one stream per fault) and the fates (one
	// stream for the net).
	Seed int64
	// Latency, Jitter and FIFO are the network's base behaviour.
	Latency time.Duration
	Jitter  time.Duration
	FIFO    bool
	// Spread, when set, places each copy's jitter instead of a draw from
	// the net's stream: it returns where in [0, Jitter) a message on the
	// link falls, as a fraction in [0, 1). The simulator's search
	// strategies order near-simultaneous deliveries with it; nil draws at
	// random.
	Spread func(l Link) float64
}

// The seeded streams: the net's, and each fault's schedule (the stream's
// number plus the fault's index).
const (
	netStream      = 0x6e6574
	scheduleStream = 0x7363686564 << 16
)

// Action is one step of the nemesis: a fault's start or end, on nodes.
type Action struct {
	// At is when the action was due (for a triggered fault, the time of the
	// event that fired it).
	At    time.Duration
	Kind  Kind
	Phase string // history.PhaseStart or history.PhaseEnd
	// Name says which fault of the scenario and which occurrence:
	// "faults[2]#1". A start and its end share it.
	Name string
	// Nodes are the nodes it acts on (for link faults, whose links).
	Nodes []string
	// Detail says what the fault does, for people.
	Detail string
	// Skip, when set, says why the action does nothing (its target has no
	// node to hit); the driver logs it and neither records nor applies it.
	Skip string

	rate float64
	skew Skew
	rule *rule
	disk DiskFault
}

func (a Action) String() string {
	s := fmt.Sprintf("%s %s %s %v", a.Name, a.Kind, a.Phase, a.Nodes)
	if a.Detail != "" {
		s += " (" + a.Detail + ")"
	}
	if a.Skip != "" {
		s += ": skipped, " + a.Skip
	}
	return s
}

// Event is the history event that records the action.
func (a Action) Event() history.Event {
	return history.Event{Kind: history.KindNemesis, What: string(a.Kind), Phase: a.Phase, Nodes: a.Nodes, Name: a.Name, Detail: a.Detail}
}

// Nemesis is the fault model of one run: the schedule of every fault, the
// triggers waiting for the history, the faults in force, its view of the
// cluster, and the net that decides each message's fate. It is pure and not
// safe for concurrent use: the driver serialises calls, and passes the time
// in (times count from the run's zero).
//
// Apply is the one exception that a driver with concurrent senders may
// split: for a process action it only calls the Cluster, touching no state
// of the nemesis, so it may run without the lock that guards Decide.
type Nemesis struct {
	cfg    Config
	net    *Net
	view   *view
	faults []*faultState
	plan   items
	seq    uint64
	active []*instance
	healed bool
	// clockOwner is the clock fault occurrence whose skew each node's
	// clocks hold ("" for none).
	clockOwner map[string]string
	// first is when the driver first asked what was due (Due), and asked
	// is whether it has: a fault due before then (real servers not yet
	// ready) starts then, late, and lasts its whole length from then;
	// one due later keeps its planned end, however late its start.
	first time.Duration
	asked bool
}

type faultState struct {
	f     *Fault
	index int
	rng   *rand.Rand
	count int
	fired bool
}

// instance is a fault in force: started, not yet ended.
type instance struct {
	fs     *faultState
	name   string
	nodes  []string
	detail string
}

// New builds the nemesis of a run and plans every timed occurrence.
func New(cfg Config) *Nemesis {
	n := &Nemesis{
		cfg:  cfg,
		net:  NewNet(cfg.Latency, cfg.Jitter, cfg.FIFO, rand.New(rand.NewPCG(uint64(cfg.Seed), netStream))),
		view: newView(cfg.Nodes),

		clockOwner: map[string]string{},
	}
	n.net.Spread = cfg.Spread
	for i := range cfg.Faults {
		fs := &faultState{f: &cfg.Faults[i], index: i, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), scheduleStream+uint64(i)))}
		n.faults = append(n.faults, fs)
		if fs.f.When != nil {
			continue
		}
		for _, t := range Occurrences(fs.f, cfg.Duration, fs.rng) {
			n.push(t, fs, nil)
		}
	}
	return n
}

// Occurrences are the start times of a timed fault before duration, drawn
// from rng when the gaps are random.
func Occurrences(f *Fault, duration time.Duration, rng *rand.Rand) []time.Duration {
	var out []time.Duration
	for t := f.At; t < duration; {
		out = append(out, t)
		if f.Every <= 0 {
			break
		}
		gap := f.Every
		if f.Random {
			gap = f.For + time.Duration(rng.Int64N(int64(2*(f.Every-f.For))))
		}
		t += gap
	}
	return out
}

// Next is the time of the next planned action; false when there is none.
func (n *Nemesis) Next() (time.Duration, bool) {
	if n.healed || len(n.plan) == 0 {
		return 0, false
	}
	return n.plan[0].at, true
}

// Due returns the planned actions due at or before now, in time order (ends
// before starts at the same time), with their targets resolved.
func (n *Nemesis) Due(now time.Duration) []Action {
	var out []Action
	if !n.asked {
		n.first, n.asked = now, true
	}
	for !n.healed && len(n.plan) > 0 && n.plan[0].at <= now {
		it := heap.Pop(&n.plan).(*item)
		if it.end != nil {
			out = append(out, n.end(it.end, it.at))
		} else {
			out = append(out, n.start(it.fs, it.at, max(it.at, n.first), ""))
		}
	}
	return out
}

// Observe tells the nemesis of a history event (Relevant ones suffice) and
// returns the actions of the triggers it fires. Events at or after the
// duration fire nothing.
func (n *Nemesis) Observe(e history.Event) []Action {
	n.view.observe(&e)
	if n.healed || time.Duration(e.Time) >= n.cfg.Duration {
		return nil
	}
	var out []Action
	for _, fs := range n.faults {
		w := fs.f.When
		if w == nil || fs.fired || time.Duration(e.Time) < fs.f.At || !w.Match(&e) {
			continue
		}
		fs.fired = true
		out = append(out, n.start(fs, time.Duration(e.Time), time.Duration(e.Time), fmt.Sprintf("on %s (event %d)", w, e.Index)))
	}
	return out
}

// Triggered reports whether any fault is armed on a trigger: only then
// may an observed event start a fault, rather than update the view that
// targets are resolved in.
func (n *Nemesis) Triggered() bool {
	for _, fs := range n.faults {
		if fs.f.When != nil {
			return true
		}
	}
	return false
}

// See tells the nemesis of a history event as Observe does, for a run
// with no trigger (Triggered is false): the view that resolves targets
// learns of it, and nothing can fire.
func (n *Nemesis) See(e *history.Event) { n.view.observe(e) }

// Unfired are the faults armed on a trigger that no event has fired, in
// the scenario's order, each as people read it: "faults[2] (pause on
// report leader, armed at 1s)". A fault whose trigger fired is not one,
// even when its start found no target (Action.Skip says so). At the heal,
// they are the faults that never happened: nothing in the run set off
// their trigger.
func (n *Nemesis) Unfired() []string {
	var out []string
	for _, fs := range n.faults {
		if fs.f.When != nil && !fs.fired {
			out = append(out, fmt.Sprintf("faults[%d] (%s on %s, armed at %s)", fs.index, fs.f.Kind, fs.f.When, fs.f.At))
		}
	}
	return out
}

// Relevant reports whether the nemesis needs to observe e: process events,
// reports, and the ends of lock operations (who holds the lock). A driver
// may filter the rest out.
func Relevant(e *history.Event) bool {
	switch e.Kind {
	case history.KindProcess, history.KindReport:
		return true
	case history.KindOp:
		return (e.F == fAcquire || e.F == fRelease) && e.Type != history.OpInvoke
	}
	return false
}

// Match reports whether e fires the trigger.
func (t *Trigger) Match(e *history.Event) bool {
	switch {
	case t.Report != "":
		if e.Kind != history.KindReport || e.What != t.Report || (t.Value != "" && e.Value != t.Value) {
			return false
		}
	case t.Process != "":
		if e.Kind != history.KindProcess || e.What != t.Process {
			return false
		}
	case t.Op != "":
		if e.Kind != history.KindOp || e.F != t.Op || e.Type != history.OpOK {
			return false
		}
	default:
		return false
	}
	return t.Node == "" || e.Node == t.Node
}

// Heal ends every fault in force, in the order they started, and stops
// the schedule and the triggers. Crashes without a duration are not undone
// (the node stays down), nor is a timely fault (its links stay timely).
func (n *Nemesis) Heal(now time.Duration) []Action {
	var out []Action
	for len(n.active) > 0 {
		out = append(out, n.end(n.active[0], now))
	}
	n.healed = true
	n.plan = nil
	return out
}

// Decide returns the fate of a message sent at now (see Net.Decide).
func (n *Nemesis) Decide(m Msg, now time.Duration) Fate { return n.net.Decide(m, now) }

// DecideInto is Decide reusing buf for the copies (see Net.DecideInto).
func (n *Nemesis) DecideInto(buf []Copy, m Msg, now time.Duration) Fate {
	return n.net.DecideInto(buf, m, now)
}

// Port is l's state in the net, for a carrier to hand back with each
// message on l (Msg.Port, Net.Port).
func (n *Nemesis) Port(l Link) *Port { return n.net.Port(l) }

// Cut is how the partitions in force cut l (see Net.Cut).
func (n *Nemesis) Cut(l Link) CutKind { return n.net.Cut(l) }

// Alters reports whether Decide may alter the body of a message on l (see
// Net.Alters).
func (n *Nemesis) Alters(l Link) bool { return n.net.Alters(l) }

// Sized reports whether Decide needs a message's size on l (see
// Net.Sized).
func (n *Nemesis) Sized(l Link) bool { return n.net.Sized(l) }

// Apply carries out an action: a process action on the cluster, a link
// action on the net. A skipped action does nothing.
func (n *Nemesis) Apply(a Action, c Cluster) error {
	if a.Skip != "" {
		return nil
	}
	if !a.Kind.OnProcess() {
		if a.Phase == history.PhaseStart {
			if a.rule != nil {
				n.net.add(a.rule)
			}
		} else {
			n.net.remove(a.Name)
		}
		return nil
	}
	var errs []error
	each := func(op string, fn func(string) error) {
		for _, node := range a.Nodes {
			if err := fn(node); err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", op, node, err))
			}
		}
	}
	start := a.Phase == history.PhaseStart
	switch {
	case a.Kind == Crash && start && a.disk.PowerFail != "":
		pf, ok := c.(PowerFailer)
		if !ok {
			errs = append(errs, errors.New("this driver has no disk to fail: a power failure needs coup's storage layer or a Machine's storage"))
			break
		}
		if err := pf.PowerFail(a.Nodes, a.disk.PowerFail, a.Name); err != nil {
			errs = append(errs, fmt.Errorf("power failure %v: %w", a.Nodes, err))
		}
	case a.Kind == Crash && start:
		each("crash", c.Crash)
	case a.Kind == Disk:
		dk, ok := c.(Disker)
		if !ok {
			errs = append(errs, errors.New("this driver has no disk to fault: a disk fault needs coup's storage layer or a Machine's storage"))
			break
		}
		d := a.disk
		d.Fault = a.Name
		each("disk", func(node string) error { return dk.Disk(node, d, start) })
	case a.Kind == Crash, a.Kind == Restart:
		each("restart", c.Restart)
	case a.Kind == Replace:
		if rp, ok := c.(Replacer); ok {
			each("replace", rp.Replace)
			break
		}
		each("replace", func(node string) error {
			if err := c.Crash(node); err != nil {
				return err
			}
			return c.Restart(node)
		})
	case a.Kind == Pause && start:
		each("pause", c.Pause)
	case a.Kind == Pause, a.Kind == Resume:
		each("resume", c.Resume)
	case a.Kind == Clock:
		skew := a.skew
		if !start {
			skew = Skew{Fault: a.Name}
		}
		if cl, ok := c.(Clocker); ok {
			each("clock", func(node string) error { return cl.Clock(node, skew) })
			break
		}
		if skew.Offset != 0 {
			errs = append(errs, errors.New("this driver cannot make a clock jump"))
			break
		}
		rate := skew.Rate
		if rate == 0 {
			rate = 1
		}
		each("clock rate", func(node string) error { return c.ClockRate(node, rate) })
	}
	return errors.Join(errs...)
}

// lasts reports whether an occurrence of f stays in force until it ends.
func lasts(f *Fault) bool {
	switch f.Kind {
	case Restart, Replace, Resume, Timely:
		return false
	case Crash:
		return f.For > 0
	case Clock:
		return !f.Reset
	case Disk:
		return f.DiskMode != DiskCorrupt
	}
	return true
}

// start begins an occurrence of a fault due at at, which lasts from began
// (the same, or later when it was due before the driver could act).
func (n *Nemesis) start(fs *faultState, at, began time.Duration, why string) Action {
	f := fs.f
	fs.count++
	a := Action{At: at, Kind: f.Kind, Phase: history.PhaseStart, Name: fmt.Sprintf("faults[%d]#%d", fs.index, fs.count)}
	var nodes []string
	if f.Kind != Partition || slices.Contains([]Shape{Isolate, Bridge, RingCut}, f.Shape) {
		var skip string
		nodes, skip = n.view.resolve(f.Target, f.Kind, fs.rng)
		if skip != "" {
			a.Skip = skip
			return a
		}
		if f.Shape == Bridge {
			nodes = nodes[:1]
		}
	}
	a.Nodes = nodes
	a.Detail = describe(f)
	a.disk = diskOf(f, a.Name)
	switch f.Kind {
	case Clock:
		a.rate = f.Rate
		a.skew = Skew{Offset: f.Offset, Rate: f.Rate, Clocks: f.Clocks, Fault: a.Name}
		for _, node := range nodes {
			n.clockOwner[node] = a.Name
			if f.Reset {
				n.clockOwner[node] = ""
			}
		}
	case Partition:
		l := cuts(f, n.cfg.Nodes, nodes, fs.rng)
		a.rule = &rule{name: a.Name, kind: Partition, cut: l.cut, refuse: f.Cut == Refuse}
		a.Detail = l.describe
		if f.Cut != "" {
			a.Detail += " (" + string(f.Cut) + ")"
		}
	case Loss, Duplicate, Corrupt, Delay, Bandwidth, Joker, Timely:
		dir := f.Direction
		if f.Kind == Joker {
			dir = Out
		}
		a.rule = &rule{name: a.Name, kind: f.Kind, links: newSelector(nodes, dir), p: f.Probability,
			delay: f.Delay, scale: f.Jitter, dist: f.Distribution, mode: f.Mode, delta: f.Delta}
		if f.Kind == Bandwidth {
			a.rule.rate, a.rule.burst = f.Rate, f.Burst
		}
	}
	if f.For > 0 {
		a.Detail = joinDetail(a.Detail, "for "+f.For.String())
	}
	a.Detail = joinDetail(a.Detail, why)
	if lasts(f) {
		in := &instance{fs: fs, name: a.Name, nodes: nodes, detail: a.Detail}
		n.active = append(n.active, in)
		if end := began + f.For; f.For > 0 && end < n.cfg.Duration {
			n.push(end, fs, in)
		}
	}
	if f.Kind.OnProcess() {
		n.view.act(&a)
	}
	return a
}

// end ends an occurrence in force.
func (n *Nemesis) end(in *instance, at time.Duration) Action {
	n.active = slices.DeleteFunc(n.active, func(x *instance) bool { return x == in })
	f := in.fs.f
	a := Action{At: at, Kind: f.Kind, Phase: history.PhaseEnd, Name: in.name, Nodes: in.nodes, Detail: in.detail}
	a.disk = diskOf(f, in.name)
	var want procState
	switch f.Kind {
	case Clock:
		// Only the nodes whose clocks are still this occurrence's: a
		// later clock fault, or a reset, has taken the others.
		var still []string
		for _, node := range in.nodes {
			if n.clockOwner[node] == in.name {
				still = append(still, node)
				n.clockOwner[node] = ""
			}
		}
		a.Nodes = still
		if len(still) == 0 {
			a.Skip = fmt.Sprintf("nothing to undo: the clocks of %v were set again since", in.nodes)
		}
		return a
	case Pause:
		want = paused
	case Crash:
		want = down
	default:
		return a
	}
	// Undo only what is still so: a node resumed or restarted by another
	// fault meanwhile is left alone.
	var still []string
	for _, node := range in.nodes {
		if n.view.state[node] == want {
			still = append(still, node)
		}
	}
	a.Nodes = still
	if len(still) == 0 {
		a.Skip = fmt.Sprintf("nothing to undo: %v no longer %s", in.nodes, want)
		return a
	}
	n.view.act(&a)
	return a
}

func describe(f *Fault) string {
	switch f.Kind {
	case Clock:
		return describeClock(f)
	case Loss, Duplicate:
		return fmt.Sprintf("p=%g %s", f.Probability, f.Direction)
	case Corrupt:
		return fmt.Sprintf("%s p=%g %s", f.Mode, f.Probability, f.Direction)
	case Delay:
		return fmt.Sprintf("delay %s jitter %s %s %s", f.Delay, f.Jitter, f.Distribution, f.Direction)
	case Bandwidth:
		return fmt.Sprintf("%g bytes/s burst %d %s", f.Rate, f.Burst, f.Direction)
	case Joker:
		return "payload altered, sums redone"
	case Timely:
		return fmt.Sprintf("GST: links %s timely within %s", f.Direction, f.Delta)
	case Crash:
		if f.PowerFail != "" {
			return "power failure: " + string(f.PowerFail)
		}
	case Disk:
		return describeDisk(f)
	}
	return ""
}

func describeDisk(f *Fault) string {
	files := ""
	if f.Files != "" {
		files = " of " + f.Files
	}
	switch f.DiskMode {
	case DiskCorrupt:
		switch {
		case f.Bits > 0:
			return fmt.Sprintf("corrupt: %d bits flipped%s", f.Bits, files)
		case f.Zero > 0:
			return fmt.Sprintf("corrupt: %d bytes zeroed in each file%s", f.Zero, files)
		}
		return fmt.Sprintf("corrupt: %d bytes cut off each file%s", f.Truncate, files)
	case DiskSlow:
		return fmt.Sprintf("slow: each write and sync waits %s", f.Delay)
	case DiskEIO:
		return fmt.Sprintf("eio: %s fail%s", map[string]string{"read": "reads", "write": "writes", "both": "reads and writes"}[f.Ops], files)
	}
	return string(f.DiskMode) + ": writes fail with ENOSPC"
}

func describeClock(f *Fault) string {
	if f.Reset {
		return "reset: clocks right"
	}
	var parts []string
	if f.Offset != 0 {
		sign := "+"
		if f.Offset < 0 {
			sign = ""
		}
		parts = append(parts, "offset "+sign+f.Offset.String())
	}
	if f.Rate != 0 {
		parts = append(parts, fmt.Sprintf("rate %g", f.Rate))
	}
	if f.Clocks != BothClocks && f.Clocks != "" {
		parts = append(parts, string(f.Clocks)+" only")
	}
	return strings.Join(parts, ", ")
}

func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return strings.Join([]string{a, b}, "; ")
}

// item is a planned action: a start (end nil) or the end of an instance.
type item struct {
	at  time.Duration
	seq uint64
	fs  *faultState
	end *instance
}

func (n *Nemesis) push(at time.Duration, fs *faultState, end *instance) {
	n.seq++
	heap.Push(&n.plan, &item{at: at, seq: n.seq, fs: fs, end: end})
}

type items []*item

func (h items) Len() int { return len(h) }
func (h items) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if (a.end != nil) != (b.end != nil) {
		return a.end != nil // ends first
	}
	return a.seq < b.seq
}
func (h items) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *items) Push(x any)   { *h = append(*h, x.(*item)) }
func (h *items) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// InForce is a nemesis over nodes whose link faults are all in force from
// the run's zero and never end, with no base latency: for a carrier's
// tests, which ask it for fates without a schedule. Each fault is Checked
// first; a process fault is refused.
func InForce(nodes []string, faults ...Fault) (*Nemesis, error) {
	const forever = 1 << 62
	for i := range faults {
		if faults[i].Kind.OnProcess() {
			return nil, fmt.Errorf("faults[%d]: %s is a process fault, not a link's", i, faults[i].Kind)
		}
		if err := faults[i].Check(nodes, forever); err != nil {
			return nil, fmt.Errorf("faults[%d]: %w", i, err)
		}
	}
	n := New(Config{Nodes: nodes, Faults: faults, Duration: forever})
	for _, a := range n.Due(0) {
		if err := n.Apply(a, nil); err != nil {
			return nil, err
		}
	}
	return n, nil
}
