package coup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/sim"
)

// Shrunk is a failing run shrunk: the smallest scenario coup found that
// fails the same way (the same Signature), written as a scenario file.
type Shrunk struct {
	// File is where the shrunk scenario was written.
	File string
	// Seed is the seed it fails at, which the file gives.
	Seed int64
	// Signature is how both runs fail.
	Signature string
	// Before and After are the sizes of the failing run and of the shrunk
	// one.
	Before, After Size
	// Sims is the number of simulations the shrink spent.
	Sims int
	// Steps say what shrank, in order.
	Steps []string
}

// Size is how big a failing run is.
type Size struct {
	// Nodes and Faults are the scenario's nodes and [[faults]] entries;
	// Occurrences the fault starts the history records.
	Nodes, Faults, Occurrences int
	// Messages are the messages sent; Events the history's events.
	Messages, Events int
	// Duration is the scenario's duration.
	Duration time.Duration
}

// shrink shrinks the run of seed and writes the shrunk scenario, with a
// header that says where it comes from, to opts.ShrinkTo.
func shrink(sc *Scenario, spec *nodes.Spec, seed int64, opts Options) (*Shrunk, error) {
	res, err := sim.Shrink(sc, seed, sim.ShrinkOptions{Budget: opts.Budget, Spec: spec})
	if err != nil {
		return nil, fmt.Errorf("shrink seed %d: %w", seed, err)
	}
	res.Finish(sc.Name)
	path := opts.ShrinkTo
	if path == "" {
		path = filepath.Join(opts.Store, sc.Name, "shrunk.toml")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("write the shrunk scenario: %w", err)
	}
	res.Scenario.Command = scenario.CommandMovedTo(sc.File, res.Scenario.Command, path)
	var h strings.Builder
	fmt.Fprintf(&h, "Shrunk by coup from %s at seed %d, with the machine %s.\n", sc.File, seed, spec.Name)
	fmt.Fprintf(&h, "It fails as that run failed: %s\n\n", res.Signature)
	h.WriteString(res.SizeTable("  "))
	fmt.Fprintf(&h, "\nWhat shrank, in %d simulations:\n", res.Sims)
	for _, s := range res.Steps {
		fmt.Fprintf(&h, "  %s\n", s)
	}
	h.WriteString("\nIts [expect] states the violation it shows; once the bug is fixed, set\nvalid = true and drop violations, and the file guards against its return.")
	if err := os.WriteFile(path, res.Scenario.Encode(h.String()), 0o644); err != nil {
		return nil, fmt.Errorf("write the shrunk scenario: %w", err)
	}
	return &Shrunk{
		File: path, Seed: res.Seed, Signature: res.Signature,
		Before: size(res.Original), After: size(res.Shrunk),
		Sims: res.Sims, Steps: res.Steps,
	}, nil
}

func size(s sim.Size) Size {
	return Size{Nodes: s.Nodes, Faults: s.Faults, Occurrences: s.Occurrences, Messages: int(s.Messages), Events: s.Events, Duration: s.Duration}
}
