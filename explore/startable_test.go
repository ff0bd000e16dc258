package explore

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/coupharness/coup/scenario"
)

// leaderOnly is an election on node processes whose vocabulary starts
// faults at a time or on a leader change, and whose only election is at
// the start: a leader-change trigger armed later fires only when a fault
// brings a change about.
const leaderOnly = `command = ["true"]
nodes = 3
duration = "2s"
recovery = "500ms"
[workload]
kind = "none"
[explore]
kinds = ["pause", "partition"]
triggers = ["time", "leader"]
at = ["500ms", "1.5s"]
max_faults = 2
`

// No schedule explore runs waits only on triggers that nothing in the run
// sets off: of a thousand drawn, each has a fault that starts at a time,
// and those that random drew with every fault on a leader change have
// their first at its arming time instead, the rest as drawn.
func TestNoScheduleWaitsOnTriggersAlone(t *testing.T) {
	sc := parse(t, leaderOnly)
	v := sc.Vocabulary()
	d := newDrawer(sc)
	changed := 0
	for i := 0; i < 1000; i++ {
		drawn := d.schedule(rand.New(rand.NewPCG(1, uint64(i))))
		got := startable(sc, v, drawn)
		timed := 0
		for j, f := range got {
			if f.When == nil {
				timed++
			}
			if j > 0 && (f.When == nil) != (drawn[j].When == nil) {
				t.Fatalf("draw %d: fault %d's trigger changed: %s → %s", i, j, Schedule{Faults: drawn}, Schedule{Faults: got})
			}
		}
		if timed == 0 {
			t.Fatalf("draw %d: %s waits on triggers alone", i, Schedule{Faults: got})
		}
		if got[0].When == nil && drawn[0].When != nil {
			changed++
			if got[0].At != drawn[0].At || got[0].Kind != drawn[0].Kind {
				t.Fatalf("draw %d: the first fault was changed beyond its trigger: %+v → %+v", i, drawn[0], got[0])
			}
		}
	}
	if changed < 100 {
		t.Errorf("%d of 1000 draws were all on a leader change, want about a quarter", changed)
	}

	// A process's start comes only after a fault restarts it: a pause on
	// it starts at its time unless the schedule has such a fault.
	start := &scenario.When{Process: "start"}
	alone := startable(sc, v, []scenario.Fault{{Kind: "partition", Shape: "isolate", At: dur(600e6), For: dur(300e6)},
		{Kind: "pause", At: dur(700e6), For: dur(100e6), When: start}})
	if alone[1].When != nil || alone[0].When != nil {
		t.Errorf("a pause on a start no fault brings about: %s", Schedule{Faults: alone})
	}
	crashed := startable(sc, v, []scenario.Fault{{Kind: "crash", At: dur(600e6), For: dur(300e6)},
		{Kind: "pause", At: dur(700e6), For: dur(100e6), When: start}})
	if crashed[1].When == nil {
		t.Errorf("a pause on the start a crash brings about was made a time: %s", Schedule{Faults: crashed})
	}

	// A lock's grants come with no fault: a schedule that waits on them
	// is run as drawn.
	lock := parse(t, `algorithm = "centralised"
nodes = 3
duration = "1s"
[workload]
kind = "mutex"
[explore]
kinds = ["pause"]
triggers = ["time", "acquire"]
`)
	only := []scenario.Fault{{Kind: "pause", At: dur(500e6), For: dur(50e6), When: scenario.TriggerAcquire.When()}}
	if got := startable(lock, lock.Vocabulary(), only); got[0].When == nil {
		t.Error("a fault on a lock grant was made a time: the clients' grants set it off")
	}
}

// A guided campaign never runs one schedule twice, its children and
// mutations included, and its runs are numbered from 1.
func TestNoScheduleRunsTwice(t *testing.T) {
	out, res := campaignFile(t, Campaign{Strategy: Guided, Seed: 3, Runs: 400})
	seen := map[string]int{}
	want := 1
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r RunResult
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Kind != "run" {
			continue
		}
		if r.Run != want {
			t.Fatalf("run numbered %d, want %d", r.Run, want)
		}
		want++
		if at, ok := seen[r.Schedule]; ok {
			t.Fatalf("runs %d and %d ran the same schedule: %s", at, r.Run, r.Schedule)
		}
		seen[r.Schedule] = r.Run
	}
	if len(seen) != 400 || res.Tally.Runs != 400 {
		t.Errorf("%d distinct schedules of %d runs", len(seen), res.Tally.Runs)
	}
}

// A fault armed on a trigger that no event of its run fires is counted:
// the run's line says how many, and whether no fault of its schedule
// happened at all, and the tally counts the runs.
func TestUnfiredFaultsCounted(t *testing.T) {
	sc := parse(t, strings.Replace(leaderOnly, `triggers = ["time", "leader"]`, `triggers = ["leader"]`, 1))
	r := &flakyRunner{rng: rand.New(rand.NewPCG(1, 2)), rate: func(*scenario.Scenario) float64 { return 0 }}
	out, res := campaignFile(t, Campaign{Scenario: sc, Runner: r, Strategy: Random, Seed: 1, Runs: 20})
	tl := res.Tally
	if tl.Unfired != 20 || tl.Idle != 20 || tl.UnfiredFaults < 20 {
		t.Errorf("tally: %d runs with an unfired fault, %d idle, %d faults: want every run's", tl.Unfired, tl.Idle, tl.UnfiredFaults)
	}
	if !strings.Contains(out, `"unfired":`) || !strings.Contains(out, `"idle":true`) {
		t.Errorf("the results file does not say which runs' faults never fired:\n%.400s", out)
	}
}
