package sim

import (
	"errors"
	"slices"
	"strings"
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
	if res.Signature != "two-leaders: N both believed they were the leader" || res.Exhausted {
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
	if sig := explore.Signature(again.Results); sig != res.Signature {
		t.Errorf("the shrunk scenario at seed %d fails as %q", res.Seed, sig)
	}
	without := copyOf(res.Scenario)
	without.Faults = nil
	cands := []*scenario.Scenario{without}
	for k := range res.Scenario.Nodes {
		c, ok := withoutNode(res.Scenario, k)
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
		if err == nil && explore.Signature(out.Results) == res.Signature {
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

// Without a node, the nodes after it are renamed one down and keep their
// ids; what named the node loses it, and a fault about it alone goes.
func TestWithoutNode(t *testing.T) {
	sc, err := scenario.Parse("w.toml", `algorithm = "bully"
nodes = 5
ids = [10, 20, 30, 40, 50]
[workload]
initiators = ["n3", "n5"]
[[faults]]
kind = "crash"
target = ["n3", "n5"]
at = "100ms"
[[faults]]
kind = "pause"
target = "n3"
at = "100ms"
[[faults]]
kind = "partition"
groups = [["n1", "n3"], ["n4"]]
at = "200ms"
[[faults]]
kind = "crash"
target = "leader"
at = "300ms"
when = { process = "crash", node = "n5" }
`)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := withoutNode(sc, 2)
	if !ok {
		t.Fatal("n3 cannot go")
	}
	text := string(c.Encode(""))
	back, err := scenario.Parse("w.toml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if back.Nodes != 4 || !slices.Equal(back.IDs, []int{10, 20, 40, 50}) || !slices.Equal(back.Workload.Initiators, []string{"n4"}) {
		t.Errorf("nodes %d, ids %v, initiators %v", back.Nodes, back.IDs, back.Workload.Initiators)
	}
	if len(back.Faults) != 3 || !slices.Equal(back.Faults[0].Target.Names, []string{"n4"}) ||
		!slices.Equal(back.Faults[1].Groups[0], []string{"n1"}) || !slices.Equal(back.Faults[1].Groups[1], []string{"n3"}) ||
		back.Faults[2].When.Node != "n4" || back.Faults[2].Target.Names[0] != "leader" {
		t.Errorf("faults:\n%s", text)
	}
	one, err := scenario.Parse("o.toml", "algorithm = \"bully\"\nnodes = 3\n[workload]\ninitiators = [\"n2\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := withoutNode(one, 1); ok {
		t.Error("the only initiator went")
	}
}

func TestWeakenings(t *testing.T) {
	sc, err := scenario.Parse("w.toml", `algorithm = "bully"
nodes = 3
duration = "1s"
[[faults]]
kind = "replace"
target = "n3"
at = "100ms"
[[faults]]
kind = "crash"
target = "n3"
at = "100ms"
for = "40ms"
[[faults]]
kind = "loss"
probability = 0.8
for = "2ms"
[[faults]]
kind = "pause"
target = "n2"
at = "600ms"
[[faults]]
kind = "clock"
target = "n1"
rate = 3.0
`)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"replace → crash"},
		{"crash → pause", "for 40ms → 20ms"},
		{"for 2ms → 1ms", "probability 0.8 → 0.4"},
		{"until the heal → for 200ms"},
		{"until the heal → for 500ms", "clock rate 3 → 2"},
	}
	for i, w := range want {
		var got []string
		for _, x := range weakenings(sc, i) {
			got = append(got, x.what)
			cand := copyOf(sc)
			cand.Faults[i] = x.f
			if _, err := scenario.Parse("w.toml", string(cand.Encode(""))); err != nil && !strings.Contains(x.what, "→ pause") {
				t.Errorf("faults[%d] %s: %v", i, x.what, err)
			}
		}
		if !slices.Equal(got, w) {
			t.Errorf("faults[%d]: %v, want %v", i, got, w)
		}
	}
}
