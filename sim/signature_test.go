package sim

import (
	"testing"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/scenario"
)

// Every seed at which the race scenario shows two leaders has the same
// signature, although each has its own nodes and times.
func TestSignatureOfTheRace(t *testing.T) {
	sc, err := scenario.Load("../scenarios/sim/bully-replace-race.toml")
	if err != nil {
		t.Fatal(err)
	}
	sigs := map[string][]int64{}
	for seed := int64(1); seed <= 250; seed++ {
		out, err := Simulate(sc, seed, Options{Strategy: Strategy{Name: Bias}})
		if err != nil {
			t.Fatal(err)
		}
		if s := explore.Signature(out.Results, out.History); s != "" {
			sigs[s] = append(sigs[s], seed)
		}
		Recycle(out)
	}
	if len(sigs) != 1 || len(sigs["two-leaders: nodes both believed they were the leader (restarted under the same id; no fault in force)"]) < 5 {
		t.Errorf("signatures: %v", sigs)
	}
}
