package checks

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestTwoLeaders(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	tests := []struct {
		name     string
		h        *history.History
		want     Validity
		nodes    []string
		interval *Interval
		evidence []int64
		overlaps int
		explain  []string // substrings of the explanation
	}{
		{
			name: "one leader",
			h:    hist(n3...).starts(0, n3...).leader("n3", "n3", 10).agree("n3", 12, "n1", "n2").end(100).h(),
			want: True,
		},
		{
			name:     "two claims overlap to the end",
			h:        hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 20).end(100).h(),
			want:     False,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(20), To: ms(100)},
			evidence: []int64{4, 5},
			overlaps: 1,
			explain:  []string{"n1 and n2 both believed they were the leader from 0.020s to 0.100s (80ms): n1 claimed leadership at 0.010s, and n2 claimed it at 0.020s while n1's claim still stood; both claims still stood when the history ended"},
		},
		{
			name: "claims touch: the old leader steps down first",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n1", "n2", 20).leader("n2", "n2", 20).end(100).h(),
			want: True,
		},
		{
			name: "claims touch: the new leader is recorded first",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 20).leader("n1", "n2", 20).end(100).h(),
			want: True,
		},
		{
			name: "claims overlap for a millisecond",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 20).leader("n1", "n2", 21).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(20), To: ms(21)},
			evidence: []int64{4, 5, 6},
			overlaps: 1,
			explain:  []string{"from 0.020s to 0.021s (1ms)"},
		},
		{
			name: "the later claim ends the overlap",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 20).leader("n2", "n1", 30).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(20), To: ms(30)},
			evidence: []int64{4, 5, 6},
			overlaps: 1,
		},
		{
			name: "a paused leader is still live",
			h: hist(n3...).starts(0, n3...).leader("n1", "n1", 10).pause("n1", 15).
				leader("n2", "n2", 30).crash("n1", 50).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(30), To: ms(50)},
			evidence: []int64{4, 6, 7},
			overlaps: 1,
			explain:  []string{"n1 claimed leadership at 0.010s (paused at 0.015s until it crashed at 0.050s, it kept that belief: a paused node is still live), and n2 claimed it at 0.030s while n1's claim still stood; the overlap ended when n1 crashed at 0.050s"},
		},
		{
			name: "a leader paused during the overlap",
			h: hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 30).
				pause("n1", 40).resume("n1", 60).leader("n1", "n2", 61).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(30), To: ms(61)},
			evidence: []int64{4, 5, 8},
			overlaps: 1,
			explain:  []string{"(paused from 0.040s to 0.060s, it kept that belief", "the overlap ended when n1 stepped down at 0.061s (it then believed in n2)"},
		},
		{
			name: "a leader paused and resumed before the overlap is not said to be paused",
			h: hist(n3...).starts(0, n3...).leader("n1", "n1", 10).pause("n1", 15).resume("n1", 20).
				leader("n2", "n2", 30).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(30), To: ms(100)},
			explain:  []string{"n1 claimed leadership at 0.010s, and"},
			overlaps: 1,
		},
		{
			name: "a crashed leader's claim ends at its crash",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).crash("n1", 20).leader("n2", "n2", 25).end(100).h(),
			want: True,
		},
		{
			name: "a crash and a new claim at the same instant touch",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).crash("n1", 20).leader("n2", "n2", 20).end(100).h(),
			want: True,
		},
		{
			name: "exit and stop end claims",
			h: hist(n3...).starts(0, n3...).leader("n1", "n1", 10).exit("n1", 20).leader("n2", "n2", 20).
				stop("n2", 30).leader("n3", "n3", 30).end(100).h(),
			want: True,
		},
		{
			name: "a restarted node's old claim does not count after its crash",
			h: hist(n3...).starts(0, n3...).leader("n1", "n1", 10).crash("n1", 20).
				leader("n2", "n2", 25).start("n1", 30).leader("n1", "n2", 35).end(100).h(),
			want: True,
		},
		{
			name: "a restarted node's new claim counts",
			h: hist(n3...).starts(0, n3...).leader("n1", "n1", 10).crash("n1", 20).
				leader("n2", "n2", 25).start("n1", 30).leader("n1", "n1", 40).end(100).h(),
			want: False, nodes: []string{"n2", "n1"},
			interval: &Interval{From: ms(40), To: ms(100)},
			evidence: []int64{6, 8},
			overlaps: 1,
		},
		{
			name: "a node replaced under the same id claims while the old leader still does",
			h: hist(n3...).starts(0, n3...).leader("n3", "n3", 10).agree("n3", 12, "n1", "n2").
				crash("n3", 100).start("n3", 102).leader("n2", "n2", 150).leader("n3", "n3", 160).
				leader("n2", "n3", 170).end(200).h(),
			want: False, nodes: []string{"n2", "n3"},
			interval: &Interval{From: ms(160), To: ms(170)},
			evidence: []int64{9, 10, 11},
			overlaps: 1,
			explain:  []string{"n2 and n3 both believed they were the leader from 0.160s to 0.170s (10ms): n2 claimed leadership at 0.150s, and n3 claimed it at 0.160s (restarted under the same id at 0.102s after it crashed at 0.100s) while n2's claim still stood; the overlap ended when n2 stepped down at 0.170s (it then believed in n3)"},
		},
		{
			name: "the harness's stop ends an overlap",
			h: hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 20).
				stop("n2", 90).stop("n1", 90).stop("n3", 90).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(20), To: ms(90)},
			evidence: []int64{4, 5, 7},
			overlaps: 1,
			explain:  []string{"; the overlap ended when the harness stopped n1 at the end of the run at 0.090s"},
		},
		{
			name: "a start while live begins a fresh incarnation",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).start("n1", 20).leader("n2", "n2", 20).end(100).h(),
			want: True,
		},
		{
			name: "a report read after the crash is ignored",
			h: hist(n3...).starts(0, n3...).leader("n1", "n2", 5).crash("n1", 20).leader("n2", "n2", 22).
				leader("n1", "n1", 25).end(100).h(),
			want: True,
		},
		{
			name: "a node that never started claims nothing",
			h:    hist(n3...).starts(0, "n1", "n2").leader("n1", "n1", 10).leader("n3", "n3", 20).end(100).h(),
			want: True,
		},
		{
			name: "repeating a claim does not begin a new one",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n1", "n1", 20).leader("n2", "n2", 30).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(30), To: ms(100)},
			evidence: []int64{4, 6},
			overlaps: 1,
			explain:  []string{"n1 claimed leadership at 0.010s"},
		},
		{
			name: "three leaders: the first overlap and three pairs",
			h: hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 20).leader("n3", "n3", 30).
				leader("n1", "n3", 40).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(20), To: ms(40)},
			evidence: []int64{4, 5, 7},
			overlaps: 3,
			explain:  []string{"3 pairs of claims overlap in all"},
		},
		{
			name: "two claims at the same instant",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 10).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(10), To: ms(100)},
			evidence: []int64{4, 5},
			overlaps: 1,
			explain:  []string{"from 0.010s to 0.100s (90ms): n1 and n2 both claimed leadership at 0.010s; both claims still stood when the history ended"},
		},
		{
			name: "a claim in the history's last instant overlaps nothing",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 100).end(100).h(),
			want: True,
		},
		{
			name: "a killed history: claims run to its last event",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 20).leader("n3", "n1", 50).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(20), To: ms(50)},
			evidence: []int64{4, 5},
			overlaps: 1,
		},
		{
			name: "with terms, a stale leader: the explanation and evidence name both terms",
			h: hist(n3...).starts(0, n3...).claim("n1", 1, 10).leaderIn("n2", "n1", 1, 11).
				claim("n2", 2, 40).leaderIn("n1", "n2", 2, 90).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(40), To: ms(90)},
			evidence: []int64{4, 6, 7},
			overlaps: 1,
			explain:  []string{"n1 claimed term 1 and n2 the higher term 2: n1 was a stale leader, which one-leader-per-term allows and stale-leader measures"},
		},
		{
			name: "with terms, two leaders in one term",
			h:    hist(n3...).starts(0, n3...).claim("n1", 4, 10).claim("n2", 4, 20).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(20), To: ms(100)},
			evidence: []int64{4, 5},
			overlaps: 1,
			explain:  []string{"both claimed term 4: two leaders in one term, which one-leader-per-term forbids"},
		},
		{
			name: "the term in force at the overlap, not the one the claim began with",
			h: hist(n3...).starts(0, n3...).claim("n1", 1, 10).claim("n1", 3, 20).claim("n2", 2, 40).
				leaderIn("n2", "n1", 3, 50).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(40), To: ms(50)},
			evidence: []int64{4, 5, 6, 7},
			overlaps: 1,
			explain:  []string{"n2 claimed term 2 and n1 the higher term 3: n2 was a stale leader"},
		},
		{
			name: "one claim without a term",
			h:    hist(n3...).starts(0, n3...).leader("n1", "n1", 10).claim("n2", 2, 20).end(100).h(),
			want: False, nodes: []string{"n1", "n2"},
			interval: &Interval{From: ms(20), To: ms(100)},
			evidence: []int64{4, 5},
			overlaps: 1,
			explain:  []string{"; n2 claimed term 2 and n1 gave no term"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "two-leaders", tt.h)
			if r.Valid != tt.want {
				t.Fatalf("got %v (%s), want %v", r.Valid, r.Explanation, tt.want)
			}
			if got := r.Figures["overlaps"]; got != tt.overlaps {
				t.Errorf("overlaps: got %v, want %d", got, tt.overlaps)
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

func TestTwoLeadersIgnoredReports(t *testing.T) {
	h := hist("n1", "n2").start("n1", 0).leader("n2", "n2", 5).leader("n1", "n1", 10).end(100).h()
	r := judge(t, "two-leaders", h)
	if got, want := r.Figures["ignored_reports"], 1; got != want {
		t.Errorf("ignored_reports: got %v, want %d", got, want)
	}
}

// TestViolationEvidenceCarriesReadings holds that a violation's evidence
// on a real server's history carries what each claim was read from: the
// log lines that began both claims, and the failed poll that cut one
// short.
func TestViolationEvidenceCarriesReadings(t *testing.T) {
	h, err := history.ReadFile("testdata/fixtures/etcd-two-leaders-evidence.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := judge(t, "two-leaders", h)
	if r.Valid != False || len(r.Violations) != 1 {
		t.Fatalf("got %v with %d violations, want one violation", r.Valid, len(r.Violations))
	}
	var got []string
	for _, e := range r.Violations[0].Evidence {
		for _, ev := range e.Evidence {
			got = append(got, fmt.Sprintf("%d %s:%d", e.Index, ev.From, ev.Line))
		}
	}
	want := []string{"4 n1.etcd.log:57", "9 n2.etcd.log:88", "11 http://10.77.0.1:2379/v3/maintenance/status:0"}
	if !slices.Equal(got, want) {
		t.Errorf("evidence read from %q, want %q", got, want)
	}
	if !strings.Contains(r.Explanation, "n1's belief became unknown at 4.700s") {
		t.Errorf("explanation %q does not say n1's belief became unknown", r.Explanation)
	}
}
