package report

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// link is a link event: what src → dest carried in the second before t.
func link(t float64, src, dest string, bytes, chunks, dropped int64) history.Event {
	c := map[string]int64{history.LinkSpan: msT(1000), history.LinkBytes: bytes}
	if chunks > 0 {
		c[history.LinkChunks] = chunks
	}
	if dropped > 0 {
		c[history.LinkDroppedBytes] = dropped
	}
	return history.Event{Time: msT(t), Kind: history.KindLink, Src: src, Dest: dest, Counts: c}
}

// serversHistory is a run of three real servers whose network recorded
// what each link carried: n3 cut off from 1s to 3s (n3 | n1 n2), its
// links silent then, a burst after the heal, and a loss on n1 → n2.
func serversHistory(t testing.TB) *history.History {
	b := newHB("n1", "n2", "n3")
	b.meta.Algorithm, b.meta.Servers, b.meta.Checks = "etcd", true, []string{"one-leader-per-term"}
	b.starts(0, "n1", "n2", "n3")
	b.add(history.Event{Time: msT(1000), Kind: history.KindNemesis, What: "partition", Phase: history.PhaseStart, Nodes: []string{"n3"}, Name: "faults[0]#1", Detail: "n3 | n1 n2 (stall); for 2s"})
	b.add(history.Event{Time: msT(3000), Kind: history.KindNemesis, What: "partition", Phase: history.PhaseEnd, Nodes: []string{"n3"}, Name: "faults[0]#1"})
	for _, l := range [][2]string{{"n1", "n2"}, {"n2", "n1"}, {"n1", "n3"}, {"n3", "n1"}} {
		b.add(link(1000, l[0], l[1], 2000, 20, 0))
		if l[0] != "n3" && l[1] != "n3" {
			b.add(link(2000, l[0], l[1], 1000, 10, 0))
			b.add(link(3000, l[0], l[1], 1000, 10, 0))
		}
		b.add(link(4000, l[0], l[1], 4000, 40, 0))
	}
	b.add(link(5000, "n1", "n2", 500, 5, 1500))
	return b.end(5000).h(t)
}

// The rows are the directed links in the order of the nodes, each with
// its samples, its total and its peak rate.
func TestLinkRows(t *testing.T) {
	rows, hidden := linkRows(serversHistory(t), 0, msT(5000))
	if hidden != 0 {
		t.Errorf("%d rows hidden", hidden)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.src+"→"+r.dest)
	}
	if strings.Join(got, " ") != "n1→n2 n1→n3 n2→n1 n3→n1" {
		t.Fatalf("rows %v, want n1→n2 n1→n3 n2→n1 n3→n1", got)
	}
	n12 := rows[0]
	if len(n12.samples) != 5 || n12.total != 8500 || n12.dropped != 1500 || n12.peak != 4000 || n12.unit != "chunks" {
		t.Errorf("n1→n2: %d samples, %d bytes, %d dropped, peak %v B/s (%s); want 5, 8500, 1500, 4000 (chunks)", len(n12.samples), n12.total, n12.dropped, n12.peak, n12.unit)
	}
	if s := n12.samples[0]; s.from != msT(0) || s.to != msT(1000) || s.rate(s.bytes) != 2000 {
		t.Errorf("n1→n2's first sample %+v, want 0s to 1s at 2000 B/s", s)
	}
	if n13 := rows[1]; len(n13.samples) != 2 || n13.total != 6000 {
		t.Errorf("n1→n3: %d samples, %d bytes; want 2 (none while cut), 6000", len(n13.samples), n13.total)
	}
}

// A partition's detail names its sides: both ways cut, one way, a bridge;
// a detail with no sides of the run's nodes cuts nothing drawn.
func TestCutLinks(t *testing.T) {
	nodes := map[string]bool{"n1": true, "n2": true, "n3": true}
	for _, c := range []struct {
		detail string
		want   []string
	}{
		{"n3 | n1 n2 (stall); for 4s", []string{"n1→n3", "n2→n3", "n3→n1", "n3→n2"}},
		{"n1 | n2 n3 (one way: the first side cannot reach the rest)", []string{"n1→n2", "n1→n3"}},
		{"n1 | n2 n3 (one way: the rest cannot reach the first side)", []string{"n2→n1", "n3→n1"}},
		{"n1 | n2 | n3 (bridge n2)", []string{"n1→n3", "n3→n1"}},
		{"majorities ring: each node hears only the majority around it", nil},
		{"n1 | n9", nil},
	} {
		var got []string
		for l := range cutLinks(c.detail, nodes) {
			got = append(got, l[0]+"→"+l[1])
		}
		slices.Sort(got)
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%q cuts %v, want %v", c.detail, got, c.want)
		}
	}
}

// A real servers' run has the links view in place of the empty messages
// section: a row per link with its bytes, the cut drawn on the rows of the
// links it cut and on no other, the bytes a fault dropped; a run whose
// messages are recorded keeps its space-time diagram and has no links
// view.
func TestLinksView(t *testing.T) {
	_, page := render(t, serversHistory(t))
	if !strings.Contains(page, `<h2 id="links">`) || !strings.Contains(page, `<a href="#links">`) {
		t.Fatal("no links section, or no link to it")
	}
	if strings.Contains(page, `id="messages"`) || strings.Contains(page, "No message between nodes") {
		t.Error("the empty messages section is still there")
	}
	svg := svgByID(page, "links-svg")
	for link, bytes := range map[string]string{"n1→n2": "8500", "n1→n3": "6000", "n2→n1": "8000", "n3→n1": "6000"} {
		if !strings.Contains(svg, `<g class="link" data-link="`+link+`" data-bytes="`+bytes+`">`) {
			t.Errorf("no row for %s with %s bytes", link, bytes)
		}
	}
	cut := map[string]bool{}
	for _, m := range regexp.MustCompile(`<g class="cut" data-link="([^"]+)">`).FindAllStringSubmatch(svg, -1) {
		cut[m[1]] = true
	}
	if len(cut) != 2 || !cut["n1→n3"] || !cut["n3→n1"] {
		t.Errorf("the cut is drawn on %v, want n1→n3 and n3→n1 alone", cut)
	}
	if strings.Count(svg, `class="dropped"`) != 1 || !strings.Contains(svg, "1.5 kB dropped by a fault") {
		t.Error("the dropped bytes are not drawn")
	}
	if !strings.Contains(svg, "n1→n2 from 3.000s to 4.000s: 4 kB (4 kB/s) in 40 chunks") {
		t.Error("a bar does not say what it counts")
	}
	if !strings.Contains(page, "4 links carried 28500 bytes (28 kB) in all: the payload of the connections&#39; streams, as coup&#39;s proxies passed it on (no TCP or IP header).") {
		t.Error("the links' total is not said")
	}

	_, page = render(t, overlapHistory(t, 50))
	if strings.Contains(page, `id="links"`) || !strings.Contains(page, `<h2 id="messages">`) {
		t.Error("a run of node processes has a links view, or no messages section")
	}

	// A real servers' history with no link event (an older coup's) says
	// why there is no view of the links.
	h := serversHistory(t)
	var kept []history.Event
	for e := range h.All() {
		if e.Kind != history.KindLink {
			kept = append(kept, *e)
		}
	}
	for i := range kept {
		kept[i].Index = int64(i)
	}
	old, err := history.FromEvents(kept)
	if err != nil {
		t.Fatal(err)
	}
	_, page = render(t, old)
	if strings.Contains(page, `id="links"`) || !strings.Contains(page, "this history records no link counts either") {
		t.Error("a servers' history without link events does not say why it has no links view")
	}
}

// The header says what ran: a real server, the user's own node with its
// command, or the built-in algorithm.
func TestHeaderSaysWhatRan(t *testing.T) {
	for _, c := range []struct {
		meta history.Meta
		want string
	}{
		{history.Meta{Algorithm: "etcd", Servers: true, Nodes: []string{"n1", "n2", "n3"}}, "servers <b>etcd</b> · 3 hosts"},
		{history.Meta{Command: []string{"python3", "node.py"}, Nodes: []string{"n1", "n2", "n3"}}, "<b>your node</b> <code>python3 node.py</code> · 3 nodes"},
		{history.Meta{Command: []string{"./raft"}, Algorithm: "raft", Nodes: []string{"n1"}}, "<b>your node</b> <code>./raft</code>, algorithm <b>raft</b> · 1 node"},
		{history.Meta{Nodes: []string{"n1", "n2"}}, "<b>your node</b> · 2 nodes"},
		{history.Meta{Algorithm: "bully", Nodes: []string{"n1", "n2"}}, "algorithm <b>bully</b> · 2 nodes"},
	} {
		if got := string(runWhat(&c.meta)); got != c.want {
			t.Errorf("runWhat(%+v) = %q, want %q", c.meta, got, c.want)
		}
	}
}

// A long run's samples are merged into at most lkCols bars a row, its
// bytes kept: an hour of a link event a second draws as many bars as a
// minute of them would fill.
func TestLinkRowsMergeALongRun(t *testing.T) {
	b := newHB("n1", "n2")
	b.meta.Servers = true
	b.starts(0, "n1", "n2")
	for s := 1; s <= 3600; s++ {
		b.add(link(float64(s)*1000, "n1", "n2", 100, 1, 0))
	}
	h := b.end(3600e3).h(t)
	rows, _ := linkRows(h, 0, msT(3600e3))
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	var sum int64
	for _, s := range r.samples {
		sum += s.bytes
	}
	if len(r.samples) > lkCols || len(r.samples) < lkCols/2 || sum != 360000 || r.total != 360000 || r.peak < 99 || r.peak > 101 {
		t.Errorf("%d bars of %d bytes (total %d, peak %v B/s), want at most %d bars of 360000 bytes at 100 B/s", len(r.samples), sum, r.total, r.peak, lkCols)
	}
}

// A link's label sits above its row's bars, never on one: its baseline is
// at or above the top of every bar of its row (and of every cut).
func TestLinkLabelsAboveTheBars(t *testing.T) {
	_, page := render(t, serversHistory(t))
	svg := svgByID(page, "links-svg")
	rows := regexp.MustCompile(`(?s)<g class="link" data-link="([^"]+)"[^>]*>(.*?)</g><text class="peak" x="[0-9.]+" y="([0-9.]+)"`).FindAllStringSubmatch(svg, -1)
	if len(rows) != 4 {
		t.Fatalf("%d rows with a label, want 4", len(rows))
	}
	rect := regexp.MustCompile(`<rect[^>]* y="([0-9.]+)"`)
	for _, r := range rows {
		label, _ := strconv.ParseFloat(r[3], 64)
		bars := rect.FindAllStringSubmatch(r[2], -1)
		if len(bars) == 0 {
			t.Fatalf("%s: no bar", r[1])
		}
		for _, b := range bars {
			if top, _ := strconv.ParseFloat(b[1], 64); label > top {
				t.Errorf("%s: its label's baseline at y=%v is below a bar's top at y=%v: it sits on the bar", r[1], label, top)
			}
		}
	}
}
