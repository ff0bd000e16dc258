package harness

import (
	"context"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// NewRunner is the pipe driver as the search room sees it: each run
// starts node processes on pipes (Run) with opts, into the store, and
// its history is read back.
func NewRunner(opts Options) explore.Runner {
	return &explore.Stored{Driver: "processes", Once: func(ctx context.Context, sc *scenario.Scenario) (*verdict.Results, string, error) {
		return Run(ctx, sc, opts)
	}}
}
