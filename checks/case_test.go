package checks

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// verdictCase is one hand-made history and what a check must say about it.
// Fields left zero are not compared, except want.
type verdictCase struct {
	name     string
	h        *history.History
	want     Validity
	nodes    []string
	interval *Interval
	evidence []int64          // indexes of the evidence events
	explain  []string         // substrings of the explanation
	figures  map[string]any   // figures, compared as printed
	absent   []string         // figures that must not be set
	check    func(Result) any // anything else; returns nil or what is wrong
}

// runCases runs a check on each case.
func runCases(t *testing.T, check string, tests []verdictCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, check, tt.h)
			if r.Valid != tt.want {
				t.Fatalf("got %v (%s), want %v", r.Valid, r.Explanation, tt.want)
			}
			if tt.nodes != nil && !slices.Equal(r.Nodes, tt.nodes) {
				t.Errorf("nodes: got %v, want %v", r.Nodes, tt.nodes)
			}
			if tt.interval != nil && (r.Interval == nil || *r.Interval != *tt.interval) {
				t.Errorf("interval: got %v, want %v", r.Interval, tt.interval)
			}
			if tt.evidence != nil && !slices.Equal(indexes(r.Evidence), tt.evidence) {
				t.Errorf("evidence: got %v, want %v", indexes(r.Evidence), tt.evidence)
			}
			for _, s := range tt.explain {
				if !strings.Contains(r.Explanation, s) {
					t.Errorf("explanation %q: want it to contain %q", r.Explanation, s)
				}
			}
			for k, want := range tt.figures {
				got, ok := r.Figures[k]
				if !ok {
					t.Errorf("figure %s: missing, want %v", k, want)
					continue
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("figure %s: got %v, want %v", k, got, want)
				}
			}
			for _, k := range tt.absent {
				if v, ok := r.Figures[k]; ok {
					t.Errorf("figure %s: got %v, want none", k, v)
				}
			}
			if tt.check != nil {
				if bad := tt.check(r); bad != nil {
					t.Errorf("%v", bad)
				}
			}
		})
	}
}

// contains is strings.Contains, for tests that import nothing else.
func contains(s, sub string) bool { return strings.Contains(s, sub) }
