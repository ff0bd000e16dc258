package servers

import (
	"errors"
	"fmt"
	"os/exec"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/clockfault"
	"github.com/coupharness/coup/nemesis"
)

var _ nemesis.Clocker = (*run)(nil)

// Clock skews the clocks of every process of a server's host (Host.Pids:
// its cgroup's, its namespace's, or its process group's), or puts them
// right (nemesis.Clocker), and records what their reads saw. A server
// that is down gets the skew when it starts again.
func (r *run) Clock(node string, sk nemesis.Skew) error {
	if _, ok := r.adapters.client(node); ok {
		return errors.New("a client process's clock is not skewed yet: target the servers")
	}
	s, err := r.server(node)
	if err != nil {
		return err
	}
	return s.clock.Set(sk, s.host.Pids(), func(e history.Event) {
		e.Node = node
		r.Record(e)
	})
}

// clockStarted puts the skew in force, if any, into the processes of a
// server that has just started.
func (s *server) clockStarted() {
	if !s.clock.Active() {
		return
	}
	pids := s.host.Pids()
	if len(pids) == 0 {
		return
	}
	if err := s.clock.Started(pids); err != nil {
		s.r.logf("%s: clock: %v", s.id, err)
	}
}

// checkClock refuses, before any server starts, a run whose clock faults
// cannot reach the servers' processes, with the reason.
func (r *run) checkClock() error {
	has := false
	for _, f := range r.sc.NemesisFaults() {
		has = has || (f.Kind == nemesis.Clock && !f.Reset)
	}
	if !has || len(r.layout.nodes) == 0 {
		return nil
	}
	if err := clockfault.Check(); err != nil {
		return fmt.Errorf("a clock fault cannot be applied here: %w", err)
	}
	rd, err := r.sv.Render(r.layout.nodes[0])
	if err != nil || len(rd.Command) == 0 {
		return nil // the start says what is wrong
	}
	path, err := exec.LookPath(rd.Command[0])
	if err != nil {
		return nil
	}
	if err := clockfault.Reachable(path); err != nil {
		return fmt.Errorf("a clock fault cannot reach the servers: %w", err)
	}
	return nil
}
