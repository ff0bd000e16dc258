package explore

import (
	"context"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Runner runs a scenario as one driver does and gives back the judged
// run. The search room asks a Runner for runs and never knows which
// driver it has.
type Runner interface {
	// Run runs sc, its seed and faults as they are, to its end, and
	// judges it with the scenario's checks. A cancelled ctx stops a run
	// under way; its Run is then judged on the recorded prefix, or is
	// nil with the context's error.
	Run(ctx context.Context, sc *scenario.Scenario) (*Run, error)
	// Exact is true when the same scenario and seed always give the same
	// run (the simulator): a candidate then needs one run.
	Exact() bool
	// Name names the driver for people: "simulator", "processes",
	// "servers".
	Name() string
}

// Run is one judged run.
type Run struct {
	// Results is the verdict; History what it was drawn from.
	Results *verdict.Results
	History *history.History
	// Dir is the run's store folder, "" when the run was not stored.
	Dir string
	// Wall is the real time the run took.
	Wall time.Duration
	// Release, when set, frees what the run holds (the simulator reuses
	// its events' memory); History and Results may not be used after it.
	Release func()
}

// Free calls r.Release once, if r has one.
func (r *Run) Free() {
	if r != nil && r.Release != nil {
		r.Release()
		r.Release = nil
	}
}
