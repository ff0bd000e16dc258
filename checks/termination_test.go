package checks

import (
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestTermination(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	// base: three nodes, a partition from 100 to 200ms, a 100ms bound, so
	// the deadline is 300ms.
	base := func() *hb {
		return hist(n3...).termination(100).starts(0, n3...).
			nemesis("partition", history.PhaseStart, 100, "n3").nemesis("partition", history.PhaseEnd, 200, "n3")
	}
	tests := []struct {
		name     string
		h        *history.History
		want     Validity
		nodes    []string
		evidence []int64
		explain  []string
	}{
		{
			name:    "every live node has a leader by the deadline",
			h:       base().agree("n3", 250, n3...).end(400).h(),
			want:    True,
			explain: []string{"every node live at 0.300s (100ms after the last nemesis event (partition end) at 0.200s) believed in a leader (3 nodes)"},
		},
		{
			name:    "a leader reported exactly at the deadline counts",
			h:       base().agree("n3", 300, n3...).end(400).h(),
			want:    True,
			explain: nil,
		},
		{
			name:     "a node without a leader at the deadline",
			h:        base().agree("n3", 250, "n2", "n3").leader("n1", "", 260).agree("n3", 350, "n1").end(400).h(),
			want:     False,
			nodes:    []string{"n1"},
			evidence: []int64{8},
			explain:  []string{"n1, live at 0.300s (100ms after the last nemesis event (partition end) at 0.200s), believed in no leader"},
		},
		{
			name:     "a node that never reported: its start is the evidence",
			h:        base().agree("n3", 250, "n2", "n3").end(400).h(),
			want:     False,
			nodes:    []string{"n1"},
			evidence: []int64{1},
		},
		{
			name:  "a node live at the deadline counts even if it crashes later",
			h:     base().agree("n3", 250, "n1", "n3").crash("n2", 350).end(400).h(),
			want:  False,
			nodes: []string{"n2"},
		},
		{
			name: "a node down at the deadline does not count",
			h:    base().agree("n3", 250, "n1", "n3").crash("n2", 250).end(400).h(),
			want: True,
		},
		{
			name:    "a node restarted just before the deadline must have a leader",
			h:       base().agree("n3", 250, n3...).crash("n1", 280).start("n1", 290).end(400).h(),
			want:    False,
			nodes:   []string{"n1"},
			explain: []string{"n1, live at 0.300s"},
		},
		{
			name:    "a paused node keeps its leader",
			h:       base().agree("n3", 250, n3...).pause("n1", 260).end(400).h(),
			want:    True,
			explain: nil,
		},
		{
			name:    "no node is live at the deadline",
			h:       base().crash("n1", 250).crash("n2", 250).crash("n3", 250).end(400).h(),
			want:    True,
			explain: []string{"no node was live at 0.300s"},
		},
		{
			name:    "the history ends before the deadline",
			h:       base().agree("n3", 250, n3...).end(299).h(),
			want:    Unknown,
			explain: []string{"the history ends at 0.299s, before the termination deadline 0.300s (100ms after the last nemesis event (partition end) at 0.200s)"},
		},
		{
			name:    "a killed history that ends before the deadline",
			h:       base().agree("n3", 250, n3...).h(),
			want:    Unknown,
			explain: []string{"find why it was killed"},
		},
		{
			name:  "a killed history that reaches the deadline is judged",
			h:     base().agree("n3", 250, "n2", "n3").leader("n1", "n3", 500).h(),
			want:  False,
			nodes: []string{"n1"},
		},
		{
			name:    "an elect request after the last fault moves the deadline",
			h:       base().invoke("elect", 250).agree("n3", 320, n3...).end(400).h(),
			want:    True,
			explain: []string{"100ms after the last elect request at 0.250s"},
		},
		{
			name: "other requests do not move the deadline",
			h:    base().invoke("read", 250).agree("n3", 320, n3...).end(400).h(),
			want: False,
		},
		{
			name:    "without faults the deadline is measured from the first event",
			h:       hist(n3...).termination(100).starts(0, n3...).agree("n3", 50, n3...).end(100).h(),
			want:    True,
			explain: []string{"after the first event at 0.000s"},
		},
		{
			name:    "without a bound the deadline is one second",
			h:       hist(n3...).starts(0, n3...).agree("n3", 999, n3...).end(999).h(),
			want:    Unknown,
			explain: []string{"before the termination deadline 1.000s (1s after"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "termination", tt.h)
			if r.Valid != tt.want {
				t.Fatalf("got %v (%s), want %v", r.Valid, r.Explanation, tt.want)
			}
			if tt.nodes != nil && !slices.Equal(r.Nodes, tt.nodes) {
				t.Errorf("nodes: got %v, want %v", r.Nodes, tt.nodes)
			}
			if tt.evidence != nil && !slices.Equal(indexes(r.Evidence), tt.evidence) {
				t.Errorf("evidence: got %v, want %v", indexes(r.Evidence), tt.evidence)
			}
			for _, s := range tt.explain {
				if !strings.Contains(r.Explanation, s) {
					t.Errorf("explanation %q: want it to contain %q", r.Explanation, s)
				}
			}
		})
	}
}
