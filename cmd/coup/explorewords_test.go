package main

import (
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
