package main

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/verdict"
)

// The progress line names each kind by its check and cause, is whole in a
// file and cut to the terminal's width on one, and counts the runs whose
// faults never fired; a new kind's line agrees with the counts (a
// violation the scenario expects is no failure "a new way").
func TestCampaignLines(t *testing.T) {
	tally := explore.NewTally()
	start := explore.RunResult{Run: 1, Outcome: verdict.AsExpected, Valid: "false",
		Signature: "two-leaders: nodes both believed they were the leader (at start-up, before any fault)"}
	restart := explore.RunResult{Run: 2, Outcome: verdict.Unexpected, Valid: "false", Unfired: 1,
		Signature: "two-leaders: nodes both believed they were the leader (restarted under the same id; no fault in force)"}
	tally.Add(start)
	tally.Add(restart)
	p := explore.CampaignProgress{Runs: 2, Budget: 100, Behaviours: 12, Corpus: 3, Tally: tally}
	whole := campaignLine(p, time.Second, 0)
	for _, want := range []string{"two-leaders (at start-up) 1", "two-leaders (restarted under the same id) 1", "1 run with a fault that never fired"} {
		if !strings.Contains(whole, want) {
			t.Errorf("the line does not say %q: %s", want, whole)
		}
	}
	if cut := campaignLine(p, time.Second, statusWidth); len([]rune(cut)) > statusWidth || !strings.HasSuffix(cut, "…") {
		t.Errorf("on a terminal the line is not cut to %d: %s", statusWidth, cut)
	}
	groups := tally.Groups()
	var words []string
	for _, g := range groups {
		words = append(words, newKindWords(g))
	}
	if words[0] != "showed a violation the scenario expects, a new kind" || words[1] != "failed a new way" {
		t.Errorf("new kinds said as %q", words)
	}
	if tally.AsExpected != 1 || tally.Unexpected != 1 {
		t.Errorf("counts %d as expected, %d unexpected", tally.AsExpected, tally.Unexpected)
	}
}

// The summary says how many runs had faults that never fired, and, for a
// kind of failure, which other checks failed in its runs besides the one
// its signature names.
func TestCampaignSummarySaysUnfiredAndAlso(t *testing.T) {
	tally := explore.NewTally()
	sig := "two-leaders: nodes both believed they were the leader (cut off; in force: partition)"
	tally.Add(explore.RunResult{Run: 1, Outcome: verdict.AsExpected, Valid: "true", Unfired: 2, Idle: true})
	tally.Add(explore.RunResult{Run: 2, Outcome: verdict.Unexpected, Valid: "false", Signature: sig})
	tally.Add(explore.RunResult{Run: 3, Outcome: verdict.Unexpected, Valid: "false", Signature: sig, Also: []string{"agreement"}})
	tally.Add(explore.RunResult{Run: 4, Outcome: verdict.Unexpected, Valid: "false", Signature: sig, Also: []string{"lost-writes"}})
	out := captureStdout(t, func() { printGroups(tally, func(*explore.RunGroup) string { return "" }) })
	for _, want := range []string{
		"faults that never fired: 2 faults in 1 run of 4",
		"in 1 run no fault of the schedule happened at all",
		"  " + sig + " (not as expected)",
		"other checks that failed too, of its 3 runs: agreement in 1, lost-writes in 1",
		"first at run 2:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary does not say %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, sig); n != 1 {
		t.Errorf("the one cause is %d lines, want 1:\n%s", n, out)
	}
}

func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	f()
	os.Stdout = old
	w.Close()
	return <-done
}

// The summary lists kinds in the order of their first runs, and the
// machine's findings (an overlap at start-up, before any fault; a kind
// whose every run had late timers) apart, after those of the system; a
// campaign whose only finding is the machine's says no run failed after
// a fault.
func TestCampaignSummaryMachineApart(t *testing.T) {
	startUp := "two-leaders: nodes both believed they were the leader (at start-up, before any fault)"
	cut := "two-leaders: nodes both believed they were the leader (cut off; in force: partition)"
	restart := "two-leaders: nodes both believed they were the leader (restarted under the same id; no fault in force)"
	late := "timers ran late past the scenario's bounds (faults[0]#1 began 126ms after it was due; the transition time is 3ms): from the machine, maybe"

	only := explore.NewTally()
	only.Add(explore.RunResult{Run: 1, Outcome: verdict.Unexpected, Valid: "false", Signature: startUp})
	out := captureStdout(t, func() { printGroups(only, func(*explore.RunGroup) string { return "" }) })
	machine := strings.Index(out, "from the machine, not the schedules' faults")
	if !strings.Contains(out, "no failure after a fault of a schedule") || machine < 0 || strings.Index(out, startUp) < machine {
		t.Errorf("a start-up overlap alone is not said apart:\n%s", out)
	}

	tally := explore.NewTally()
	tally.Add(explore.RunResult{Run: 1, Outcome: verdict.Unexpected, Valid: "false", Signature: startUp, Causes: []string{cut}})
	tally.Add(explore.RunResult{Run: 2, Outcome: verdict.Unexpected, Valid: "false", Signature: restart, Machine: late})
	for i := 3; i <= 5; i++ {
		tally.Add(explore.RunResult{Run: i, Outcome: verdict.Unexpected, Valid: "false", Signature: cut})
	}
	out = captureStdout(t, func() { printGroups(tally, func(*explore.RunGroup) string { return "" }) })
	machine = strings.Index(out, "from the machine")
	at := func(s string) int { return strings.Index(out, "  "+s+" (") }
	if !(at(cut) >= 0 && at(cut) < machine && machine < at(startUp) && machine < at(restart) && at(startUp) < at(restart)) {
		t.Errorf("want the cut-off overlap (first at run 1, 4 runs) among the system's, then the machine's, start-up before the late run:\n%s", out)
	}
	for _, want := range []string{"4 of 5 runs", late, "timers ran late past the scenario's bounds in 1 of its 1 runs"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary does not say %q:\n%s", want, out)
		}
	}
}
