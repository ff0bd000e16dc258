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
		pids = groupOf(p.Pid())
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

// groupOf lists the processes of a node's process group when a clock
// fault begins or ends on it (clockfault.Group, which reads the stat file
// of every process on the machine). It is a variable so that a test can
// count its calls: a node's start must make none.
var groupOf = clockfault.Group

// clockStarted puts the clock skew in force, if any, into a new
// incarnation's process. With none in force it does nothing, and with one
// it scans nothing: the process has just been started (proc.Start returns
// once it has executed its program) as the leader of a group of its own,
// so it is the whole group but for what it started in the microseconds
// since. What it starts later gets the skew at the next clock fault on the
// node (Clock, which lists the group).
// A node's start thus costs nothing that grows with the machine's process
// count, which at a thousand nodes made the start quadratic.
func (r *run) clockStarted(m *member, pid int) {
	if !m.clock.Active() {
		return
	}
	if err := m.clock.Started([]int{pid}); err != nil {
		r.logf("%s: clock: %v", m.name, err)
	}
}
