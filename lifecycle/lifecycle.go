package lifecycle

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
)

// Driver carries one run: it starts the nodes, carries every message
// between them (asking the nemesis each one's fate), carries out the
// process faults the nemesis asks for, and stops. Everything else a run
// does is the lifecycle's (Run), the same whatever the driver.
type Driver interface {
	// Crash, Restart, Pause, Resume and ClockRate carry out process
	// faults. Restart returns once the node is up (the simulator runs its
	// virtual clock meanwhile), as a real driver waits for the init
	// handshake.
	nemesis.Cluster
	// Lock and Unlock serialise the lifecycle's use of the nemesis with
	// the driver's own (Decide, for every message). A driver that runs on
	// one goroutine makes them no-ops.
	sync.Locker
	// Start starts every node and does what makes it ready (the init
	// handshake). It calls zero once, at the moment all are up or one has
	// failed: that moment is the run's zero, the origin of the history's
	// times and of every time the console shows, and zero records the
	// meta event there, before any node's start. took is how long the
	// start took on the real clock (0 on a virtual one), which the
	// console's "nodes up" line shows. A Start that fails calls it too,
	// and returns why (ErrNodeStart, wrapped), or ErrInterrupted (wrapped
	// or not) when ctx ended first.
	Start(ctx context.Context, zero func(took time.Duration)) error
	// Begin starts the workload's clients. The lifecycle calls it once the
	// faults due at the start are carried out.
	Begin()
	// Now is the time since the run's zero.
	Now() time.Duration
	// Wait lets the nodes, the network and the clients run until t, or
	// until the run has events for the nemesis to observe (Run.Pending and
	// Run.Woken say so). It reports false if ctx ended first.
	Wait(ctx context.Context, t time.Duration) bool
	// Stop stops the clients and every node, and returns the counters
	// that the end event carries (history.Count*).
	Stop() map[string]int64
	// Close ends the history (nothing is recorded after it) and returns
	// it, as the checks read it.
	Close() (*history.History, error)
	// Record records an event in the history and returns it as recorded,
	// with its index and time.
	Record(e history.Event) history.Event
	// Logf writes a line to the run's log, stamped now. Progress writes
	// a line there and shows it to whoever watches the run (coup run's
	// console), stamped at, a time on the history's clock: the time of
	// the event it is about, so that the console and the history give
	// one moment the same time.
	Logf(format string, args ...any)
	Progress(at time.Duration, format string, args ...any)
}

// Hold keeps planned faults back and releases them later: the
// simulator's bias strategy moves them to the moments a node's belief
// changes. A run without one carries out every fault when it is due.
type Hold interface {
	// Filter takes the actions due at now, and the events observed since
	// the last call, and returns the actions to carry out now.
	Filter(due []nemesis.Action, now time.Duration, seen []history.Event) []nemesis.Action
	// Next is when a held action is next released.
	Next() (time.Duration, bool)
	// Flush releases every held action, at the end of the run.
	Flush() []nemesis.Action
}

// Config is what the lifecycle needs of a run besides its driver.
type Config struct {
	// Nemesis is the run's nemesis; the driver decides every message's
	// fate with it, under the driver's lock.
	Nemesis *nemesis.Nemesis
	// Meta, when set, is recorded at the run's zero (RunMeta).
	Meta *history.Meta
	// Duration is when every fault is healed; Recovery how long the run
	// goes on after the heal.
	Duration, Recovery time.Duration
	// Hold, when set, keeps planned faults back (nil: none is held).
	Hold Hold
	// OneGoroutine says the driver records every event on the goroutine
	// that runs the lifecycle, between its steps (the simulator). In a run
	// with no trigger and no Hold, the nemesis then sees each event as it
	// is recorded, and no event is queued: nothing observed can start a
	// fault, so the step an event would wake could do nothing.
	OneGoroutine bool
}

// ErrNodeStart marks a run whose nodes did not all start or answer
// init: the node program is missing or does not speak the protocol, a
// server did not come up, or coup could not set up what the nodes need.
// Nothing ran, so nothing is judged: the history's unstarted event says
// why.
var ErrNodeStart = errors.New("a node failed to start")

// ErrInterrupted is a run's error when its context ended before the run
// did; before every node was up, nothing ran and nothing is judged.
var ErrInterrupted = errors.New("interrupted")

// Run is one run's lifecycle: start, the workload and the faults until the
// duration, the heal, the recovery window, the stop and the end event. Its
// driver builds it (New) and hands it every event it records (Watch).
type Run struct {
	cfg Config
	d   Driver

	mu   sync.Mutex
	seen []history.Event // recorded events the nemesis has yet to observe
	// spare is the slice the last take returned, which seen becomes at
	// the next: a step is done with what it took before the next takes,
	// so that the events watched between steps go into an array already
	// made rather than one grown from nothing each step.
	spare    []history.Event
	watching bool
	// direct is set when the nemesis sees each event in Watch, on the
	// driver's goroutine, instead of at the next step (Config.OneGoroutine).
	direct bool
	wake   chan struct{}
	// pending is len(seen) > 0, set and cleared under mu: the simulator
	// asks after every item it runs, so it costs a load, not a lock.
	pending atomic.Bool

	started, begun, finished bool
	startErr                 error
	skipped                  int64 // fault occurrences with no target
	unfired                  int64 // faults armed on a trigger that nothing fired
}

// New returns the lifecycle of a run that d carries.
func New(d Driver, cfg Config) *Run {
	r := &Run{cfg: cfg, d: d, watching: true, direct: cfg.OneGoroutine && cfg.Hold == nil && !cfg.Nemesis.Triggered()}
	if !cfg.OneGoroutine {
		r.wake = make(chan struct{}, 1) // a driver on one goroutine never waits on it
	}
	return r
}

// Watch hands the run an event the driver recorded: the nemesis observes
// it at its next step (its triggers fire there). The driver calls it for
// every event, in the order recorded, and may call it under its
// recorder's lock: it only queues the event and signals Woken.
func (r *Run) Watch(e *history.Event) {
	if !nemesis.Relevant(e) {
		return
	}
	if r.direct {
		// The view alone learns of it, at once: no copy, no lock, no
		// step woken (a step would observe it and find nothing due).
		if r.watching {
			r.cfg.Nemesis.See(e)
		}
		return
	}
	r.mu.Lock()
	if !r.watching {
		r.mu.Unlock()
		return
	}
	r.seen = append(r.seen, *e)
	r.pending.Store(true)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Pending reports whether events wait for the nemesis to observe them:
// a driver's Wait returns then.
func (r *Run) Pending() bool { return r.pending.Load() }

// Woken is signalled when an event is queued for the nemesis: a driver
// that waits on a real clock selects on it.
func (r *Run) Woken() <-chan struct{} { return r.wake }

// Sleep is a real-time driver's Wait: it sleeps for d, or until an event
// is queued for the nemesis (Woken), or until ctx ends, when it reports
// false.
func (r *Run) Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-r.wake:
	case <-ctx.Done():
		return false
	}
	return true
}

func (r *Run) take() []history.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.seen
	clear(r.spare) // drop the events of two steps ago
	r.seen, r.spare = r.spare[:0], out
	r.pending.Store(false)
	return out
}

// unwatch ends the watch: after the heal no trigger can fire.
func (r *Run) unwatch() {
	r.mu.Lock()
	r.watching = false
	r.seen, r.spare = nil, nil
	r.pending.Store(false)
	r.mu.Unlock()
}

// Start starts every node through the driver; the meta event is recorded
// at the run's zero. A start that fails is recorded too: the meta event
// (if the driver failed before its zero), then an unstarted event that
// says why, so that whoever reads the history (coup run, coup check) knows
// the run did not start, and why. It does its work once; a start that
// failed is not tried again.
func (r *Run) Start(ctx context.Context) error {
	if r.started {
		return r.startErr
	}
	r.started = true
	zeroed := false
	var took time.Duration
	zero := func(t time.Duration) {
		zeroed, took = true, t
		if r.cfg.Meta != nil {
			r.d.Record(history.Event{Kind: history.KindMeta, Meta: r.cfg.Meta})
		}
	}
	r.startErr = r.d.Start(ctx, zero)
	if !zeroed {
		zero(0) // a driver that failed before its zero: the history still begins with its meta event
	}
	if r.startErr != nil {
		u := unstartedEvent(r.startErr)
		r.d.Record(u)
		r.d.Logf("the run did not start (%s): %s", u.What, u.Detail)
		return r.startErr
	}
	if took > 0 {
		r.d.Progress(r.d.Now(), "nodes up after %s; running for %s", took.Round(time.Millisecond), r.cfg.Duration)
	} else {
		r.d.Progress(r.d.Now(), "nodes up; running for %s", r.cfg.Duration)
	}
	return nil
}

// unstartedEvent is the unstarted event of a run whose start ended with err:
// interrupted when err is ErrInterrupted, failed otherwise, with err's
// text (less ErrNodeStart's, which the event's kind says) as its detail.
func unstartedEvent(err error) history.Event {
	e := history.Event{Kind: history.KindUnstarted, What: history.UnstartedFailed, Detail: err.Error()}
	switch {
	case err == ErrInterrupted:
		e.What, e.Detail = history.UnstartedInterrupted, "interrupted before every node was up"
	case errors.Is(err, ErrInterrupted):
		e.What = history.UnstartedInterrupted
	default:
		e.Detail = strings.TrimPrefix(e.Detail, ErrNodeStart.Error()+": ")
	}
	return e
}

// Until drives the nemesis until t, while the driver runs everything else:
// at each step the nemesis observes what was recorded (its triggers fire),
// the actions due are carried out in order (the workload's clients start
// once those due at the start are), and the driver waits until the next
// planned action, the next observed event or t. Nothing the nemesis plans
// lies at or after the duration, so past it the nemesis only finishes
// what was due, late: a slow driver changes when a fault happens, never
// whether.
func (r *Run) Until(ctx context.Context, t time.Duration) error {
	if err := r.Start(ctx); err != nil {
		return err
	}
	for {
		now := r.d.Now()
		if r.step(now) {
			continue // what they did may fire triggers, and time has passed
		}
		if !r.begun {
			r.begun = true
			r.d.Begin()
			continue // time has passed
		}
		if now >= t {
			return nil
		}
		wake := t
		if at, ok := r.next(); ok && at < wake {
			wake = at
		}
		if !r.d.Wait(ctx, wake) {
			return ErrInterrupted
		}
	}
}

// step lets the nemesis observe what was recorded and carries out what is
// due at now. It reports whether it carried out anything.
func (r *Run) step(now time.Duration) bool {
	now = min(now, r.cfg.Duration)
	nem := r.cfg.Nemesis
	r.d.Lock()
	seen := r.take()
	var acts []nemesis.Action
	for i := range seen {
		acts = append(acts, nem.Observe(seen[i])...)
	}
	due := nem.Due(now)
	if r.cfg.Hold != nil {
		due = r.cfg.Hold.Filter(due, now, seen)
	}
	acts = append(acts, due...)
	r.d.Unlock()
	if len(acts) == 0 {
		return false
	}
	r.carryOut(acts)
	return true
}

// next is when the nemesis next has something to do: its next planned
// action, or the release of a held one.
func (r *Run) next() (time.Duration, bool) {
	r.d.Lock()
	at, ok := r.cfg.Nemesis.Next()
	r.d.Unlock()
	if r.cfg.Hold != nil {
		if b, bok := r.cfg.Hold.Next(); bok && (!ok || b < at) {
			at, ok = b, true
		}
	}
	return at, ok
}

// carryOut records and applies actions in order. A process action runs
// outside the driver's lock (a real driver waits for processes, whose
// output it handles under that lock). A link action is recorded and
// changes the net under the lock, so that every message recorded after
// its event, and none before, meets the changed net. An action that found
// no target is logged and counted (history.CountFaultsSkipped).
func (r *Run) carryOut(acts []nemesis.Action) {
	for _, a := range acts {
		if a.Skip != "" {
			r.d.Logf("nemesis: %s", a)
			if a.Phase == history.PhaseStart {
				r.skipped++
				r.d.Progress(r.d.Now(), "nemesis: %s (due at %s)", a, a.At)
			}
			continue
		}
		// The line shows the event's time as recorded, before the action
		// was applied, and is written then, so that harness.log stays in
		// time order: a restart returns once the node is up, later, and
		// what it logs meanwhile comes after its line.
		var err error
		if a.Kind.OnProcess() {
			e := r.d.Record(a.Event())
			r.d.Progress(time.Duration(e.Time), "nemesis: %s (due at %s)", a, a.At)
			err = r.cfg.Nemesis.Apply(a, r.d)
		} else {
			r.d.Lock()
			e := r.d.Record(a.Event())
			r.d.Progress(time.Duration(e.Time), "nemesis: %s (due at %s)", a, a.At) // the log is a leaf: it takes no lock of the driver's
			err = r.cfg.Nemesis.Apply(a, r.d)
			r.d.Unlock()
		}
		if err != nil {
			r.d.Logf("nemesis: %s: %v", a, err)
		}
	}
}

// Finish ends the run: the nemesis runs until the duration if it has not
// yet (what was due is carried out, late), held faults are released, every
// fault in force is healed, the recovery window (counted from the end of
// the heal, so that every nemesis event is at least a window before the
// run's end) is waited out, the driver stops, and the end event is
// recorded with the counters. A run that did not start, or was
// interrupted, only stops: its history has no end event.
func (r *Run) Finish(ctx context.Context) error {
	if r.finished {
		return nil
	}
	r.finished = true
	err := r.Until(ctx, r.cfg.Duration)
	if err == nil {
		err = r.heal(ctx)
	}
	counts := r.d.Stop()
	if err != nil {
		return err
	}
	if r.skipped > 0 || r.unfired > 0 {
		if counts == nil {
			counts = map[string]int64{}
		}
		if r.skipped > 0 {
			counts[history.CountFaultsSkipped] += r.skipped
		}
		if r.unfired > 0 {
			counts[history.CountFaultsUnfired] += r.unfired
		}
	}
	r.d.Record(history.Event{Kind: history.KindEnd, Counts: counts})
	return nil
}

// heal releases what the hold keeps, says which faults armed on a trigger
// never fired (history.CountFaultsUnfired counts them), ends every fault
// in force and waits out the recovery window.
func (r *Run) heal(ctx context.Context) error {
	if r.cfg.Hold != nil {
		r.carryOut(r.cfg.Hold.Flush())
	}
	r.unwatch()
	r.d.Lock()
	unfired := r.cfg.Nemesis.Unfired()
	acts := r.cfg.Nemesis.Heal(r.d.Now())
	r.d.Unlock()
	for _, u := range unfired {
		r.d.Progress(r.d.Now(), "nemesis: %s never fired: no event before the heal matched its trigger", u)
	}
	r.unfired = int64(len(unfired))
	r.d.Progress(r.d.Now(), "healing %d faults in force", countStarts(acts))
	r.carryOut(acts)
	healed := max(r.d.Now(), r.cfg.Duration)
	r.d.Progress(r.d.Now(), "healed; recovery window %s", r.cfg.Recovery)
	for end := healed + r.cfg.Recovery; r.d.Now() < end; {
		if !r.d.Wait(ctx, end) {
			return ErrInterrupted
		}
	}
	return nil
}

func countStarts(acts []nemesis.Action) int {
	n := 0
	for _, a := range acts {
		if a.Skip == "" {
			n++
		}
	}
	return n
}
