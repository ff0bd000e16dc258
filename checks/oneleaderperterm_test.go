package checks

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestOneLeaderPerTerm(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	tests := []struct {
		name     string
		h        *history.History
		want     Validity
		nodes    []string
		interval *Interval
		evidence []int64
		figures  map[string]any
		explain  []string // substrings of the explanation
	}{
		{
			name:    "no term anywhere: unknown",
			h:       hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 20).end(100).h(),
			want:    Unknown,
			explain: []string{"no leader report carries a term"},
		},
		{
			name:    "no leader report at all: unknown, for want of any",
			h:       hist(n3...).starts(0, n3...).end(100).h(),
			want:    Unknown,
			explain: []string{"no node reported a leader, so there is nothing to judge"},
		},
		{
			// Real servers' reports are coup's observations: the advice
			// is theirs, not a protocol node's.
			name:    "real servers observed to believe in no one: unknown, for want of an election",
			h:       hist(n3...).servers().starts(0, n3...).end(100).h(),
			want:    Unknown,
			explain: []string{"coup observed no server's belief of the leader", "before the servers' first election"},
		},
		{
			name:    "real servers' reports without a term: unknown, and where coup reads terms",
			h:       hist(n3...).servers().starts(0, n3...).leader("n1", "n1", 10).end(100).h(),
			want:    Unknown,
			explain: []string{"no leader report carries a term", "[[server.log]]", "docs/servers.md"},
		},
		{
			name:    "a term only on a report from a node that is not live: unknown",
			h:       hist(n3...).starts(0, "n1", "n2").claim("n3", 1, 10).leader("n1", "n1", 20).end(100).h(),
			want:    Unknown,
			explain: []string{"no leader report carries a term"},
		},
		{
			name:    "terms on followers' reports only: nothing claimed in a term",
			h:       hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leaderIn("n2", "n1", 1, 12).end(100).h(),
			want:    True,
			figures: map[string]any{"claims": 0, "terms": 0, "contested_terms": 0, "claims_without_term": 1},
			explain: []string{"(0 claims in 0 terms); 1 claim without a term could not be judged"},
		},
		{
			name: "a stale leader in a lower term overlaps the new one: one leader per term",
			h: hist(n3...).starts(0, n3...).claim("n1", 1, 10).claim("n2", 2, 40).
				leaderIn("n1", "n2", 2, 90).end(100).h(),
			want:    True,
			figures: map[string]any{"claims": 2, "terms": 2, "contested_terms": 0},
			explain: []string{"no two nodes claimed leadership in the same term (2 claims in 2 terms: term 1 n1, term 2 n2)"},
		},
		{
			name: "the same node claims its term again after stepping down and after a restart",
			h: hist(n3...).starts(0, n3...).claim("n1", 1, 10).leaderIn("n1", "", 1, 20).claim("n1", 1, 30).
				crash("n1", 40).start("n1", 50).claim("n1", 1, 60).end(100).h(),
			want:    True,
			figures: map[string]any{"claims": 3, "terms": 1, "contested_terms": 0},
		},
		{
			name: "repeating a claim is one claim",
			h:    hist(n3...).starts(0, n3...).claim("n1", 1, 10).claim("n1", 1, 20).end(100).h(),
			want: True, figures: map[string]any{"claims": 1, "terms": 1, "contested_terms": 0},
		},
		{
			name: "a node that believes another leads in its term does not claim it",
			h:    hist(n3...).starts(0, n3...).claim("n1", 1, 10).leaderIn("n2", "n1", 1, 11).leaderIn("n3", "n1", 1, 12).end(100).h(),
			want: True, figures: map[string]any{"claims": 1, "terms": 1, "contested_terms": 0},
		},
		{
			name:     "two nodes claim one term at once",
			h:        hist(n3...).starts(0, n3...).claim("n1", 4, 10).claim("n2", 4, 20).end(100).h(),
			want:     False,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(10), To: ms(20)},
			evidence: []int64{4, 5},
			figures:  map[string]any{"claims": 2, "terms": 1, "contested_terms": 1},
			explain:  []string{"n1 and n2 both claimed leadership in term 4: n1 claimed it at 0.010s, and n2 claimed it at 0.020s, while n1's claim still stood"},
		},
		{
			name: "a crashed node's claim still counts: the term was taken",
			h: hist(n3...).starts(0, n3...).claim("n1", 5, 10).crash("n1", 20).
				claim("n2", 5, 30).end(100).h(),
			want:     False,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(10), To: ms(30)},
			evidence: []int64{4, 5, 6},
			explain:  []string{"and n2 claimed it at 0.030s, after n1's claim had ended when n1 crashed at 0.020s"},
		},
		{
			name: "the latest claim of the first claimant is named, with its restart",
			h: hist(n3...).starts(0, n3...).claim("n1", 5, 10).crash("n1", 20).start("n1", 25).claim("n1", 5, 30).
				claim("n2", 5, 40).end(100).h(),
			want:     False,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(30), To: ms(40)},
			evidence: []int64{7, 8},
			explain:  []string{"n1 claimed it at 0.030s (restarted under the same id at 0.025s after it crashed at 0.020s), and n2"},
		},
		{
			name: "several contested terms are counted; claims without a term are not judged",
			h: hist(n3...).starts(0, n3...).claim("n1", 1, 10).leader("n3", "n3", 15).claim("n2", 1, 20).
				claim("n3", 2, 30).claim("n1", 2, 40).end(100).h(),
			want:     False,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(10), To: ms(20)},
			evidence: []int64{4, 6},
			figures:  map[string]any{"claims": 4, "terms": 2, "contested_terms": 2, "claims_without_term": 1},
			explain:  []string{"; 2 terms had more than one claimant in all; 1 claim without a term could not be judged"},
		},
		{
			name: "a claim by a node that never started is ignored",
			h:    hist(n3...).starts(0, "n1", "n2").claim("n1", 1, 10).claim("n3", 1, 20).end(100).h(),
			want: True, figures: map[string]any{"claims": 1, "terms": 1, "contested_terms": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "one-leader-per-term", tt.h)
			if r.Valid != tt.want {
				t.Fatalf("got %v (%s), want %v", r.Valid, r.Explanation, tt.want)
			}
			for k, v := range tt.figures {
				if got := r.Figures[k]; got != v {
					t.Errorf("figure %s: got %v, want %v", k, got, v)
				}
			}
			for _, s := range tt.explain {
				if !strings.Contains(r.Explanation, s) {
					t.Errorf("explanation %q: want it to contain %q", r.Explanation, s)
				}
			}
			if tt.want != False {
				return
			}
			if !slices.Equal(r.Nodes, tt.nodes) {
				t.Errorf("nodes: got %v, want %v", r.Nodes, tt.nodes)
			}
			if r.Interval == nil || *r.Interval != *tt.interval {
				t.Errorf("interval: got %v, want %v", r.Interval, tt.interval)
			}
			if !slices.Equal(indexes(r.Evidence), tt.evidence) {
				t.Errorf("evidence: got %v, want %v", indexes(r.Evidence), tt.evidence)
			}
		})
	}
}

// The explanation names each term's leader, in term order, up to a bound.
func TestTermHolders(t *testing.T) {
	holder := map[int64]*termClaim{}
	for i := int64(12); i >= 1; i-- {
		c := &termClaim{}
		c.node = fmt.Sprintf("n%d", i)
		holder[i*2] = c
	}
	got := termHolders(holder)
	want := "term 2 n1, term 4 n2, term 6 n3, term 8 n4, term 10 n5, term 12 n6, term 14 n7, term 16 n8, and 4 more"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
