package verdict

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
)

// readyHistory is a run of three real servers (meta.Ready "port": nothing
// was waited for) in which n1 is cut off at faultAt, and the cluster is
// first seen ready at readyAt (never, when readyAt is negative).
func readyHistory(t *testing.T, waited string, faultAt, readyAt time.Duration) *history.History {
	t.Helper()
	term := int64(1)
	ev := []history.Event{
		{Kind: history.KindMeta, Meta: &history.Meta{Scenario: "s", Algorithm: "server", Nodes: []string{"n1", "n2", "n3"}, IDs: []int{1, 2, 3},
			Checks: []string{"one-leader-per-term"}, Expect: &history.Expect{Valid: true}, Ready: waited}},
		{Kind: history.KindProcess, Node: "n1", What: history.ProcStart},
		{Kind: history.KindProcess, Node: "n2", What: history.ProcStart},
		{Kind: history.KindProcess, Node: "n3", What: history.ProcStart},
		{Kind: history.KindReport, Node: "n1", What: history.ReportLeader, Value: "n1", Term: &term, Time: int64(500 * time.Millisecond)},
		{Kind: history.KindNemesis, Name: "faults[0]#1", What: "partition", Phase: history.PhaseStart, Nodes: []string{"n1"}, Time: int64(faultAt)},
		{Kind: history.KindNemesis, Name: "faults[0]#1", What: "partition", Phase: history.PhaseEnd, Nodes: []string{"n1"}, Time: int64(faultAt + time.Second)},
	}
	if readyAt >= 0 {
		ev = append(ev,
			history.Event{Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: "n1", Term: &term, Time: int64(readyAt)},
			history.Event{Kind: history.KindReport, Node: "n3", What: history.ReportLeader, Value: "n1", Term: &term, Time: int64(readyAt)},
			history.Event{Kind: history.KindReady, Value: "n1", Term: &term, Time: int64(readyAt), Detail: "n1 leads (term 1); n2 follows n1 (term 1); n3 follows n1 (term 1)"})
	}
	ev = append(ev, history.Event{Kind: history.KindEnd, Time: int64(5 * time.Second)})
	// Events are kept in the order of their times, as a recorder writes
	// them.
	for i := 1; i < len(ev); i++ {
		for j := i; j > 1 && ev[j].Time < ev[j-1].Time; j-- {
			ev[j], ev[j-1] = ev[j-1], ev[j]
		}
	}
	for i := range ev {
		ev[i].Index = int64(i)
	}
	h, err := history.FromEvents(ev)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The verdict says when a fault began before the cluster was seen ready,
// naming the fault and the moment, in the results' notes (which the
// report shows) and in their ready section; a fault after it, or a
// history whose driver does not watch the cluster form, has no such note.
func TestVerdictNamesAFaultBeforeReady(t *testing.T) {
	r, err := Evaluate(readyHistory(t, "port", time.Second, 2300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if r.Ready == nil || !r.Ready.Seen || r.Ready.At != int64(2300*time.Millisecond) {
		t.Fatalf("ready %+v, want seen at 2.3s", r.Ready)
	}
	if len(r.Ready.FaultsBefore) != 1 || r.Ready.FaultsBefore[0] != "faults[0]#1 partition [n1] at 1.000s" {
		t.Errorf("faults before ready %q", r.Ready.FaultsBefore)
	}
	note := strings.Join(r.Notes, "\n")
	for _, want := range []string{"a fault began before the cluster was ready", "faults[0]#1 partition [n1] at 1.000s", "first seen ready", "at 2.300s", "n3 follows n1"} {
		if !strings.Contains(note, want) {
			t.Errorf("notes %q do not say %q", r.Notes, want)
		}
	}
	if r.Outcome != AsExpected {
		t.Errorf("outcome %s: the note changes no outcome", r.Outcome)
	}
	if !strings.Contains(r.Summary(), "note: a fault began before the cluster was ready") {
		t.Errorf("the summary does not show the note:\n%s", r.Summary())
	}
	// The note survives a run that is then marked failed.
	r.Failed(errors.New("interrupted"))
	if !strings.Contains(strings.Join(r.Notes, "\n"), "before the cluster was ready") {
		t.Errorf("after Failed, notes %q", r.Notes)
	}

	never, err := Evaluate(readyHistory(t, "port", time.Second, -1))
	if err != nil {
		t.Fatal(err)
	}
	if never.Ready == nil || never.Ready.Seen || !strings.Contains(strings.Join(never.Notes, "\n"), "before the cluster was ever seen ready") {
		t.Errorf("never ready: %+v, notes %q", never.Ready, never.Notes)
	}

	after, err := Evaluate(readyHistory(t, "followers", 3*time.Second, 2300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if after.Ready == nil || len(after.Ready.FaultsBefore) != 0 || strings.Contains(strings.Join(after.Notes, "\n"), "ready") {
		t.Errorf("a fault after ready: %+v, notes %q", after.Ready, after.Notes)
	}

	unwatched, err := Evaluate(readyHistory(t, "", time.Second, -1))
	if err != nil {
		t.Fatal(err)
	}
	if unwatched.Ready != nil || len(unwatched.Notes) != 0 || unwatched.Outcome != AsExpected {
		t.Errorf("a history whose driver does not watch the cluster form: %+v, notes %q", unwatched.Ready, unwatched.Notes)
	}
}
