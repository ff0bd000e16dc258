package harness

import (
	"fmt"
	"os/exec"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/clockfault"
	"github.com/coupharness/coup/nemesis"
)

var _ nemesis.Clocker = (*run)(nil)

// Clock skews a node's clocks (nemesis.Clocker). A built-in node's rate
// is its timers' (a control message, as ClockRate); everything else, a
// foreign node's rate and any node's jump, is done to the node's process
// group for real (internal/clockfault), and what its reads saw is
// recorded. A node that is down gets it when it starts again.
func (r *run) Clock(node string, s nemesis.Skew) error {
	m, err := r.member(node)
	if err != nil {
		return err
	}
	real := s
	if r.sc.Command == nil {
		rate := s.Rate
		if rate == 0 {
			rate = 1
		}
		if err := r.ClockRate(node, rate); err != nil {
			return err
		}
		real.Rate = 0
		if real.IsZero() && !m.clock.Active() && !s.IsZero() {
			return nil // a rate alone: the timers have it
		}
	}
	var pids []int
	if p := m.current(); p != nil {
		pids = clockfault.Group(p.Pid())
	}
	return m.clock.Set(real, pids, func(e history.Event) {
		e.Node = node
		r.rec.Record(e)
	})
}

// needsRealClock reports whether the scenario's clock faults are done to
// real processes: any of a foreign node's, a jump of a built-in one's.
func (r *run) needsRealClock() bool {
	for _, f := range r.sc.NemesisFaults() {
		if f.Kind == nemesis.Clock && !f.Reset && (r.sc.Command != nil || f.Offset != 0) {
			return true
		}
	}
	return false
}

// checkClock refuses, before any node starts, a run whose clock faults
// cannot reach its nodes' processes, with the reason.
func (r *run) checkClock() error {
	if !r.needsRealClock() {
		return nil
	}
	if err := clockfault.Check(); err != nil {
		return fmt.Errorf("a clock fault cannot be applied here: %w", err)
	}
	argv := r.nodeArgv()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil // the start says it cannot run it
	}
	if err := clockfault.Reachable(path); err != nil {
		return fmt.Errorf("a clock fault cannot reach the nodes: %w", err)
	}
	return nil
}

// clockStarted puts the clock skew in force, if any, into a new
// incarnation's processes.
func (r *run) clockStarted(m *member, pid int) {
	if err := m.clock.Started(clockfault.Group(pid)); err != nil {
		r.logf("%s: clock: %v", m.name, err)
	}
}
