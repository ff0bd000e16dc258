package checks

import (
	"testing"

	"github.com/coupharness/coup/history"
)

func TestEventualLeadership(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	// base: three nodes started at 0 (events 1–3) and a 100ms bound.
	base := func() *hb { return hist(n3...).stabilisation(100).starts(0, n3...) }
	// gst: the same with GST at 50ms, so the deadline is 150ms; every node
	// trusts n3 from 10ms (events 4–6) and n1 turns to itself at 60ms (7).
	gst := func() *hb {
		return hist(n3...).gst(50).stabilisation(100).starts(0, n3...).agree("n3", 10, n3...).leader("n1", "n1", 60)
	}
	runCases(t, "eventual-leadership", []verdictCase{
		{
			name:    "stable from the first election",
			h:       base().agree("n3", 10, n3...).stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"stabilised_ns": ms(10), "leader": "n3", "correct": 3, "deadline_ns": ms(100), "stable_for_ns": ms(190)},
			absent:  []string{"gst_ns", "after_gst_ns"},
			explain: []string{"every correct node (n1, n2 and n3) has trusted n3 since 0.010s, when n1, which started at 0.000s, first reported it, within the 100ms stabilisation bound after the start of the history at 0.000s (deadline 0.100s), and until the end of the run at 0.200s"},
		},
		{
			name:    "stabilises after GST, within the bound",
			h:       gst().leader("n1", "n3", 120).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"stabilised_ns": ms(120), "after_gst_ns": ms(70), "gst_ns": ms(50), "deadline_ns": ms(150)},
			explain: []string{"since 0.120s (70ms after GST), when n1 changed from n1 to n3, within the 100ms stabilisation bound after GST at 0.050s (deadline 0.150s)"},
		},
		{
			name:     "stabilises too late after GST",
			h:        gst().leader("n1", "n3", 180).stops(300, n3...).end(300).h(),
			want:     False,
			nodes:    []string{"n1"},
			interval: &Interval{From: ms(150), To: ms(180)},
			evidence: []int64{7, 8},
			figures:  map[string]any{"stabilised_ns": ms(180), "after_gst_ns": ms(130)},
			explain:  []string{"every correct node (n1, n2 and n3) has trusted n3 since 0.180s (130ms after GST), when n1 changed from n1 to n3: 30ms later than the 100ms stabilisation bound after GST at 0.050s (deadline 0.150s)"},
		},
		{
			name:    "stable from before GST",
			h:       hist(n3...).gst(50).stabilisation(100).starts(0, n3...).agree("n3", 10, n3...).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"after_gst_ns": ms(-40)},
			explain: []string{"since 0.010s (40ms before GST)"},
		},
		{
			name:    "stabilises on the last event, at the deadline",
			h:       base().agree("n3", 10, "n2", "n3").leader("n1", "n3", 100).stops(100, n3...).end(100).h(),
			want:    True,
			figures: map[string]any{"stabilised_ns": ms(100), "stable_for_ns": 0},
		},
		{
			name:     "stabilises on the last event, after the deadline",
			h:        base().agree("n3", 10, "n2", "n3").leader("n1", "n3", 101).stops(101, n3...).end(101).h(),
			want:     False,
			evidence: []int64{1, 6},
			explain:  []string{"when n1, which started at 0.000s, first reported it: 1ms later than the 100ms stabilisation bound"},
		},
		{
			name:    "a killed history that stabilises on its last event, too late",
			h:       base().agree("n3", 10, "n2", "n3").leader("n1", "n3", 150).h(),
			want:    False,
			explain: []string{"50ms later than the 100ms stabilisation bound", "the history has no end event (the run was killed), so this judges its last event at 0.150s"},
		},
		{
			name:     "the correct nodes still disagree at the end",
			h:        base().agree("n3", 10, "n1", "n3").leader("n2", "n2", 20).stops(200, n3...).end(200).h(),
			want:     False,
			nodes:    []string{"n1", "n3", "n2"},
			interval: &Interval{From: ms(100), To: ms(200)},
			evidence: []int64{4, 6},
			explain:  []string{"at the end of the run (0.200s) the correct nodes still disagree: n1 and n3 trust n3 (since 0.010s), n2 trusts n2 (since 0.020s), so leadership did not stabilise within the 100ms stabilisation bound after the start of the history at 0.000s (deadline 0.100s)"},
		},
		{
			name:     "a node that trusts nobody",
			h:        base().agree("n3", 10, "n1", "n3").stops(200, n3...).end(200).h(),
			want:     False,
			evidence: []int64{2, 4},
			explain:  []string{"n1 and n3 trust n3 (since 0.010s), n2 trusts no leader (since 0.000s)"},
		},
		{
			name:     "every correct node trusts a crashed node",
			h:        base().agree("n3", 10, n3...).crash("n3", 50).stops(200, "n1", "n2").end(200).h(),
			want:     False,
			nodes:    []string{"n3", "n1", "n2"},
			evidence: []int64{4, 7},
			explain:  []string{"every correct node (n1 and n2) trusts n3, which is not correct: n3 crashed at 0.050s"},
		},
		{
			name:     "every correct node trusts a node paused to the end",
			h:        base().agree("n3", 10, n3...).pause("n3", 50).stops(200, n3...).end(200).h(),
			want:     False,
			evidence: []int64{4, 7},
			explain:  []string{"trusts n3, which is not correct: n3 has been paused since 0.050s"},
		},
		{
			name:    "a node paused at the end is not correct and does not count",
			h:       base().agree("n3", 10, n3...).leader("n1", "n1", 30).pause("n1", 40).stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"correct": 2, "stabilised_ns": ms(10)},
		},
		{
			name:    "a node paused and resumed keeps its belief and counts",
			h:       base().agree("n3", 10, n3...).pause("n1", 40).resume("n1", 60).stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"correct": 3, "stabilised_ns": ms(10)},
		},
		{
			name:    "a crashed node does not count",
			h:       base().agree("n3", 10, "n2", "n3").leader("n1", "n1", 10).crash("n1", 30).stops(200, "n2", "n3").end(200).h(),
			want:    True,
			figures: map[string]any{"correct": 2},
		},
		{
			name:    "a node restarted under the same id counts from its restart",
			h:       base().agree("n3", 10, n3...).crash("n1", 50).start("n1", 60).leader("n1", "n3", 70).stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"correct": 3, "stabilised_ns": ms(70)},
			explain: []string{"has trusted n3 since 0.070s, when n1, which was restarted under the same id at 0.060s, first reported it"},
		},
		{
			name:     "a restarted node that never learns the leader",
			h:        base().agree("n3", 10, n3...).crash("n1", 50).start("n1", 60).stops(200, n3...).end(200).h(),
			want:     False,
			evidence: []int64{5, 8},
			explain:  []string{"n1 trusts no leader (since 0.060s), n2 and n3 trust n3 (since 0.010s)"},
		},
		{
			name:    "a change and back at one instant is still a change",
			h:       base().agree("n3", 10, n3...).leader("n1", "n2", 40).leader("n1", "n3", 40).stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"stabilised_ns": ms(40)},
		},
		{
			name: "reports after the harness began stopping nodes are not judged",
			h: base().agree("n3", 10, n3...).stop("n1", 200).leader("n2", "n2", 200).
				stop("n2", 200).stop("n3", 200).end(200).h(),
			want: True,
		},
		{
			name:    "stable, but the run ends before the deadline",
			h:       hist(n3...).starts(0, n3...).agree("n3", 10, n3...).stops(500, n3...).end(500).h(),
			want:    Unknown,
			figures: map[string]any{"bound_ns": ms(1000)},
			explain: []string{"has trusted n3 since 0.010s", "but the run ends at 0.500s, before the 1s termination bound (the scenario sets no stabilisation bound) after the first event at 0.000s (deadline 1.000s), so whether it stays so until the deadline is unknown"},
		},
		{
			name: "without a stabilisation bound, the termination deadline applies",
			h: hist(n3...).termination(100).starts(0, n3...).agree("n3", 10, n3...).nemesis("crash", history.PhaseStart, 50, "n3").
				crash("n3", 50).agree("n2", 140, "n1", "n2").stops(300, "n1", "n2").end(300).h(),
			want:    True,
			figures: map[string]any{"reference_ns": ms(50), "deadline_ns": ms(150), "stabilised_ns": ms(140)},
			explain: []string{"within the 100ms termination bound (the scenario sets no stabilisation bound) after the last nemesis event (crash start) at 0.050s (deadline 0.150s)"},
		},
		{
			name:    "without a stabilisation bound, too late for the termination deadline",
			h:       hist(n3...).termination(100).starts(0, n3...).agree("n3", 10, n3...).elect("n1", 50).agree("n2", 160, n3...).stops(300, n3...).end(300).h(),
			want:    False,
			explain: []string{"10ms later than the 100ms termination bound (the scenario sets no stabilisation bound) after the last elect request at 0.050s (deadline 0.150s)"},
		},
		{
			name:    "without a stabilisation bound, GST counts when it is later",
			h:       hist(n3...).termination(100).gst(80).starts(0, n3...).agree("n3", 10, n3...).elect("n1", 50).agree("n2", 160, n3...).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"reference_ns": ms(80), "deadline_ns": ms(180)},
		},
		{
			name:    "unstable, and the run ends before the deadline",
			h:       base().agree("n3", 10, "n1", "n3").leader("n2", "n2", 20).stops(50, n3...).end(50).h(),
			want:    Unknown,
			explain: []string{"the correct nodes still disagree", "so whether leadership stabilises in time is unknown"},
		},
		{
			name:    "no correct node",
			h:       base().agree("n3", 10, n3...).crash("n1", 20).crash("n2", 20).crash("n3", 20).end(200).h(),
			want:    True,
			explain: []string{"no node is correct at the end of the run (0.200s)"},
		},
		{
			name:    "every correct node trusts a node that never started",
			h:       hist("n1", "n2", "n9").stabilisation(100).starts(0, "n1", "n2").agree("n9", 10, "n1", "n2").stops(200, "n1", "n2").end(200).h(),
			want:    False,
			explain: []string{"trusts n9, which is not correct: n9 never started"},
		},
	})
}
