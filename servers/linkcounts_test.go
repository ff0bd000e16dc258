package servers

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
)

// The counts of a period become one link event per link that carried or
// dropped anything, in the order of the links' names, with the period's
// span; the next period counts anew. A packet network's counts are in
// packets.
func TestRecordLinks(t *testing.T) {
	rec := history.NewRecorder(nil, func() int64 { return 0 }, true)
	r := &run{rec: rec, started: true}
	r.zero = time.Now().Add(-2 * time.Second)
	r.restartLinkCounts(time.Second)
	n12, n21 := nemesis.Link{From: "n1", To: "n2"}, nemesis.Link{From: "n2", To: "n1"}
	r.links.count(n21, 30, false)
	r.links.count(n12, 10, false)
	r.links.count(n12, 20, true)
	r.links.count(n12, 5, false)
	r.recordLinks()
	r.links.unit = history.LinkPackets
	r.links.count(n21, 7, true)
	r.recordLinks()
	evs := rec.Events()
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3: %+v", len(evs), evs)
	}
	for i, want := range []struct {
		src, dest string
		counts    map[string]int64
	}{
		{"n1", "n2", map[string]int64{history.LinkBytes: 15, history.LinkChunks: 2, history.LinkDroppedBytes: 20}},
		{"n2", "n1", map[string]int64{history.LinkBytes: 30, history.LinkChunks: 1}},
		{"n2", "n1", map[string]int64{history.LinkBytes: 0, history.LinkDroppedBytes: 7, history.LinkDroppedPackets: 1}},
	} {
		e := evs[i]
		span := e.Counts[history.LinkSpan]
		delete(e.Counts, history.LinkSpan)
		if e.Kind != history.KindLink || e.Src != want.src || e.Dest != want.dest || !maps.Equal(e.Counts, want.counts) {
			t.Errorf("event %d: %s %s→%s %v, want link %s→%s %v", i, e.Kind, e.Src, e.Dest, e.Counts, want.src, want.dest, want.counts)
		}
		if i < 2 && (span < int64(time.Second) || span > int64(time.Minute)) {
			t.Errorf("event %d spans %s, want the second since the restart and more", i, time.Duration(span))
		}
	}
}

// A real etcd cluster with lin-kv clients, n3 cut off for 2s: the history
// holds link events, each link's bytes over time, with nothing on n3's
// links while they were cut; and the run's report has the operations
// section (a dot per completed operation, a throughput line) and the
// links view (a row per link, with bytes, the cut drawn on n3's rows) in
// place of the empty messages section.
func TestEtcdRunReportsOperationsAndLinks(t *testing.T) {
	needsServer(t, "etcd")
	src := `name = "etcd-operations-and-links"
nodes = 3
duration = "7s"
recovery = "2s"

[server]
preset = "etcd"

[workload]
kind = "lin-kv"
at = "3s"
timeout = "1s"
clients = 3
rate = 50
keys = 1
mix = { read = 2, write = 1, cas = 1 }

[[faults]]
kind = "partition"
shape = "isolate"
target = "n3"
at = "4s"
for = "2s"

[checks]
run = ["one-leader-per-term"]
`
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "etcd-operations-and-links.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.NotStarted() {
		t.Fatalf("not started: %s", res.Error)
	}
	h, err := history.ReadFile(filepath.Join(dir, lifecycle.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}

	// The link events: every one names a link of two nodes and covers a
	// span of at most a period (and a little, on a loaded machine); the
	// peers talk both ways on every link; none of n3's links carried
	// anything in a period wholly inside the cut.
	var cutFrom, cutTo int64 = -1, -1
	for e := range h.All() {
		if e.Kind == history.KindNemesis && e.What == "partition" {
			if e.Phase == history.PhaseStart {
				cutFrom = e.Time
			} else {
				cutTo = e.Time
			}
		}
	}
	if cutFrom < 0 || cutTo < cutFrom {
		t.Fatalf("the partition ran from %d to %d: this test needs it", cutFrom, cutTo)
	}
	isNode := map[string]bool{}
	for _, n := range sc.NodeNames() {
		isNode[n] = true
	}
	bytes := map[string]int64{}
	for e := range h.All() {
		if e.Kind != history.KindLink {
			continue
		}
		l := e.Src + "→" + e.Dest
		span, b := e.Counts[history.LinkSpan], e.Counts[history.LinkBytes]
		if !isNode[e.Src] || !isNode[e.Dest] || e.Src == e.Dest || span <= 0 || span > 3*int64(linkPeriod) || b < 0 {
			t.Errorf("link event %d: %s, span %d, %d bytes", e.Index, l, span, b)
		}
		if (e.Src == "n3" || e.Dest == "n3") && e.Time-span > cutFrom && e.Time < cutTo && b > 0 {
			t.Errorf("link event %d: %s carried %d bytes from %s to %s, inside the cut (%s to %s)", e.Index, l, b, inSecs(e.Time-span), inSecs(e.Time), inSecs(cutFrom), inSecs(cutTo))
		}
		bytes[l] += b
	}
	for _, from := range []string{"n1", "n2", "n3"} {
		for _, to := range []string{"n1", "n2", "n3"} {
			if from != to && bytes[from+"→"+to] == 0 {
				t.Errorf("no bytes recorded on %s→%s (links: %v)", from, to, bytes)
			}
		}
	}

	// On coup's network the links view and the counts count the same
	// bytes: the link events' sum is the end event's, link by link and
	// in all, and the report says so in both places.
	var total int64
	for _, b := range bytes {
		total += b
	}
	c := res.Stats.Counts
	t.Logf("network %q: the link events count %d bytes, the counts %d", res.Network, total, c[history.CountNetBytes])
	if res.Network == scenario.NetworkNamespaces {
		if total != c[history.CountNetBytes] {
			t.Errorf("the link events count %d bytes, the counts %s %d", total, history.CountNetBytes, c[history.CountNetBytes])
		}
		for l, b := range bytes {
			from, to, _ := strings.Cut(l, "→")
			if key := history.CountNetLink + "." + from + ">" + to + ".bytes"; c[key] != b {
				t.Errorf("%s: the link events count %d bytes, the counts %s %d", l, b, key, c[key])
			}
		}
	}

	// The report.
	b, err := os.ReadFile(filepath.Join(dir, lifecycle.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.Contains(page, `<h2 id="operations">`) {
		t.Fatal("the report has no operations section")
	}
	lat := regexp.MustCompile(`(?s)<svg id="ops-latency".*?</svg>`).FindString(page)
	if n := strings.Count(lat, `<g class="op">`); n < 20 {
		t.Errorf("the latency plot draws %d dots, want the run's operations", n)
	}
	if !strings.Contains(lat, `class="fault"`) {
		t.Error("the latency plot draws no fault")
	}
	if rate := regexp.MustCompile(`(?s)<svg id="ops-rate".*?</svg>`).FindString(page); !strings.Contains(rate, `<g class="rate ok"`) {
		t.Error("the throughput plot has no line of ok operations")
	}
	if !strings.Contains(page, `<h2 id="links">`) || strings.Contains(page, "No message between nodes") {
		t.Fatal("the report has no links view, or still the empty messages section")
	}
	if res.Network == scenario.NetworkNamespaces {
		note := fmt.Sprintf("6 links carried %d bytes (", total)
		row := fmt.Sprintf("<tr><th>network: bytes delivered (whole IP packets, headers included: the links view&#39;s bytes)</th><td>%d</td></tr>", total)
		if !strings.Contains(page, note) || !strings.Contains(page, row) {
			t.Errorf("the links view and the counts do not both say %d bytes: %q, %q", total,
				regexp.MustCompile(`id="links-note">[^<]*`).FindString(page), regexp.MustCompile(`<tr><th>network: bytes[^\n]*`).FindString(page))
		}
	}
	svg := regexp.MustCompile(`(?s)<svg id="links-svg".*?</svg>`).FindString(page)
	rows := regexp.MustCompile(`<g class="link" data-link="([^"]+)" data-bytes="([0-9]+)">`).FindAllStringSubmatch(svg, -1)
	if len(rows) != 6 {
		t.Errorf("the links view has %d rows, want 6", len(rows))
	}
	for _, r := range rows {
		if n, _ := strconv.ParseInt(r[2], 10, 64); n != bytes[r[1]] || n == 0 {
			t.Errorf("the row of %s says %s bytes, the history %d", r[1], r[2], bytes[r[1]])
		}
	}
	if n := strings.Count(svg, `<g class="sample">`); n < 6*3 {
		t.Errorf("the links view draws %d bars, want a few per link", n)
	}
	cut := map[string]bool{}
	for _, m := range regexp.MustCompile(`<g class="cut" data-link="([^"]+)">`).FindAllStringSubmatch(svg, -1) {
		cut[m[1]] = true
	}
	if len(cut) != 4 || !cut["n1→n3"] || !cut["n3→n1"] || !cut["n2→n3"] || !cut["n3→n2"] {
		t.Errorf("the cut is drawn on %v, want n3's four links", cut)
	}
}

func inSecs(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64) + "s" }
