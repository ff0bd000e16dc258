package servers

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Runner is the real-server driver as the search room sees it: each run
// starts the scenario's hosts (Run) and stores the run; its history is
// read back from the store. Real runs do not replay: it is not exact.
type Runner struct {
	// Options are every run's (Store: where the runs are kept).
	Options Options
}

var _ explore.Runner = (*Runner)(nil)

// Run runs sc with real servers, to its end or until ctx ends (then its
// prefix is judged). A run whose nodes did not start is an error, not a
// run: it shows nothing about the scenario's faults.
func (r *Runner) Run(ctx context.Context, sc *scenario.Scenario) (*explore.Run, error) {
	start := time.Now()
	res, dir, err := Run(ctx, sc, r.Options)
	if err != nil {
		return nil, err
	}
	return readRun(sc, res, dir, start)
}

// Exact is false.
func (*Runner) Exact() bool { return false }

// Name is "servers".
func (*Runner) Name() string { return "servers" }

// readRun is a stored run as the search room takes it.
func readRun(sc *scenario.Scenario, res *verdict.Results, dir string, start time.Time) (*explore.Run, error) {
	if res.NotStarted() {
		return nil, fmt.Errorf("%s: the run did not start: %s", sc.File, res.Error)
	}
	h, err := history.ReadFile(filepath.Join(dir, lifecycle.HistoryFile))
	if err != nil {
		return nil, err
	}
	return &explore.Run{Results: res, History: h, Dir: dir, Wall: time.Since(start)}, nil
}
