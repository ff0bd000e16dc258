package sim

import (
	"context"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/scenario"
)

// DefaultBudget is how many simulations a shrink may spend by default.
const DefaultBudget = explore.DefaultBudget

// DefaultShrinkSeeds is how many other seeds a shrink tries a candidate
// with, by default, once the current seed shrinks no further.
const DefaultShrinkSeeds = explore.DefaultShrinkSeeds

// ErrNothingToShrink is the error for a run that is as expected and shows
// no violation.
var ErrNothingToShrink = explore.ErrNothingToShrink

// ShrinkOptions configure Shrink.
type ShrinkOptions struct {
	// Budget is the most simulations the shrink spends, the first run
	// included (default DefaultBudget). Shrink always stops within it.
	Budget int
	// Seeds is how many other seeds a candidate is tried with when the
	// current seed no longer shows the failure (explore.ShrinkOptions).
	Seeds int
	// Strategy is the strategy every simulation runs.
	Strategy Strategy
	// Log, when set, is told each step that shrank the scenario.
	Log func(step string)
	// Spec, when set, is the machine every node runs (Options.Spec).
	Spec *nodes.Spec
}

// Size is how big a failing run is.
type Size = explore.Size

// ShrinkResult is what a shrink found: explore's result, with the seed
// the shrunk scenario fails at and the simulations spent.
type ShrinkResult struct {
	*explore.ShrinkResult
	// Seed is the seed the shrunk scenario fails at (its Seed field).
	Seed int64
	// Sims is the number of simulations spent.
	Sims int
}

// Shrink searches for a smaller scenario that fails the way sc fails at
// seed: explore.Shrink on the simulator (Runner), exact, so one run per
// candidate and seed decides, and the result is deterministic: the same
// scenario, seed, strategy and budget give the same result.
func Shrink(sc *scenario.Scenario, seed int64, opts ShrinkOptions) (*ShrinkResult, error) {
	seeded := *sc
	seeded.Seed = seed
	r := &Runner{Options: Options{Strategy: opts.Strategy, Spec: opts.Spec}}
	res, err := explore.Shrink(context.Background(), r, &seeded, explore.ShrinkOptions{Budget: opts.Budget, Seeds: opts.Seeds, Log: opts.Log})
	if err != nil {
		return nil, err
	}
	return &ShrinkResult{ShrinkResult: res, Seed: res.Scenario.Seed, Sims: res.Runs}, nil
}
