package sim

import (
	"context"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
)

// driver is the simulator as the lifecycle's driver: one goroutine, a
// virtual clock, and the queue of what is due, run in order. Its process
// faults are the Sim's own (cluster.go).
type driver struct{ *Sim }

var _ lifecycle.Driver = driver{}

// Start records the meta event through zero, at the virtual time 0, and
// starts every node in ring order (lifecycle.Driver). The start takes no
// time: the virtual clock is the history's from the beginning.
func (d driver) Start(_ context.Context, zero func(took time.Duration)) error {
	s := d.Sim
	zero(0)
	if st := s.cfg.Strategy.For(s.cfg.Seed); !st.IsRandom() {
		s.logf("strategy %s (seed %d)", st, s.cfg.Seed)
	}
	for _, n := range s.nodes {
		n.start()
	}
	return nil
}

// Begin starts the workload (lifecycle.Driver).
func (d driver) Begin() { d.cl.w.Start(d.cl) }

// Wait runs the queue in order until t, or until an item recorded
// something the nemesis must observe (lifecycle.Driver). What is due at t
// itself is left: the nemesis goes first at a tie. The context is not
// consulted: a simulated run always ends, and the same seed must give the
// same run.
func (d driver) Wait(_ context.Context, t time.Duration) bool {
	s := d.Sim
	for !s.life.Pending() {
		if s.q.len() == 0 || s.q.next() >= t {
			s.now = max(s.now, t)
			break
		}
		s.step()
	}
	return true
}

// Stop lets the cluster run StopTime more, as a real harness takes that
// long to stop its nodes, then stops the workload and every node and
// counts what is still in flight (lifecycle.Driver).
func (d driver) Stop() map[string]int64 {
	d.Wait(nil, d.now+StopTime)
	d.shutdown()
	return d.cnt.snapshot()
}

// Close flushes the history and returns it (lifecycle.Driver). Log lines
// written after it reach the log at once.
func (d driver) Close() (*history.History, error) {
	d.closed = true
	if err := d.flushLog(); err != nil {
		return nil, err
	}
	return d.history(), d.rec.flush()
}

// Record records an event (lifecycle.Driver).
func (d driver) Record(e history.Event) history.Event { return *d.record(e) }

// Logf writes a line to the simulator's log, stamped with the virtual
// time; Progress writes one stamped at, the time of the event it is about
// (lifecycle.Driver).
func (d driver) Logf(format string, args ...any) { d.logf(format, args...) }
func (d driver) Progress(at time.Duration, format string, args ...any) {
	d.logAt(at, format, args...)
}

// Lock and Unlock do nothing: the simulator decides every fate on the one
// goroutine that runs the lifecycle (lifecycle.Driver).
func (driver) Lock()   {}
func (driver) Unlock() {}
