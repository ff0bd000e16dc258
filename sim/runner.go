package sim

import (
	"context"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/scenario"
)

// Runner is the simulator as the search room sees it: each run simulates
// a scenario at its seed (scenario.Seed). It is exact: the same scenario
// and seed always give the same run.
type Runner struct {
	// Options are every simulation's (a store, a strategy, a machine of
	// one's own).
	Options Options
	// KeepIn is the store Keep runs a scenario into: a search runs
	// without a store (Options.Store "") and keeps a failing run by
	// simulating its seed again into KeepIn, which gives the same run.
	KeepIn string
}

var (
	_ explore.Runner = (*Runner)(nil)
	_ explore.Keeper = (*Runner)(nil)
)

// Run simulates sc at its seed and judges it. The simulator takes no
// real time worth stopping: ctx is not watched. The run's events go back
// to the simulator's pool on Release.
func (r *Runner) Run(_ context.Context, sc *scenario.Scenario) (*explore.Run, error) {
	out, err := Simulate(sc, sc.Seed, r.Options)
	if err != nil {
		return nil, err
	}
	return &explore.Run{Results: out.Results, History: out.History, Dir: out.Dir, Wall: out.Wall, Release: func() { Recycle(out) }}, nil
}

// Keep simulates sc at its seed again, into the store KeepIn, and
// returns the run's folder (explore.Keeper).
func (r *Runner) Keep(_ context.Context, sc *scenario.Scenario) (string, error) {
	opts := r.Options
	opts.Store = r.KeepIn
	out, err := Simulate(sc, sc.Seed, opts)
	if err != nil {
		return "", err
	}
	defer Recycle(out)
	return out.Dir, nil
}

// Exact is true: a seed replays.
func (*Runner) Exact() bool { return true }

// Name is "simulator".
func (*Runner) Name() string { return "simulator" }
