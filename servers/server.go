package servers

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/clockfault"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/internal/storage"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// server is one node of the run: its template data and its host, where
// its server and sidecars run (Host). The process faults below act on
// the host and record what they did.
type server struct {
	r    *run
	id   string
	data *scenario.ServerNode
	host Host
	// clock is the clock skew in force on its host's processes, kept
	// across incarnations.
	clock clockfault.Node
	// disk is the node's storage layer, its data folder's mount (nil for
	// a plain folder: disk.go).
	disk *storage.Layer
	// startRecorded is set once the current incarnation's start is in
	// the history (starting).
	startRecorded bool
}

var (
	errDown   = errors.New("the node is down")
	errUp     = errors.New("the node is up")
	errPaused = errors.New("already paused")
	errActive = errors.New("not paused")
)

func newServer(r *run, node *scenario.ServerNode) *server {
	s := &server{r: r, id: node.ID, data: node}
	s.host = newHost(node, r.sv, r.dir, r.iso, hostEvents{
		line: func(patterns []scenario.Pattern, line []byte, file string, n int) {
			r.obs.line(s.id, patterns, line, file, n)
		},
		starting:      s.starting,
		exited:        s.exited,
		sidecarExited: s.sidecarExited,
		launched:      s.clockStarted,
		written:       s.written,
		logf:          r.logf,
		progress:      r.progress,
	})
	if lh, ok := s.host.(*localHost); ok {
		lh.enter, lh.dial = r.enter(node.ID), r.dialer(node.ID)
	}
	return s
}

// pid is the process group of the node's host on this machine (0 when it
// is down, or elsewhere): attribution by process looks for it.
func (s *server) pid() int {
	if g, ok := s.host.(interface{ group() int }); ok {
		return g.group()
	}
	return 0
}

func (s *server) incarnation() int { return s.host.Incarnation() }

// start starts the node's host: its files written, its processes started
// and each accepting connections on its ready port.
func (s *server) start(ctx context.Context, existing bool) error {
	if existing {
		s.data.State = "existing"
	}
	s.r.obs.started(s.id)
	if err := s.mountDisk(); err != nil {
		s.r.obs.ended(s.id)
		return err
	}
	if err := s.host.Start(ctx); err != nil {
		s.r.obs.ended(s.id)
		return err
	}
	s.clockStarted() // what a wrapper started meanwhile
	return nil
}

// exited records a host whose server exited on its own, with the end of
// its log, and says so at once: a finding (see verdict.Exit).
func (s *server) exited(inc int, detail string) {
	s.r.obs.ended(s.id)
	s.r.hostDown()
	s.r.processExited(history.Event{Kind: history.KindProcess, Node: s.id, What: history.ProcExit, Incarnation: inc, Detail: detail}, s.id+".log")
}

// sidecarExited records a process of a node's host that is not its server
// (a sidecar) that exited on its own: the host runs on without it, and
// the exit is a finding all the same.
func (s *server) sidecarExited(name, detail string) {
	s.r.processExited(history.Event{Kind: history.KindProcess, Node: s.id, What: history.ProcPartExit, Name: "sidecar " + name, Detail: detail}, s.id+"."+name+".log")
	s.r.logf("%s runs on without its sidecar %s until its next start", s.id, name)
}

// processExited records a process's own exit e with the last lines of its
// log (log, in the run's folder) and says it on the console at once.
func (r *run) processExited(e history.Event, log string) {
	e.Tail, _ = console.LastLines(filepath.Join(r.dir, log))
	e.Time = int64(r.Now())
	for _, l := range verdict.ExitLines(&e) {
		r.progress("%s", l)
	}
	r.observed(e)
}

// end stops every process of the node's host (SIGKILL, a paused one
// too), waits until all are gone and their output read, and records why
// it ended.
func (s *server) end(why string) bool {
	s.r.obs.ended(s.id)
	inc := s.host.Incarnation()
	if !s.host.Stop() {
		return false
	}
	s.r.Record(history.Event{Kind: history.KindProcess, Node: s.id, What: why, Incarnation: inc})
	return true
}

func (r *run) server(node string) (*server, error) {
	s, ok := r.byID[node]
	if !ok {
		return nil, fmt.Errorf("%w %q", errNoNode, node)
	}
	return s, nil
}

// Crash kills every process of a node's host at once (SIGKILL) and waits
// until all are gone (nemesis.Cluster).
func (r *run) Crash(node string) error {
	s, err := r.server(node)
	if err != nil {
		return err
	}
	if !s.end(history.ProcCrash) {
		return errDown
	}
	return nil
}

// Restart starts a node's host that is down again, on the same data, and
// returns once its processes accept connections (nemesis.Cluster).
func (r *run) Restart(node string) error {
	s, err := r.server(node)
	if err != nil {
		return err
	}
	if s.host.Up() {
		return errUp
	}
	return r.restart(s, false)
}

// restart starts a node's host again; its start is recorded as its
// first process is started (starting), before it is ready, so that
// every reading of the new incarnation follows it in the history.
func (r *run) restart(s *server, existing bool) error {
	if err := s.start(r.ctx, existing); err != nil {
		r.progress("%s: %v", s.id, err)
		if s.startRecorded {
			r.Record(history.Event{Kind: history.KindProcess, Node: s.id, What: history.ProcStop, Incarnation: s.incarnation(),
				Detail: "its start failed: " + err.Error()})
		}
		return err
	}
	return nil
}

// starting is told that incarnation inc of the node's host is about to
// start its first process: once the run is under way, its start is
// recorded now, not once it is ready.
func (s *server) starting(inc int) {
	s.startRecorded = false
	if !s.r.isUp() {
		return // the run's first start is recorded at the run's zero
	}
	s.startRecorded = true
	s.r.Record(history.Event{Kind: history.KindProcess, Node: s.id, What: history.ProcStart, Incarnation: inc})
}

// Replace crashes a node's host, wipes its data, runs the scenario's
// replace command (etcd's preset removes the member and adds it again)
// on the host, and starts it again under the same id as a member joining
// a running cluster (nemesis.Replacer).
func (r *run) Replace(node string) error {
	s, err := r.server(node)
	if err != nil {
		return err
	}
	s.end(history.ProcCrash)
	if err := s.wipeDisk(); err != nil {
		return fmt.Errorf("wipe %s's disk: %w", s.id, err)
	}
	if err := s.host.Wipe(); err != nil {
		return fmt.Errorf("wipe %s: %w", s.data.Data, err)
	}
	r.logf("%s: data wiped (%s)", s.id, s.data.Data)
	if len(r.sv.Replace) > 0 {
		if err := r.runReplace(s); err != nil {
			r.progress("%s: replace command: %v", s.id, err)
		}
	}
	return r.restart(s, true)
}

// runReplace runs the replace command on the node's host.
func (r *run) runReplace(s *server) error {
	s.data.State = "existing"
	rd, err := r.sv.Render(s.data)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.sv.StartTimeout.D)
	defer cancel()
	return s.host.Exec(ctx, rd.Replace)
}

// Pause freezes every process of a node's host at once (its box: a
// cgroup's freeze, or SIGSTOP to its namespace or group), or stops a
// client's process when the clients run as such (nemesis.Cluster).
func (r *run) Pause(node string) error { return r.setPaused(node, true) }

// Resume thaws a paused host, or continues a client (nemesis.Cluster).
func (r *run) Resume(node string) error { return r.setPaused(node, false) }

// setPaused pauses or resumes a client's process or a node's host, and
// records a host's, just before its signal.
func (r *run) setPaused(node string, pause bool) error {
	what, sig := history.ProcResume, "SIGCONT"
	if pause {
		what, sig = history.ProcPause, "SIGSTOP"
	}
	if a, ok := r.adapters.client(node); ok {
		r.logf("%s: client process: %s (%s)", node, what, sig)
		return a.setPaused(pause)
	}
	s, err := r.server(node)
	if err != nil {
		return err
	}
	inc := s.host.Incarnation()
	mark := func() {
		r.Record(history.Event{Kind: history.KindProcess, Node: node, What: what, Incarnation: inc})
	}
	// A poll asked across a pause or a resume says nothing of what a
	// frozen host believes (observer.frozen).
	r.obs.frozen(node, true)
	if pause {
		return s.host.Pause(mark)
	}
	defer r.obs.frozen(node, false)
	return s.host.Resume(mark)
}

// ClockRate is refused: a real server's clock is its own
// (nemesis.Cluster; validation refuses clock faults for servers).
func (r *run) ClockRate(node string, rate float64) error {
	return errors.New("a real server's clock rate is not coup's to change")
}

// isUp says whether the run is under way: its first start is recorded
// and its zero set.
func (r *run) isUp() bool {
	r.zeroMu.Lock()
	defer r.zeroMu.Unlock()
	return r.started
}
