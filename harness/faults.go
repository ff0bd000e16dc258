package harness

import (
	"context"
	"sync"
	"time"

	"coup/harness/history"
	"coup/nemesis"
)

// inject drives the nemesis from the run's zero until its duration: it
// hands the nemesis every relevant recorded event (its triggers may fire),
// carries out the actions that are due, and sleeps until the next planned
// action or the next event. At the duration it heals every fault.
//
// begin starts the clients once the faults due at the start are carried
// out, so that a fault at 0 is in force before the first request, as in
// the simulator.
func (r *run) inject(ctx context.Context, begin func()) error {
	end := r.sc.Duration.D
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// Once past the duration, what was due before it is still carried
		// out, late, before the heal: a slow driver changes when a fault
		// happens, never whether.
		now := r.now()
		final := now >= end
		if final {
			now = end
		}
		r.router.mu.Lock()
		var acts []nemesis.Action
		for _, e := range r.watch.take() {
			acts = append(acts, r.nem.Observe(e)...)
		}
		acts = append(acts, r.nem.Due(now)...)
		next, planned := r.nem.Next()
		r.router.mu.Unlock()
		if len(acts) > 0 {
			r.carryOut(acts)
			continue // what they did may fire triggers, and time has passed
		}
		if begin != nil {
			begin()
			begin = nil
			continue // time has passed
		}
		if final {
			break
		}
		wake := end
		if planned && next < wake {
			wake = next
		}
		timer.Reset(time.Until(r.zero.Add(wake)))
		select {
		case <-timer.C:
		case <-r.watch.wake:
		case <-ctx.Done():
			return errInterrupted
		}
	}
	r.watch.stop()
	r.router.mu.Lock()
	acts := r.nem.Heal(r.now())
	r.router.mu.Unlock()
	r.progress("healing %d faults in force", countStarts(acts))
	r.carryOut(acts)
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

// carryOut records and applies actions in order. A process action runs
// outside the router's lock (it waits for processes, whose output the
// router handles). A link action is recorded and changes the net under it,
// so that every message recorded after its event, and none before, meets
// the changed net.
func (r *run) carryOut(acts []nemesis.Action) {
	for _, a := range acts {
		if a.Skip != "" {
			r.logf("nemesis: %s", a)
			if a.Phase == history.PhaseStart {
				r.router.mu.Lock()
				r.router.counts[CountFaultsSkipped]++
				r.router.mu.Unlock()
				r.progress("nemesis: %s (due at %s)", a, a.At)
			}
			continue
		}
		var err error
		if a.Kind.OnProcess() {
			r.rec.Record(a.Event())
			err = r.nem.Apply(a, r)
		} else {
			r.router.mu.Lock()
			r.rec.Record(a.Event())
			err = r.nem.Apply(a, r)
			r.router.mu.Unlock()
		}
		if err != nil {
			r.logf("nemesis: %s: %v", a, err)
		}
		r.progress("nemesis: %s (due at %s)", a, a.At)
	}
}

// now is the time since the run's zero.
func (r *run) now() time.Duration { return time.Since(r.zero) }

// watcher hands the recorder's events to the nemesis driver. Its push runs
// under the recorder's lock, so it only queues the event and signals; the
// driver takes the queue when it wakes.
type watcher struct {
	mu      sync.Mutex
	events  []history.Event
	stopped bool
	wake    chan struct{}
}

func newWatcher() *watcher { return &watcher{wake: make(chan struct{}, 1)} }

func (w *watcher) push(e history.Event) {
	if !nemesis.Relevant(&e) {
		return
	}
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.events = append(w.events, e)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) take() []history.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.events
	w.events = nil
	return out
}

// stop ends the watch: after the heal no trigger can fire.
func (w *watcher) stop() {
	w.mu.Lock()
	w.stopped = true
	w.events = nil
	w.mu.Unlock()
}
