package explore

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/scenario"
)

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
	c, ok := WithoutNode(sc, 2)
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
	if _, ok := WithoutNode(one, 1); ok {
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
		for _, x := range weakenings(sc, i, time.Millisecond) {
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

// A clock's jump is halved, towards none, down to the grain.
func TestWeakenClockOffset(t *testing.T) {
	sc := &scenario.Scenario{Duration: scenario.Duration{D: 10 * time.Second, Set: true}, Faults: []scenario.Fault{
		{Kind: "clock", Target: scenario.Target{Names: []string{"n1"}, Set: true}, Offset: scenario.Duration{D: -30 * time.Second, Set: true}, For: scenario.Duration{D: time.Second, Set: true}},
		{Kind: "clock", Offset: scenario.Duration{D: 40 * time.Millisecond, Set: true}},
	}}
	var got []string
	for _, w := range weakenings(sc, 0, 50*time.Millisecond) {
		got = append(got, w.what)
	}
	if want := []string{"for 1s → 500ms", "clock offset -30s → -15s"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
	for _, w := range weakenings(sc, 1, 50*time.Millisecond) {
		if strings.Contains(w.what, "offset") {
			t.Errorf("a jump within the grain halved: %s", w.what)
		}
	}
}
