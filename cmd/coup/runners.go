package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
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
