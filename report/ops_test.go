package report

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// opsHistory is a run of four clients on two nodes: c1 reads (10ms, ok)
// then compares-and-sets (5ms, fail), c2 writes and times out (1s, info),
// c3 adds and never hears back, and a stray ok of c4 has no invocation.
func opsHistory(t testing.TB) *history.History {
	b := newHB("n1", "n2")
	b.meta.Workload = "lin-kv"
	b.starts(0, "n1", "n2")
	b.add(history.Event{Time: msT(50), Kind: history.KindNemesis, What: "partition", Phase: history.PhaseStart, Nodes: []string{"n2"}, Name: "faults[0]#1", Detail: "n2 | n1 (stall)"})
	b.op("c1", history.OpInvoke, "read", "n1", 100).op("c1", history.OpOK, "read", "n1", 110)
	b.op("c2", history.OpInvoke, "write", "n2", 100).op("c2", history.OpInfo, "write", "n2", 1100)
	b.op("c1", history.OpInvoke, "cas", "n1", 200).op("c1", history.OpFail, "cas", "n1", 205)
	b.op("c3", history.OpInvoke, "add", "n1", 300)
	b.op("c4", history.OpOK, "read", "n1", 400)
	b.add(history.Event{Time: msT(600), Kind: history.KindNemesis, What: "partition", Phase: history.PhaseEnd, Nodes: []string{"n2"}, Name: "faults[0]#1"})
	return b.end(1200).h(t)
}

// Each invocation is paired with its process's completion; what never
// completed and what completed with no invocation are counted apart.
func TestOpsOfPairsInvocationsAndCompletions(t *testing.T) {
	ops, open, stray := opsOf(opsHistory(t))
	if open != 1 || stray != 1 {
		t.Errorf("open %d, stray %d; want 1 and 1", open, stray)
	}
	want := []struct {
		process, f, typ string
		latency         int64
	}{
		{"c1", "read", history.OpOK, msT(10)},
		{"c2", "write", history.OpInfo, msT(1000)},
		{"c1", "cas", history.OpFail, msT(5)},
	}
	if len(ops) != len(want) {
		t.Fatalf("%d operations, want %d: %+v", len(ops), len(want), ops)
	}
	// opsOf keeps the completions' order: read, cas, write.
	byF := map[string]completedOp{}
	for _, o := range ops {
		byF[o.f] = o
	}
	for _, w := range want {
		o := byF[w.f]
		if o.process != w.process || o.typ != w.typ || o.latency() != w.latency {
			t.Errorf("%s: got %s %s %s, want %s %s %s", w.f, o.process, o.typ, dur(o.latency()), w.process, w.typ, dur(w.latency))
		}
	}
}

// The dots' places follow from the operations: x from the invocation on
// the run's axis, y from the latency on a logarithmic axis between the
// powers of ten around the shortest and the longest; two operations on
// one pixel with the same outcome and f draw one dot, counted twice.
func TestLatencyDots(t *testing.T) {
	ops := []completedOp{
		{invoke: msT(100), done: msT(110), f: "read", typ: history.OpOK, process: "c1"},
		{invoke: msT(100), done: msT(1100), f: "write", typ: history.OpInfo, process: "c2"},
		{invoke: msT(200), done: msT(205), f: "cas", typ: history.OpFail, process: "c1"},
		{invoke: msT(200), done: msT(205), f: "cas", typ: history.OpFail, process: "c3"},
	}
	ax := newAxis(0, msT(1000), 80, 1000) // a pixel per millisecond
	s := newLogScale(ops, 0, 300)         // 1ms to 1s: three decades of 100 pixels
	if s.lo != 6 || s.hi != 9 {
		t.Fatalf("the scale spans 10^%v to 10^%v ns, want 10^6 to 10^9", s.lo, s.hi)
	}
	dots, hidden := latencyDots(ops, ax, s)
	if hidden != 0 || len(dots) != 3 {
		t.Fatalf("%d dots (%d hidden), want 3", len(dots), hidden)
	}
	want := []struct {
		x, y  float64
		f     string
		count int
	}{
		{180, 200, "read", 1},                    // 10ms: one decade up
		{180, 0, "write", 1},                     // 1s: the top
		{280, 300 - 100*math.Log10(5), "cas", 2}, // 5ms, twice
	}
	for i, w := range want {
		d := dots[i]
		if math.Abs(d.x-w.x) > 0.01 || math.Abs(d.y-w.y) > 0.01 || d.op.f != w.f || d.count != w.count {
			t.Errorf("dot %d: %s at (%.2f, %.2f) ×%d, want %s at (%.2f, %.2f) ×%d", i, d.op.f, d.x, d.y, d.count, w.f, w.x, w.y, w.count)
		}
	}
	if ticks := s.ticks(); len(ticks) != 4 || ticks[0] != 1e6 || ticks[3] != 1e9 {
		t.Errorf("ticks %v, want 1ms, 10ms, 100ms, 1s", ticks)
	}
}

// Throughput counts each completion in the bin of its time, by outcome;
// one past the window counts at its edge.
func TestRateBins(t *testing.T) {
	ops, _, _ := opsOf(opsHistory(t))
	got := rateBins(ops, 0, msT(1000), msT(100))
	want := map[string][]int{
		history.OpOK:   {0, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		history.OpInfo: {0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
		history.OpFail: {0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
	}
	for k, o := range outcomes {
		if !slices.Equal(got[k], want[o.typ]) {
			t.Errorf("%s: bins %v, want %v", o.typ, got[k], want[o.typ])
		}
	}
}

// A second for runs of a dozen seconds or more, a round fraction of one
// for shorter runs, a round multiple for long ones.
func TestRateBin(t *testing.T) {
	for _, c := range []struct {
		span float64
		want int64
	}{
		{16e9, 1e9}, {12e9, 1e9}, {1.2e9, 1e8}, {5e9, 2e8}, {3600e9, 1e10}, {1e6, 1e6}, {9.2e18, 2e16},
	} {
		if got := rateBin(c.span); got != c.want {
			t.Errorf("rateBin(%s) = %s, want %s", dur(int64(c.span)), dur(got), dur(c.want))
		}
	}
}

// A run with clients has the operations section, its two plots drawing
// what the history holds: a dot per completed operation in its outcome's
// group, a throughput line per outcome, the faults behind both, and the
// counts by f; a run with no client has no such section.
func TestOperationsSection(t *testing.T) {
	_, page := render(t, opsHistory(t))
	if !strings.Contains(page, `<h2 id="operations">`) || !strings.Contains(page, `<a href="#operations">`) {
		t.Fatal("no operations section, or no link to it")
	}
	lat := svgByID(page, "ops-latency")
	for typ, n := range map[string]int{"ok": 1, "info": 1, "fail": 1} {
		g := regexp.MustCompile(`(?s)<g class="ops ` + typ + `"[^>]*>(.*?)</g></g>|<g class="ops ` + typ + `"[^>]*></g>`).FindStringSubmatch(lat)
		if g == nil || strings.Count(g[0], `<g class="op">`) != n {
			t.Errorf("the latency plot's %s group has not %d dot: %.200q", typ, n, g)
		}
	}
	if !strings.Contains(lat, `class="fault"`) {
		t.Error("the latency plot draws no fault")
	}
	if !strings.Contains(lat, "c2 write info: invoked 0.100s, took 1s, at n2") {
		t.Error("the info dot does not say what it is")
	}
	rate := svgByID(page, "ops-rate")
	for _, typ := range []string{"ok", "info", "fail"} {
		if !strings.Contains(rate, `<g class="rate `+typ+`" data-outcome="`+typ+`"><title>`+typ+`: 1 operations completed`) {
			t.Errorf("no throughput line for %s", typ)
		}
	}
	if !strings.Contains(rate, `class="fault"`) {
		t.Error("the throughput plot draws no fault")
	}
	counts := tableByID(page, "ops-counts")
	for _, row := range []string{"<td>cas</td><td>0</td><td>1</td><td>0</td>", "<td>read</td><td>1</td><td>0</td><td>0</td>", "<td>write</td><td>0</td><td>0</td><td>1</td>"} {
		if !strings.Contains(counts, row) {
			t.Errorf("the counts lack the row %s:\n%s", row, counts)
		}
	}
	if !strings.Contains(page, "1 invoked and never completed are not drawn") || !strings.Contains(page, "1 completions with no invocation") {
		t.Error("the open and stray operations are not counted")
	}

	_, page = render(t, overlapHistory(t, 50))
	if strings.Contains(page, `id="operations"`) {
		t.Error("an operations section in the report of a run with no client")
	}
}
