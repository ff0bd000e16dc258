package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/harness"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers"
	"github.com/coupharness/coup/verdict"
)

// The drivers as the search room sees them: each a Runner.

// processRunner runs a scenario with node processes on pipes, into the
// store, and reads its history back.
type processRunner struct {
	store    string
	progress io.Writer
}

var _ explore.Runner = (*processRunner)(nil)

func (r *processRunner) Run(ctx context.Context, sc *scenario.Scenario) (*explore.Run, error) {
	start := time.Now()
	res, dir, err := harness.Run(ctx, sc, harness.Options{Store: r.store, Progress: r.progress})
	return readBack(res, dir, time.Since(start), err)
}

func (r *processRunner) Exact() bool  { return false }
func (r *processRunner) Name() string { return "processes" }

// serverRunner runs a scenario of real servers, into the store, and reads
// its history back.
type serverRunner struct {
	store    string
	progress io.Writer
}

var _ explore.Runner = (*serverRunner)(nil)

func (r *serverRunner) Run(ctx context.Context, sc *scenario.Scenario) (*explore.Run, error) {
	start := time.Now()
	res, dir, err := servers.Run(ctx, sc, servers.Options{Store: r.store, Progress: r.progress})
	return readBack(res, dir, time.Since(start), err)
}

func (r *serverRunner) Exact() bool  { return false }
func (r *serverRunner) Name() string { return "servers" }

// episodeRunner runs a scenario of real servers as an episode on a
// long-lived cluster (servers.Session), into the store, and reads its
// history back. Each run takes a session no other run is using, or a new
// one: a campaign of --workers N keeps up to N clusters.
type episodeRunner struct {
	store    string
	progress io.Writer
	notes    io.Writer // when a cluster is closed and a fresh one started

	mu   sync.Mutex
	free []*servers.Session
	all  []*servers.Session
}

var _ explore.Runner = (*episodeRunner)(nil)

func (r *episodeRunner) Run(ctx context.Context, sc *scenario.Scenario) (*explore.Run, error) {
	s := r.take()
	defer r.put(s)
	start := time.Now()
	res, dir, err := s.Run(ctx, sc)
	return readBack(res, dir, time.Since(start), err)
}

func (r *episodeRunner) Exact() bool  { return false }
func (r *episodeRunner) Name() string { return "servers" }

func (r *episodeRunner) take() *servers.Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		s := r.free[n-1]
		r.free = r.free[:n-1]
		return s
	}
	s := servers.NewSession(servers.Options{Store: r.store, Progress: r.progress}, 0)
	s.Notes = r.notes
	r.all = append(r.all, s)
	return s
}

func (r *episodeRunner) put(s *servers.Session) {
	r.mu.Lock()
	r.free = append(r.free, s)
	r.mu.Unlock()
}

// Close stops every session's cluster.
func (r *episodeRunner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.all {
		_ = s.Close()
	}
	r.all, r.free = nil, nil
	return nil
}

// readBack makes a stored run an explore.Run: its history read from its
// folder. A run whose nodes did not start is an error: it judged nothing.
func readBack(res *verdict.Results, dir string, wall time.Duration, err error) (*explore.Run, error) {
	run := &explore.Run{Results: res, Dir: dir, Wall: wall}
	if err != nil {
		return run, err
	}
	if res.NotStarted() {
		return run, fmt.Errorf("not started: %s", res.Error)
	}
	h, herr := history.ReadFile(filepath.Join(dir, lifecycle.HistoryFile))
	if herr != nil {
		return run, fmt.Errorf("read the history back: %w", herr)
	}
	run.History = h
	return run, nil
}
