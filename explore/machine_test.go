package explore

import (
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// A run whose timers ran late past the scenario's bounds (a fault that
// began 126ms after it was due, a node first started 946ms into the run,
// with a 3ms transition time) says so; one on time, one a few transition
// times late, and a simulated one do not.
func TestLateTimers(t *testing.T) {
	sc := parse(t, `command = ["true"]
nodes = 3
duration = "2s"
[params]
t_trans = "3ms"
[workload]
kind = "none"
[[faults]]
kind = "pause"
target = "n1"
at = "300ms"
for = "100ms"
[[faults]]
kind = "partition"
shape = "isolate"
target = "n2"
at = "500ms"
every = "500ms"
for = "100ms"
`)
	pause := func(at float64) history.Event { return fault(at, "pause", history.PhaseStart, "faults[0]#1", "n1") }
	second := func(at float64) history.Event { return fault(at, "partition", history.PhaseStart, "faults[1]#2", "n2") }
	tests := []struct {
		name      string
		simulated bool
		events    []history.Event
		want      []string // what the words say; none: ""
	}{
		{"on time", false, []history.Event{pause(300.4), second(1000.2)}, nil},
		{"a few transition times late", false, []history.Event{pause(312), second(1009)}, nil},
		{"a fault 126ms late", false, []history.Event{pause(426), second(1001)}, []string{"faults[0]#1 began 126ms after it was due", "the transition time is 3ms", "from the machine"}},
		{"a repeated fault late", false, []history.Event{pause(300), second(1080)}, []string{"faults[1]#2 began 80ms after it was due"}},
		{"a start at 946ms", false, []history.Event{process(946, "n2", history.ProcStart, 1), pause(300)}, []string{"n2 first started 946ms into the run"}},
		{"simulated", true, []history.Event{pause(426)}, nil},
	}
	for _, tt := range tests {
		h := electionHistory(t, 2000, tt.events...)
		if tt.name == "a start at 946ms" {
			// n2's first start is the one at 946ms, not at the run's zero.
			var events []history.Event
			for _, e := range h.Events {
				if !(e.Kind == history.KindProcess && e.Node == "n2" && e.Time == 0) {
					events = append(events, e)
				}
			}
			h.Events = events
		}
		h.Meta.Simulated = tt.simulated
		h.Meta.Params = map[string]any{"t_trans": "3ms"}
		got := LateTimers(sc, h)
		if len(tt.want) == 0 && got != "" {
			t.Errorf("%s: %q, want none", tt.name, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not say %q", tt.name, got, w)
			}
		}
	}
}
