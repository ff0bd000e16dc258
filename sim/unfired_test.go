package sim

import (
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// A fault armed on a trigger that nothing in the run sets off (a process
// start, with no fault that restarts a node) never happens: the run
// counts it (faults.unfired, in results.json's counts) and says so in
// its summary, as coup run prints it; the fault whose trigger fired is
// not counted.
func TestUnfiredTriggerIsReported(t *testing.T) {
	res, h := simulate(t, `algorithm = "chang-roberts"
nodes = 5
duration = "300ms"
recovery = "200ms"

[workload]
initiators = ["n2"]
at = "50ms"

[[faults]]
kind = "pause"
target = "n5"
for = "20ms"
when = { report = "participant", value = "true", node = "n4" }

[[faults]]
kind = "pause"
target = "n1"
for = "20ms"
at = "100ms"
when = { process = "start" }
`)
	if n := res.Stats.Counts[history.CountFaultsUnfired]; n != 1 {
		t.Errorf("faults.unfired = %d, want 1 (counts %v)", n, res.Stats.Counts)
	}
	if s := res.Summary(); !strings.Contains(s, "faults never fired: 1 fault armed on a trigger that nothing in the run set off") {
		t.Errorf("the summary does not say a fault never fired:\n%s", s)
	}
	fired := 0
	for _, e := range h.Events {
		if e.Kind == history.KindNemesis && e.Phase == history.PhaseStart {
			fired++
			if e.Name != "faults[0]#1" {
				t.Errorf("fault %s started: only faults[0] should have", e.Name)
			}
		}
	}
	if fired != 1 {
		t.Errorf("%d faults started, want 1", fired)
	}
}
