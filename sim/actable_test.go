package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
)

// restartScenario explores restarts among crashes and pauses of named
// nodes and picks: most restarts drawn alone find every node up.
const restartScenario = `name = "restarts"
algorithm = "bully"
nodes = 3
duration = "600ms"
recovery = "300ms"

[workload]
kind = "election"

[explore]
kinds = ["restart", "crash", "pause"]
targets = ["n1", "n2", "one"]
triggers = ["time"]
max_faults = 2
`

// actingRunner runs the simulator and notes every restart of a run's
// schedule that never started: one that found no node down.
type actingRunner struct {
	Runner
	own   int
	idle  []string
	kinds map[string]int
}

func (r *actingRunner) Run(ctx context.Context, sc *scenario.Scenario) (*explore.Run, error) {
	run, err := r.Runner.Run(ctx, sc)
	if err != nil {
		return run, err
	}
	started := map[string]bool{}
	for i := range run.History.Events {
		if e := &run.History.Events[i]; e.Kind == history.KindNemesis && e.Phase == history.PhaseStart {
			name, _, _ := strings.Cut(e.Name, "#")
			started[name] = true
		}
	}
	for i := r.own; i < len(sc.Faults); i++ {
		r.kinds[sc.Faults[i].Kind]++
		if nemesis.Kind(sc.Faults[i].Kind) == nemesis.Restart && !started[fmt.Sprintf("faults[%d]", i)] {
			r.idle = append(r.idle, fmt.Sprintf("seed %d: faults[%d] of %v", sc.Seed, i, sc.Faults))
		}
	}
	return run, nil
}

// A fault that cannot act (a restart when no node it may hit is down) is
// never drawn, by the random strategy or the guided one; restarts that
// can act (after a crash of their node) still are.
func TestRestartThatCannotActIsNotDrawn(t *testing.T) {
	sc, err := scenario.Parse("restarts.toml", restartScenario)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{explore.Random, explore.Guided} {
		r := &actingRunner{kinds: map[string]int{}}
		if _, err := (explore.Campaign{Scenario: sc, Runner: r, Strategy: st, Seed: 3, Runs: 60}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(r.idle) > 0 {
			t.Errorf("%s: %d restarts found no node down, the first: %s", st, len(r.idle), r.idle[0])
		}
		if r.kinds["restart"] == 0 || r.kinds["crash"] == 0 {
			t.Errorf("%s: faults drawn by kind %v: want restarts after crashes too", st, r.kinds)
		}
	}
}
