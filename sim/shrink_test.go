package sim

import (
	"errors"
	"testing"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/scenario"
)

// The bully replacement race shrinks to one fault on two nodes that fails
// the same way when simulated again; without that fault, or either node,
// it does not.
func TestShrinkRace(t *testing.T) {
	sc, err := scenario.Load("../scenarios/sim/bully-replace-race.toml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Shrink(sc, 50, ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Signature != "two-leaders: nodes both believed they were the leader (restarted under the same id; no fault in force)" || res.Exhausted {
		t.Errorf("signature %q, exhausted %v", res.Signature, res.Exhausted)
	}
	if s := res.Shrunk; s.Faults != 1 || s.Occurrences != 1 || s.Nodes != 2 || s.Messages >= res.Original.Messages || s.Events >= res.Original.Events || s.Duration >= res.Original.Duration {
		t.Errorf("shrunk %+v from %+v", s, res.Original)
	}
	if res.Sims < 10 || res.Sims > DefaultBudget || len(res.Steps) == 0 {
		t.Errorf("%d simulations, steps %v", res.Sims, res.Steps)
	}
	again, err := Simulate(res.Scenario, res.Seed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sig := explore.Signature(again.Results, again.History); sig != res.Signature {
		t.Errorf("the shrunk scenario at seed %d fails as %q", res.Seed, sig)
	}
	without := *res.Scenario
	without.Faults = nil
	cands := []*scenario.Scenario{&without}
	for k := range res.Scenario.Nodes {
		c, ok := explore.WithoutNode(res.Scenario, k)
		if ok {
			cands = append(cands, c)
		}
	}
	for _, c := range cands {
		valid, err := scenario.Parse(c.File, string(c.Encode("")))
		if err != nil {
			continue
		}
		out, err := Simulate(valid, res.Seed, Options{})
		if err == nil && explore.Signature(out.Results, out.History) == res.Signature {
			t.Errorf("a smaller scenario fails the same way:\n%s", c.Encode(""))
		}
	}
}

// Shrinking is deterministic, stops within its budget, and refuses a run
// with nothing to shrink.
func TestShrinkBudgetAndDeterminism(t *testing.T) {
	sc, err := scenario.Load("../scenarios/bully-coordinator-replaced.toml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Shrink(sc, sc.Seed, ShrinkOptions{Strategy: Strategy{Name: PCT}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Shrink(sc, sc.Seed, ShrinkOptions{Strategy: Strategy{Name: PCT}})
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Scenario.Encode("")) != string(b.Scenario.Encode("")) || a.Sims != b.Sims {
		t.Errorf("two shrinks differ:\n%s\n%s", a.Scenario.Encode(""), b.Scenario.Encode(""))
	}
	small, err := Shrink(sc, sc.Seed, ShrinkOptions{Budget: 6})
	if err != nil {
		t.Fatal(err)
	}
	if small.Sims > 6 || !small.Exhausted {
		t.Errorf("budget 6: %d simulations, exhausted %v", small.Sims, small.Exhausted)
	}
	ok, err := scenario.Load("../scenarios/bully-crash-coordinator.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Shrink(ok, ok.Seed, ShrinkOptions{}); !errors.Is(err, ErrNothingToShrink) {
		t.Errorf("a run as expected: %v", err)
	}
}
