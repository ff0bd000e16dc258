package report

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// setHistory is a set workload's run: adds 0 to 29, the ones acknowledged
// by n3 while it is cut off (every third) missing from the final reads.
func setHistory(t *testing.T) *history.History {
	b := newHB("n1", "n2", "n3")
	b.meta.Algorithm, b.meta.Workload, b.meta.Checks = "a-set", "set", nil
	b.meta.Expect = &history.Expect{Valid: true}
	b.starts(0, "n1", "n2", "n3")
	b.add(history.Event{Time: msT(100), Kind: history.KindNemesis, What: "partition", Phase: history.PhaseStart, Nodes: []string{"n3"}, Name: "faults[0]#1", Detail: "isolate"})
	var kept []int
	for i := range 30 {
		node := []string{"n1", "n2", "n3"}[i%3]
		at := float64(10 + 10*i)
		p := "c" + strconv.Itoa(1+i%3)
		b.add(history.Event{Time: msT(at), Kind: history.KindOp, Process: p, Type: history.OpInvoke, F: "add", Node: node, Value: strconv.Itoa(i)})
		b.add(history.Event{Time: msT(at + 2), Kind: history.KindOp, Process: p, Type: history.OpOK, F: "add", Node: node, Value: strconv.Itoa(i)})
		if node != "n3" || at < 100 {
			kept = append(kept, i)
		}
	}
	b.add(history.Event{Time: msT(400), Kind: history.KindNemesis, What: "partition", Phase: history.PhaseEnd, Nodes: []string{"n3"}, Name: "faults[0]#1"})
	v, _ := json.Marshal(kept)
	b.add(history.Event{Time: msT(600), Kind: history.KindOp, Process: "c1", Type: history.OpInvoke, F: "read", Node: "n1"})
	b.add(history.Event{Time: msT(601), Kind: history.KindOp, Process: "c1", Type: history.OpOK, F: "read", Node: "n1", Value: string(v)})
	return b.end(800).h(t)
}

// A run judged by lost-writes has a section with every count, the
// windows in which the lost writes were acknowledged with the faults
// then in force, and the lost writes named; its figures alone draw it,
// so results read back from results.json draw the same section.
func TestLostWritesSection(t *testing.T) {
	h := setHistory(t)
	res, page := render(t, h)
	c := res.Checks["lost-writes"]
	if c.Valid != checks.False || c.Figures["acknowledged_lost"] != 7 {
		t.Fatalf("lost-writes %v with %v lost (%s), want false with 7", c.Valid, c.Figures["acknowledged_lost"], c.Explanation)
	}
	if !strings.Contains(page, `<a href="#lost-writes">lost writes</a>`) || !strings.Contains(page, `<h2 id="lost-writes">Lost writes</h2>`) {
		t.Fatal("no lost-writes section, or no link to it")
	}
	counts := tableByID(page, "lost-counts")
	for _, want := range []string{`<th>acknowledged and lost</th><td class="bad">7</td>`, `<th>acknowledged and present</th><td>23</td>`, `<th>final reads</th><td>1</td>`} {
		if !strings.Contains(counts, want) {
			t.Errorf("the counts lack %s:\n%s", want, counts)
		}
	}
	windows := tableByID(page, "lost-windows")
	if !strings.Contains(windows, "<td>0.122s</td><td>0.302s</td><td>0.180s</td><td>7</td><td>n3</td><td>faults[0]#1 (partition n3: isolate)</td>") {
		t.Errorf("the windows table:\n%s", windows)
	}
	if !strings.Contains(page, `Lost: <span title="c3 at n3">11</span>, <span title="c3 at n3">14</span>`) {
		t.Errorf("the lost writes are not named")
	}
	// Drawn again from results.json read back.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back verdict.Results
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	v := lostWritesView(&back)
	if v == nil || len(v.Windows) != 1 || v.Windows[0].Lost != 7 || len(v.Lost) != 7 || v.Counts[0].N != 7 {
		t.Errorf("from results.json: %+v", v)
	}
	assertSelfContained(t, page, nil)
}

// A run not judged by lost-writes has no such section.
func TestNoLostWritesSection(t *testing.T) {
	_, page := render(t, overlapHistory(t, 50))
	if strings.Contains(page, `id="lost-writes"`) {
		t.Error("a lost-writes section in an election's report")
	}
}

// tableByID is the HTML of the table with the id, or "".
func tableByID(page, id string) string {
	return regexp.MustCompile(`(?s)<table id="` + regexp.QuoteMeta(id) + `">.*?</table>`).FindString(page)
}

// An operation's value in an evidence row is kept whole up to a bound (the
// page folds it: fold_test.go), and cut past it: a read of a whole set
// may hold thousands of elements.
func TestEvidenceCutsLongValues(t *testing.T) {
	read := "[" + strings.Repeat("1234,", 2000) + "0]"
	if got := eventText(&history.Event{Kind: history.KindOp, F: "read", Type: history.OpOK, Process: "c1", Value: read}); got != "read ok by c1 "+read {
		t.Errorf("a read of 2,000 elements is not whole in its evidence row: %d characters", len([]rune(got)))
	}
	long := "[" + strings.Repeat("1234,", 20000) + "0]"
	got := eventText(&history.Event{Kind: history.KindOp, F: "read", Type: history.OpOK, Process: "c1", Value: long})
	if n := len([]rune(got)); n > maxOpValue+40 || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "read ok by c1 [1234,") {
		t.Errorf("an evidence row of %d characters: %.80q…", n, got)
	}
}
