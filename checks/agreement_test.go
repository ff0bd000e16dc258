package checks

import (
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestAgreement(t *testing.T) {
	n4 := []string{"n1", "n2", "n3", "n4"}
	tests := []struct {
		name     string
		h        *history.History
		want     Validity
		nodes    []string
		evidence []int64
		explain  []string
	}{
		{
			name:    "all agree",
			h:       hist(n4...).starts(0, n4...).agree("n4", 10, n4...).end(100).h(),
			want:    True,
			explain: []string{"n1, n2, n3 and n4 believe in n4"},
		},
		{
			name:    "one node believes in none",
			h:       hist(n4...).starts(0, n4...).agree("n4", 10, "n2", "n3", "n4").leader("n1", "", 20).end(100).h(),
			want:    True,
			explain: []string{"n1 believes in no leader, which termination judges"},
		},
		{
			name:     "nodes stopped by the harness at the end are judged as they were",
			h:        hist(n4...).starts(0, n4...).agree("n4", 10, "n1", "n4").agree("n3", 12, "n2", "n3").stop("n1", 90).stop("n2", 90).stop("n3", 90).stop("n4", 90).end(100).h(),
			want:     False,
			nodes:    []string{"n1", "n4", "n2", "n3"},
			evidence: []int64{5, 7},
			explain:  []string{"at the end of the run (0.090s)"},
		},
		{
			name: "no node believes in a leader",
			h:    hist(n4...).starts(0, n4...).end(100).h(),
			want: True,
		},
		{
			name:     "two groups disagree",
			h:        hist(n4...).starts(0, n4...).agree("n4", 10, "n1", "n4").agree("n3", 12, "n2", "n3").end(100).h(),
			want:     False,
			nodes:    []string{"n1", "n4", "n2", "n3"},
			evidence: []int64{5, 7},
			explain:  []string{"2 different leaders: n1 and n4 believe in n4 (since 0.010s), n2 and n3 believe in n3 (since 0.012s); they never converged on one"},
		},
		{
			name: "a dead node's belief does not count",
			h:    hist(n4...).starts(0, n4...).agree("n4", 10, n4...).leader("n1", "n1", 20).crash("n1", 30).end(100).h(),
			want: True,
		},
		{
			name: "a restarted node believes nothing until it reports",
			h: hist(n4...).starts(0, n4...).agree("n4", 10, n4...).leader("n1", "n1", 20).crash("n1", 30).
				start("n1", 40).end(100).h(),
			want: True,
		},
		{
			name:     "a restarted node that reports a different leader disagrees",
			h:        hist(n4...).starts(0, n4...).agree("n4", 10, "n2", "n3", "n4").crash("n1", 30).start("n1", 40).leader("n1", "n1", 50).end(100).h(),
			want:     False,
			nodes:    []string{"n1", "n2", "n3", "n4"},
			evidence: []int64{5, 10},
		},
		{
			name: "a paused node keeps its belief",
			h: hist(n4...).starts(0, n4...).agree("n4", 10, n4...).pause("n1", 20).agree("n3", 30, "n2", "n3", "n4").
				end(100).h(),
			want:  False,
			nodes: []string{"n1", "n2", "n3", "n4"},
		},
		{
			name:    "a killed history is judged at its last event",
			h:       hist(n4...).starts(0, n4...).agree("n4", 10, "n1", "n4").agree("n3", 12, "n2", "n3").h(),
			want:    False,
			explain: []string{"no end event (the run was killed), so this judges its last event at 0.012s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "agreement", tt.h)
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
