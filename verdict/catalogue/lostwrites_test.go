package catalogue

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// A run whose acknowledged adds were lost fails in the JUnit file with the
// counts in the failure's message, so that CI shows them without opening
// the run's folder.
func TestJUnitCarriesLostWriteCounts(t *testing.T) {
	at := func(ms int) int64 { return int64(ms) * int64(time.Millisecond) }
	es := []history.Event{{Kind: history.KindMeta, Meta: &history.Meta{Scenario: "set", Algorithm: "a-set", Workload: "set", Nodes: []string{"n1"}, IDs: []int{1},
		Expect: &history.Expect{Valid: true}}}, {Time: 0, Kind: history.KindProcess, Node: "n1", What: history.ProcStart, Incarnation: 1}}
	for i := range 5 {
		v := strconv.Itoa(i)
		es = append(es,
			history.Event{Time: at(10 * i), Kind: history.KindOp, Process: "c1", Type: history.OpInvoke, F: "add", Node: "n1", Value: v},
			history.Event{Time: at(10*i + 1), Kind: history.KindOp, Process: "c1", Type: history.OpOK, F: "add", Node: "n1", Value: v})
	}
	es = append(es,
		history.Event{Time: at(100), Kind: history.KindOp, Process: "c1", Type: history.OpInvoke, F: "read", Node: "n1"},
		history.Event{Time: at(101), Kind: history.KindOp, Process: "c1", Type: history.OpOK, F: "read", Node: "n1", Value: "[0,1,4]"},
		history.Event{Time: at(200), Kind: history.KindEnd})
	for i := range es {
		es[i].Index = int64(i)
	}
	h, err := history.FromEvents(es)
	if err != nil {
		t.Fatal(err)
	}
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != verdict.ExitUnexpected {
		t.Fatalf("exit %d (%v), want 1", res.ExitCode, res.Notes)
	}
	plan := []Run{Planned("set", "scenarios/set.toml", 1, 1)}
	c := New(t0, plan)
	c.Record(0, plan[0].Finish(res, "store/set/1", t0, time.Second, nil), t0)
	c.Stop(false, t0.Add(time.Second))
	var b bytes.Buffer
	if err := c.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var doc xSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	f := doc.Suites[0].Cases[0].Failure
	if f == nil {
		t.Fatalf("no failure:\n%s", b.String())
	}
	for _, want := range []string{"lost-writes: unexpected violation: 2 of 5 acknowledged adds are lost", "lost: 2, 3;",
		"acknowledged and lost 2, acknowledged and present 3, unacknowledged and present (recovered) 0, unacknowledged and absent 0"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("the failure's message %q lacks %q", f.Message, want)
		}
	}
}
