package verdict

import (
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
)

// exitHistory is a complete history of two nodes in which n2 exits on its
// own and, once the run ends, the harness stops n1; with expect naming the
// nodes that may exit.
func exitHistory(expect ...string) *history.History {
	h := &history.History{Meta: history.Meta{Scenario: "s", Algorithm: "x", Nodes: []string{"n1", "n2"},
		Checks: []string{"two-leaders"}, Expect: &history.Expect{Valid: true, Exits: expect}}, Ended: true}
	for i, e := range []history.Event{
		{Kind: history.KindProcess, Node: "n1", What: history.ProcStart, Incarnation: 1},
		{Kind: history.KindProcess, Node: "n2", What: history.ProcStart, Incarnation: 1},
		{Time: 1_360_000_000, Kind: history.KindProcess, Node: "n2", What: history.ProcExit, Incarnation: 1, Detail: "exit status 1", Tail: []string{"TypeError: x is undefined", "\x1b[2Kforged"}},
		{Time: 1_500_000_000, Kind: history.KindProcess, What: history.ProcPartExit, Process: "c1", Detail: "signal: killed"},
		{Time: 2_000_000_000, Kind: history.KindProcess, Node: "n1", What: history.ProcStop, Incarnation: 1},
		{Time: 2_000_000_000, Kind: history.KindEnd},
	} {
		e.Index = int64(i + 1)
		h.Events = append(h.Events, e)
	}
	return h
}

func TestOwnExitsMakeTheRunUnexpected(t *testing.T) {
	for _, c := range []struct {
		name    string
		expect  []string
		code    int
		expects []bool
	}{
		{"none expected", nil, ExitUnexpected, []bool{false, false}},
		{"one expected", []string{"n2"}, ExitUnexpected, []bool{true, false}},
		{"both expected", []string{"n2", "c1"}, ExitOK, []bool{true, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Evaluate(exitHistory(c.expect...))
			if err != nil {
				t.Fatal(err)
			}
			if res.Valid != checks.True || res.ExitCode != c.code {
				t.Errorf("got valid=%v exit %d, want true and %d: %v", res.Valid, res.ExitCode, c.code, res.Notes)
			}
			if len(res.Exits) != 2 {
				t.Fatalf("exits: %+v, want n2's and c1's", res.Exits)
			}
			n2, c1 := res.Exits[0], res.Exits[1]
			if n2.Process != "n2" || n2.Node != "n2" || n2.Status != "exit status 1" || n2.Time != 1_360_000_000 || len(n2.Log) != 2 || n2.Incarnation != 1 {
				t.Errorf("n2's exit: %+v", n2)
			}
			if c1.Process != "client c1" || c1.Status != "signal: killed" {
				t.Errorf("c1's exit: %+v", c1)
			}
			for i, x := range res.Exits {
				if x.Expected != c.expects[i] {
					t.Errorf("%s: expected %v, want %v", x.Process, x.Expected, c.expects[i])
				}
			}
			notes := strings.Join(res.Notes, "\n")
			want := 0
			for _, e := range c.expects {
				if !e {
					want++
				}
			}
			if got := strings.Count(notes, "exited on its own"); got != want {
				t.Errorf("notes name %d exits: %q", got, res.Notes)
			}
			s := res.Summary()
			if !strings.Contains(s, "exit: n2 exited on its own at 1.360s (exit status 1)") || !strings.Contains(s, "| TypeError: x is undefined") {
				t.Errorf("the summary does not show n2's exit and its log:\n%s", s)
			}
			if strings.Contains(s, "\x1b") {
				t.Errorf("the summary passes a control character from a log through:\n%q", s)
			}
			if c.code == ExitUnexpected && !strings.Contains(res.Headline, "exited on") {
				t.Errorf("the headline does not name the exit: %s", res.Headline)
			}
		})
	}
}

// An exit once the harness has begun stopping the nodes may be the end
// of the run's doing: no finding.
func TestExitDuringTheShutdownIsNoFinding(t *testing.T) {
	h := exitHistory()
	stop := h.Events[4] // n1's stop
	h.Events = append([]history.Event{h.Events[0], h.Events[1], stop}, h.Events[2:4]...)
	h.Events = append(h.Events, history.Event{Kind: history.KindEnd, Time: 2_000_000_000})
	for i := range h.Events {
		h.Events[i].Index = int64(i + 1)
	}
	h.Events[2].Time = 1_000_000_000
	res, err := Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exits) != 0 || res.ExitCode != ExitOK {
		t.Errorf("exits %+v, exit %d; want none and 0", res.Exits, res.ExitCode)
	}
}

// An exit the harness caused (a crash by the nemesis, a stop at the end)
// is no finding.
func TestFaultsAndStopsAreNoExits(t *testing.T) {
	h := exitHistory()
	h.Events = slices.DeleteFunc(h.Events, func(e history.Event) bool {
		return e.What == history.ProcExit || e.What == history.ProcPartExit
	})
	h.Events = append(h.Events[:2], append([]history.Event{{Index: 9, Time: 1, Kind: history.KindProcess, Node: "n2", What: history.ProcCrash, Incarnation: 1}}, h.Events[2:]...)...)
	res, err := Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exits) != 0 || res.ExitCode != ExitOK {
		t.Errorf("got exits %+v, exit %d; want none and 0", res.Exits, res.ExitCode)
	}
}

// The console gives a check's first violation and, when another is
// longer, the longest.
func TestSummaryGivesTheFirstAndTheLongest(t *testing.T) {
	h := &history.History{Meta: history.Meta{Scenario: "s", Algorithm: "x", Nodes: []string{"n1", "n2"}, Checks: []string{"two-leaders"}}, Ended: true}
	ms := int64(1e6)
	for i, e := range []history.Event{
		{Kind: history.KindProcess, Node: "n1", What: history.ProcStart, Incarnation: 1},
		{Kind: history.KindProcess, Node: "n2", What: history.ProcStart, Incarnation: 1},
		{Time: 10 * ms, Kind: history.KindReport, Node: "n1", What: history.ReportLeader, Value: "n1"},
		{Time: 100 * ms, Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: "n2"},
		{Time: 200 * ms, Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: "n1"},
		{Time: 400 * ms, Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: "n2"},
		{Time: 700 * ms, Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: "n1"},
		{Time: 1000 * ms, Kind: history.KindEnd},
	} {
		e.Index = int64(i + 1)
		h.Events = append(h.Events, e)
	}
	res, err := Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary()
	first := "n1 and n2 both believed they were the leader from 0.100s to 0.200s (100ms)"
	longest := "the longest of 2 (400ms in all): n1 and n2 both believed they were the leader from 0.400s to 0.700s (300ms)"
	if !strings.Contains(s, first) || !strings.Contains(s, longest) || strings.Index(s, first) > strings.Index(s, longest) {
		t.Errorf("the summary does not give the first and then the longest:\n%s", s)
	}
}
