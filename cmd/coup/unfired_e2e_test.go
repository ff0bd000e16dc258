package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A fault armed on a trigger that nothing in the run sets off (a pause on
// a process start, with no fault that restarts a node) never happens:
// coup run says which, as the heal comes, and in its summary; results.json
// counts it and the report shows it; coup sim says it too.
func TestUnfiredFaultIsSaid(t *testing.T) {
	file := writeScenario(t, t.TempDir(), "unfired.toml", `algorithm = "chang-roberts"
nodes = 3
duration = "300ms"
recovery = "100ms"
[workload]
initiators = ["n2"]
at = "50ms"
[[faults]]
kind = "pause"
target = "n1"
for = "20ms"
at = "100ms"
when = { process = "start" }
[checks]
run = ["two-leaders"]
`)
	const said = "faults never fired: 1 fault armed on a trigger that nothing in the run set off"
	run := coup(t, "run", file)
	if run.code != 0 || !strings.Contains(run.stdout, said) ||
		!strings.Contains(run.stdout, "nemesis: faults[0] (pause on process start, armed at 100ms) never fired") {
		t.Errorf("coup run: exit %d, want 0 and the unfired pause said:\n%s%s", run.code, run.stdout, run.stderr)
	}
	b, err := os.ReadFile(filepath.Join(run.store, "unfired", "latest", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Stats struct {
			Counts map[string]int64 `json:"counts"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(b, &res); err != nil || res.Stats.Counts["faults.unfired"] != 1 {
		t.Errorf("results.json counts %v (%v), want faults.unfired 1", res.Stats.Counts, err)
	}
	if page, err := os.ReadFile(filepath.Join(run.store, "unfired", "latest", "report.html")); err != nil || !strings.Contains(string(page), "<th>faults never fired (a trigger nothing set off)</th><td>1</td>") {
		t.Errorf("the report's counts do not show the unfired fault (%v)", err)
	}
	if sim := coup(t, "sim", file); sim.code != 0 || !strings.Contains(sim.stdout, said) {
		t.Errorf("coup sim: exit %d, want 0 and the unfired pause said:\n%s%s", sim.code, sim.stdout, sim.stderr)
	}
}
