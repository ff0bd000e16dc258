package sim

import (
	"testing"

	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
)

// A simulated history says so in its meta event, with the seed it ran,
// so that a report can mark it; a real run's meta does not.
func TestMetaMarksSimulatedRuns(t *testing.T) {
	sc, err := scenario.Load("../scenarios/chang-roberts.toml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Simulate(sc, 42, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := out.History.Meta; !m.Simulated || m.Seed != 42 {
		t.Errorf("meta simulated %v seed %d, want simulated with seed 42", m.Simulated, m.Seed)
	}
	if m := lifecycle.RunMeta(sc); m.Simulated {
		t.Errorf("a real run's meta is marked simulated")
	}
}
