package catalogue

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// A run whose only finding is a node's own exit fails in the JUnit file,
// its message the exit's sentence and its output the end of the node's
// log.
func TestJUnitHoldsAnExit(t *testing.T) {
	h := &history.History{Meta: history.Meta{Scenario: "s", Algorithm: "x", Nodes: []string{"n1", "n2"}, Checks: []string{"two-leaders"}}, Ended: true}
	for i, e := range []history.Event{
		{Kind: history.KindProcess, Node: "n1", What: history.ProcStart, Incarnation: 1},
		{Kind: history.KindProcess, Node: "n2", What: history.ProcStart, Incarnation: 1},
		{Time: 1_360_000_000, Kind: history.KindProcess, Node: "n2", What: history.ProcExit, Incarnation: 1, Detail: "exit status 1", Tail: []string{"TypeError: x is undefined"}},
		{Time: 2_000_000_000, Kind: history.KindEnd},
	} {
		e.Index = int64(i + 1)
		h.Events = append(h.Events, e)
	}
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	plan := []Run{Planned("s", "scenarios/s.toml", 1, 1)}
	c := New(t0, plan)
	c.Record(0, plan[0].Finish(res, "store/s/1", t0, 0, nil), t0)
	c.Stop(false, t0)
	var b bytes.Buffer
	if err := c.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var doc xSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 {
		t.Fatalf("junit: %s", b.String())
	}
	k := doc.Suites[0].Cases[0]
	if k.Failure == nil || !strings.HasPrefix(k.Failure.Message, "n2 exited on its own at 1.360s (exit status 1)") {
		t.Errorf("failure %+v, want the exit's sentence", k.Failure)
	}
	if !strings.Contains(k.SystemOut, "| TypeError: x is undefined") {
		t.Errorf("system-out %q lacks the end of n2's log", k.SystemOut)
	}
}
