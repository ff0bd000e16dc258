package explore

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Stored is a real driver as the search room sees it: each run is
// stored, and its history read back from its folder. A real run does
// not replay (Exact is false).
type Stored struct {
	// Driver names the driver for people (Name).
	Driver string
	// Once runs a scenario once, into the store, and returns its results
	// and its folder.
	Once func(ctx context.Context, sc *scenario.Scenario) (*verdict.Results, string, error)
}

var _ Runner = (*Stored)(nil)

// Run runs sc once and reads its history back (ReadBack).
func (r *Stored) Run(ctx context.Context, sc *scenario.Scenario) (*Run, error) {
	start := time.Now()
	res, dir, err := r.Once(ctx, sc)
	return ReadBack(res, dir, time.Since(start), err)
}

// Exact is false: a real run does not replay.
func (r *Stored) Exact() bool { return false }

// Name is the driver's name.
func (r *Stored) Name() string { return r.Driver }

// ReadBack makes a stored run a Run: its history read from its folder
// dir (a real driver gives the results, the folder, the real time and
// the error of its run). A run whose nodes did not start is an error: it
// judged nothing.
func ReadBack(res *verdict.Results, dir string, wall time.Duration, err error) (*Run, error) {
	run := &Run{Results: res, Dir: dir, Wall: wall}
	if err != nil {
		return run, err
	}
	if res.NotStarted() {
		return run, fmt.Errorf("not started: %s", res.Error)
	}
	h, herr := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if herr != nil {
		return run, fmt.Errorf("read the history back: %w", herr)
	}
	run.History = h
	return run, nil
}
