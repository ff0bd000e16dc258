package checks

import (
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestValidity(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	tests := []struct {
		name     string
		h        *history.History
		want     Validity
		nodes    []string
		evidence []int64
		explain  []string
	}{
		{
			name: "max: the highest id is elected",
			h:    hist(n3...).starts(0, n3...).agree("n3", 10, n3...).end(100).h(),
			want: True,
		},
		{
			name:     "max: a lower id is elected",
			h:        hist(n3...).starts(0, n3...).agree("n2", 10, n3...).end(100).h(),
			want:     False,
			nodes:    []string{"n1", "n2", "n3"},
			evidence: []int64{3, 4},
			explain:  []string{"n1, n2 and n3 believe in n2 (id 2), but n3 (id 3) is live; n3, the live node with the highest id, should have been elected"},
		},
		{
			name: "max: ids in another order",
			h:    hist(n3...).ids(5, 9, 2).starts(0, n3...).agree("n2", 10, n3...).end(100).h(),
			want: True,
		},
		{
			name: "max: the highest live id, after the highest crashed",
			h:    hist(n3...).starts(0, n3...).agree("n3", 10, n3...).crash("n3", 20).agree("n2", 30, "n1", "n2").end(100).h(),
			want: True,
		},
		{
			name: "min: the smallest id is elected",
			h:    hist(n3...).elects("min").starts(0, n3...).agree("n1", 10, n3...).end(100).h(),
			want: True,
		},
		{
			name:    "min: a higher id is elected",
			h:       hist(n3...).elects("min").starts(0, n3...).agree("n3", 10, n3...).end(100).h(),
			want:    False,
			explain: []string{"n1, the live node with the smallest id, should have been elected"},
		},
		{
			name:     "a dead leader is believed in",
			h:        hist(n3...).starts(0, n3...).agree("n3", 10, n3...).crash("n3", 20).end(100).h(),
			want:     False,
			nodes:    []string{"n1", "n2", "n3"},
			evidence: []int64{2, 4, 7},
			explain:  []string{"n1 and n2 believe in n3, but n3 is not live (crashed at 0.020s)", "n2, the live node with the highest id, should have been elected"},
		},
		{
			name: "nodes stopped at the end of the run still count as live",
			h:    hist(n3...).starts(0, n3...).agree("n3", 10, n3...).stop("n1", 90).stop("n2", 90).stop("n3", 90).end(100).h(),
			want: True,
		},
		{
			name:    "a wrong leader is judged before the harness stops the nodes",
			h:       hist(n3...).starts(0, n3...).agree("n2", 10, n3...).stop("n1", 90).stop("n2", 90).stop("n3", 90).end(100).h(),
			want:    False,
			explain: []string{"n3, the live node with the highest id, should have been elected"},
		},
		{
			name: "any elects: a live leader is valid",
			h:    hist(n3...).elects("").starts(0, n3...).agree("n1", 10, n3...).end(100).h(),
			want: True,
		},
		{
			name:    "any elects: a dead leader is not",
			h:       hist(n3...).elects("").starts(0, n3...).agree("n1", 10, "n2", "n3").exit("n1", 20).end(100).h(),
			want:    False,
			explain: []string{"n1 is not live (exited at 0.020s)", "a live node should have been elected"},
		},
		{
			name:    "a leader that never started",
			h:       hist(n3...).starts(0, "n1", "n2").agree("n9", 10, "n1", "n2").end(100).h(),
			want:    False,
			explain: []string{"n9 never started"},
		},
		{
			name: "no node believes in a leader",
			h:    hist(n3...).starts(0, n3...).end(100).h(),
			want: True,
		},
		{
			name:    "a live leader with no election id",
			h:       hist(n3...).starts(0, n3...).start("x", 0).agree("x", 10, n3...).end(100).h(),
			want:    Unknown,
			explain: []string{"x, which has no election id"},
		},
		{
			name: "elects names no known rule",
			h:    hist(n3...).elects("median").starts(0, n3...).agree("n2", 10, n3...).end(100).h(),
			want: Unknown,
		},
		{
			name:    "a killed history is judged at its last event",
			h:       hist(n3...).starts(0, n3...).agree("n3", 10, n3...).h(),
			want:    True,
			explain: []string{"the run was killed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "validity", tt.h)
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
