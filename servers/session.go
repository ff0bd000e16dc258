package servers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// A Session runs episodes on one long-lived cluster: the cluster starts
// once, with the first episode, and each later episode runs on it as a
// run of its own would, through the same lifecycle (lifecycle.Execute):
// its own store folder and history (a meta event at the episode's zero,
// its own end event), its own nemesis carrying out its schedule, its
// clients on their hosts, its heal and recovery window, and its own
// verdict from the usual checks, on its window alone.
//
// Before each episode but the first, the cluster must have recovered from
// the one before: a host that is down is started again, and the observed
// state must settle (every node up and seen to follow one leader, which
// is seen to lead: the ready state "followers", ready.go) within the
// recovery timeout. When it does not, or the next scenario needs another
// cluster (other servers, nodes or clients), the Session closes the
// cluster and starts a fresh one, and says so on progress.
//
// Episodes do not share data: each episode's clients put "eN-" before
// every key, znode and lock name (the Nth episode of the Session). What
// they do share is the cluster's state: terms and logs grown by the
// episodes before, leases and sessions they left, a member still
// catching up (docs/explore.md says what that can hide).
//
// Close stops every process by pid and removes the cluster's folder; it
// is safe to call after any error, and more than once. A Session runs
// one episode at a time.
type Session struct {
	// Notes receives the Session's own lines: a cluster closed and a
	// fresh one started, and why (nil: none).
	Notes io.Writer

	opts Options
	// within bounds the wait for the cluster to recover.
	within time.Duration

	r    *run
	dir  string             // the cluster's folder
	base *scenario.Scenario // the scenario the cluster was started for

	episodes int // every episode run
	clusters int // every cluster started
}

// DefaultRecoverTimeout is how long a Session waits for its cluster to
// recover between episodes by default.
const DefaultRecoverTimeout = 20 * time.Second

// NewSession returns a Session that stores its episodes as opts says and
// waits up to within (DefaultRecoverTimeout when 0) for its cluster to
// recover between episodes. It starts nothing: the first episode starts
// the cluster.
func NewSession(opts Options, within time.Duration) *Session {
	if opts.Store == "" {
		opts.Store = "store"
	}
	if within <= 0 {
		within = DefaultRecoverTimeout
	}
	return &Session{opts: opts, within: within}
}

// ErrNoEpisodes marks a scenario that cannot run as an episode.
var ErrNoEpisodes = errors.New("cannot run as episodes")

// EpisodesRefused says why sc cannot run as an episode ("" when it can):
// it has no [server], or its clients are processes of their own, whose
// keys coup does not choose.
func EpisodesRefused(sc *scenario.Scenario) string {
	switch {
	case sc.Server == nil:
		return "it has no [server]"
	case len(sc.Server.Adapter) > 0:
		return "its clients are its own adapter's processes, whose keys coup cannot keep apart between episodes"
	case sc.Server.ClientsAreProcesses():
		return "its clients are processes of their own (client_processes), which an episode cannot keep apart"
	}
	return ""
}

// Run runs sc as the next episode and returns its results and its store
// folder, as Run does for a run of its own.
func (s *Session) Run(ctx context.Context, sc *scenario.Scenario) (*verdict.Results, string, error) {
	if why := EpisodesRefused(sc); why != "" {
		return nil, "", fmt.Errorf("%w: scenario %s: %s", ErrNoEpisodes, sc.Name, why)
	}
	if s.r != nil && !sameCluster(s.base, sc) {
		s.progress("the scenario needs another cluster: closing this one, starting a fresh one")
		s.closeCluster()
	}
	if s.r != nil {
		if err := s.r.recoverFor(ctx, s.within); err != nil {
			s.closeCluster()
			if ctx.Err() != nil {
				return nil, "", lifecycle.ErrInterrupted
			}
			s.progress("the cluster did not recover: %v; closed, starting a fresh one", err)
		}
	}
	s.episodes++
	prefix := fmt.Sprintf("e%d-", s.episodes)
	out, err := lifecycle.Execute(ctx, s.opts.Store, sc, func(f *lifecycle.Files, p *lifecycle.Parts) (*lifecycle.Run, error) {
		if s.r != nil {
			return s.r.episode(sc, f, p, prefix)
		}
		return s.start(sc, f, p, prefix)
	})
	if out == nil || err != nil || ctx.Err() != nil || out.Results == nil || out.Results.NotStarted() {
		s.closeCluster() // whatever happened, the next episode starts afresh
	}
	if out == nil {
		return nil, "", err
	}
	return out.Results, out.Dir, err
}

// start starts a cluster with the first episode on it.
func (s *Session) start(sc *scenario.Scenario, f *lifecycle.Files, p *lifecycle.Parts, prefix string) (*lifecycle.Run, error) {
	clusters := filepath.Join(s.opts.Store, ".clusters")
	if err := os.MkdirAll(clusters, 0o755); err != nil {
		return nil, fmt.Errorf("create the cluster's folder: %w", err)
	}
	dir, err := os.MkdirTemp(clusters, lifecycle.SafeName(sc.Name)+"-")
	if err != nil {
		return nil, fmt.Errorf("create the cluster's folder: %w", err)
	}
	r := newRun(sc, s.opts, f, p, dir)
	r.keep, r.prefix = true, prefix
	r.between = lifecycle.NewLog(nil, s.opts.Progress)
	s.r, s.dir, s.base = r, dir, sc
	s.clusters++
	return r.life, nil
}

// Clusters is how many clusters the Session has started.
func (s *Session) Clusters() int { return s.clusters }

// Close stops the cluster's every process by pid and removes its folder.
func (s *Session) Close() error {
	s.closeCluster()
	return nil
}

func (s *Session) closeCluster() {
	if s.r == nil {
		return
	}
	s.r.shutdown()
	_ = os.RemoveAll(s.dir)
	s.r, s.dir, s.base = nil, "", nil
}

func (s *Session) progress(format string, args ...any) {
	w := s.Notes
	if w == nil {
		w = s.opts.Progress
	}
	if w != nil {
		fmt.Fprintf(w, "episodes: "+format+"\n", args...)
	}
}

// sameCluster reports whether a cluster started for a serves b: the same
// [server] table, as many nodes, and clients of the same kind on the
// same hosts (a campaign's schedules differ in their faults and seed
// only, and each is a scenario read anew, so they are compared as
// written).
func sameCluster(a, b *scenario.Scenario) bool {
	return string(clusterOf(a).Encode("")) == string(clusterOf(b).Encode(""))
}

// clusterOf is what of sc its cluster depends on: sc less its name, its
// seed, its timing, its faults, its vocabulary, its checks and what its
// workload does.
func clusterOf(sc *scenario.Scenario) *scenario.Scenario {
	c := *sc
	c.Name, c.Description, c.Seed, c.File = "", "", 0, ""
	c.Duration, c.Recovery = scenario.Duration{}, scenario.Duration{}
	c.Faults, c.Explore = nil, nil
	c.Checks, c.Expect = scenario.Checks{}, scenario.Expect{}
	c.Workload = scenario.Workload{Kind: sc.Workload.Kind, Clients: sc.Workload.Clients, On: sc.Workload.On}
	return &c
}

// episode makes the run's next episode over its files, of its parts: a
// new nemesis, history, log, counters and clients (their keys under
// prefix), on the cluster as it is.
func (r *run) episode(sc *scenario.Scenario, f *lifecycle.Files, p *lifecycle.Parts, prefix string) (*lifecycle.Run, error) {
	life := r.newLife(sc, p)
	r.stats.reset()
	if r.net != nil {
		r.net.Reset()
	}
	select {
	case <-r.down:
	default:
	}
	log := f.NewLog(r.opts.Progress)
	rec := history.NewRecorder(f.History, func() int64 { return int64(r.Now()) }, false)
	r.zeroMu.Lock()
	r.sc, r.prefix, r.hist = sc, prefix, filepath.Join(f.Dir, lifecycle.HistoryFile)
	r.rec, r.log, r.zero, r.closed = rec, log, time.Time{}, true // open at its zero (resume)
	r.zeroMu.Unlock()
	r.life = life
	rec.Subscribe(func(e history.Event) { r.life.Watch(&e) })
	if err := r.checkClock(); err != nil {
		return nil, err
	}
	r.clients = newClients(r)
	return r.life, nil
}

// resume is an episode's start on the cluster as it is: its zero is now
// and the meta event is recorded there (zero), then, as a fresh run's
// start would give them, each node that is up (a process start), what
// each was last seen to believe (a leader report), and that the cluster
// is ready when it is seen so. It holds the observer's lock meanwhile, so
// that what is observed next comes after.
func (r *run) resume(zero func(took time.Duration)) {
	r.restartLinkCounts(0) // the episode's zero, set below (before the observer's lock: the driver's comes first)
	r.obs.mu.Lock()
	defer r.obs.mu.Unlock()
	now := time.Now()
	r.zeroMu.Lock()
	r.zero = now
	log := r.log
	r.zeroMu.Unlock()
	zero(log.SetZero(now))
	for _, s := range r.servers {
		if r.obs.nodes[s.id].up {
			r.Record(history.Event{Kind: history.KindProcess, Node: s.id, What: history.ProcStart, Incarnation: s.incarnation()})
		}
	}
	for _, n := range r.obs.order {
		if b := r.obs.nodes[n]; b.up && b.recorded {
			r.Record(history.Event{Kind: history.KindReport, Node: n, What: history.ReportLeader, Value: b.leader, Term: b.term,
				Detail: "as seen before the episode"})
		}
	}
	if leader, ok := r.obs.settled(); ok {
		r.Record(history.Event{Kind: history.KindReady, Value: leader, Term: r.obs.nodes[leader].term, Detail: r.obs.describe()})
	}
	r.zeroMu.Lock()
	r.closed = false
	r.zeroMu.Unlock()
}

// recoverFor brings the cluster back after an episode: every host that
// is down is started again, and the observed state must settle (every
// node up and seen to follow one leader) within timeout.
func (r *run) recoverFor(ctx context.Context, timeout time.Duration) error {
	r.ctx = ctx
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for _, s := range r.servers {
		if s.host.Up() {
			continue
		}
		r.progress("%s is down after the episode: starting it again", s.id)
		if err := s.start(ctx, false); err != nil {
			return fmt.Errorf("start %s again: %w", s.id, err)
		}
	}
	for {
		r.obs.mu.Lock()
		_, ok := r.obs.settled()
		state := r.obs.describe()
		r.obs.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-r.obs.changed:
		case <-r.down:
			return fmt.Errorf("a host exited while the cluster recovered: %s", state)
		case <-deadline.C:
			return fmt.Errorf("not settled within %s: %s", timeout, state)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
