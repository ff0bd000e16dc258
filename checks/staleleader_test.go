package checks

import (
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestStaleLeader(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	// isolated: n1 leads in term 1; cut off, it goes on claiming while n2
	// is elected in term 2, and steps down 50ms later when it hears of it.
	isolated := func() *hb {
		return hist(n3...).starts(0, n3...).claim("n1", 1, 10).leaderIn("n2", "n1", 1, 11).
			claim("n2", 2, 40).leaderIn("n1", "n2", 2, 90)
	}
	tests := []struct {
		name     string
		h        *history.History
		want     Validity
		longest  int64 // ms
		stale    int
		nodes    []string
		interval *Interval
		evidence []int64
		explain  []string // substrings of the explanation
	}{
		{
			name:    "no term anywhere: unknown",
			h:       hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 20).end(100).h(),
			want:    Unknown,
			explain: []string{"no leader report carries a term"},
		},
		{
			name:    "one leader at a time",
			h:       hist(n3...).starts(0, n3...).claim("n1", 1, 10).leaderIn("n1", "", 1, 30).claim("n2", 2, 40).end(100).h(),
			want:    True,
			explain: []string{"no leader's claim overlapped another live node's claim in a higher term (2 claims)"},
		},
		{
			name:     "an isolated leader's window, without a bound",
			h:        isolated().end(100).h(),
			want:     True,
			longest:  50,
			stale:    1,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(40), To: ms(90)},
			evidence: []int64{4, 6, 7},
			explain:  []string{"the longest stale-leader window is 50ms: n1 claimed leadership in term 1 at 0.010s and still claimed it from 0.040s to 0.090s (50ms) while n2, live, claimed the higher term 2 (claimed at 0.040s); the window ended when n1 stepped down at 0.090s (it then believed in n2); no bound was given"},
		},
		{
			name:     "the same window within a bound",
			h:        isolated().staleBound(60).end(100).h(),
			want:     True,
			longest:  50,
			stale:    1,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(40), To: ms(90)},
			evidence: []int64{4, 6, 7},
			explain:  []string{"within the 60ms bound"},
		},
		{
			name:     "the same window past a bound",
			h:        isolated().staleBound(30).end(100).h(),
			want:     False,
			longest:  50,
			stale:    1,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(40), To: ms(90)},
			evidence: []int64{4, 6, 7},
			explain:  []string{"; this exceeds the 30ms bound ([checks] stale_leader in the scenario)"},
		},
		{
			name:    "a window exactly at the bound is within it",
			h:       isolated().staleBound(50).end(100).h(),
			want:    True,
			longest: 50,
			stale:   1,
		},
		{
			name: "the window ends when the higher claimant crashes",
			h: hist(n3...).starts(0, n3...).claim("n1", 1, 10).claim("n2", 2, 40).crash("n2", 60).
				leaderIn("n1", "", 1, 90).end(100).h(),
			want:     True,
			longest:  20,
			stale:    1,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(40), To: ms(60)},
			evidence: []int64{4, 5, 6},
			explain:  []string{"; the window ended when n2 crashed at 0.060s"},
		},
		{
			name:    "a crashed node's higher claim does not make a later claim stale",
			h:       hist(n3...).starts(0, n3...).claim("n2", 2, 10).crash("n2", 20).claim("n1", 1, 30).end(100).h(),
			want:    True,
			explain: []string{"no leader's claim overlapped"},
		},
		{
			name: "a paused higher claimant is live",
			h: hist(n3...).starts(0, n3...).claim("n1", 1, 10).claim("n2", 2, 40).pause("n2", 50).
				leaderIn("n1", "n3", 3, 80).end(100).h(),
			want:     True,
			longest:  40,
			stale:    1,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(40), To: ms(80)},
			evidence: []int64{4, 5, 7},
		},
		{
			name: "stale time with a gap is summed, and both higher claimants are named",
			h: hist(n3...).starts(0, n3...).claim("n1", 1, 0).claim("n2", 2, 20).leaderIn("n2", "", 2, 50).
				claim("n3", 3, 60).crash("n3", 90).leaderIn("n1", "n3", 3, 100).end(100).h(),
			want:     True,
			longest:  60,
			stale:    1,
			nodes:    []string{"n1", "n2", "n3"},
			interval: &Interval{From: ms(20), To: ms(90)},
			evidence: []int64{4, 5, 7, 8},
			explain:  []string{"still claimed it for 60ms in all between 0.020s and 0.090s while n2, live, claimed the higher term 2 (claimed at 0.020s), and later n3 term 3 (claimed at 0.060s); the window ended when n3 crashed at 0.090s"},
		},
		{
			name:    "two claims in one term are not stale (one-leader-per-term's business)",
			h:       hist(n3...).starts(0, n3...).claim("n1", 4, 10).claim("n2", 4, 20).end(100).h(),
			want:    True,
			explain: []string{"no leader's claim overlapped"},
		},
		{
			name:    "a claim without a term is not judged",
			h:       hist(n3...).starts(0, n3...).leader("n1", "n1", 10).claim("n2", 2, 20).end(100).h(),
			want:    True,
			explain: []string{"(1 claim); 1 claim without a term could not be judged"},
		},
		{
			name: "a node moving on to a higher term leaves the other stale",
			h: hist(n3...).starts(0, n3...).claim("n1", 1, 10).claim("n2", 2, 20).claim("n1", 3, 30).
				staleBound(40).end(100).h(),
			want:     False,
			longest:  70,
			stale:    2,
			nodes:    []string{"n2", "n1"},
			interval: &Interval{From: ms(30), To: ms(100)},
			evidence: []int64{5, 6},
			explain:  []string{"n2 claimed leadership in term 2 at 0.020s and still claimed it from 0.030s to 0.100s (70ms) while n1, live, claimed the higher term 3 (claimed at 0.030s); both claims still stood when the history ended; 2 of 3 claims were stale at some time; this exceeds the 40ms bound"},
		},
		{
			name: "claims that touch do not overlap",
			h: hist(n3...).starts(0, n3...).claim("n1", 1, 10).leaderIn("n1", "n2", 2, 40).claim("n2", 2, 40).
				end(100).h(),
			want: True,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "stale-leader", tt.h)
			if r.Valid != tt.want {
				t.Fatalf("got %v (%s), want %v", r.Valid, r.Explanation, tt.want)
			}
			for _, s := range tt.explain {
				if !strings.Contains(r.Explanation, s) {
					t.Errorf("explanation %q: want it to contain %q", r.Explanation, s)
				}
			}
			if tt.want == Unknown {
				return
			}
			if got := r.Figures["longest_ns"]; got != ms(tt.longest) {
				t.Errorf("longest_ns: got %v, want %d", got, ms(tt.longest))
			}
			if got := r.Figures["stale_claims"]; got != tt.stale {
				t.Errorf("stale_claims: got %v, want %d", got, tt.stale)
			}
			if tt.nodes == nil {
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
