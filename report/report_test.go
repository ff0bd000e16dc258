package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// reportHistory is a run in which n2 claims leadership while the paused n1
// still does, and a corrupted message with markup in its body is accepted.
func reportHistory(extra ...history.Event) *history.History {
	ms := int64(1e6)
	meta := &history.Meta{Scenario: "paused", Algorithm: "bully", Nodes: []string{"n1", "n2"}, IDs: []int{2, 1}, Elects: "max",
		Checks: []string{"two-leaders", "integrity"}, Expect: &history.Expect{Valid: true}}
	es := []history.Event{
		{Kind: history.KindMeta, Meta: meta},
		{Time: 0, Kind: history.KindProcess, Node: "n1", What: history.ProcStart, Incarnation: 1},
		{Time: 0, Kind: history.KindProcess, Node: "n2", What: history.ProcStart, Incarnation: 1},
		{Time: 10 * ms, Kind: history.KindReport, Node: "n1", What: history.ReportLeader, Value: "n1"},
		{Time: 20 * ms, Kind: history.KindNemesis, What: "pause", Phase: history.PhaseStart, Nodes: []string{"n1"}},
		{Time: 20 * ms, Kind: history.KindProcess, Node: "n1", What: history.ProcPause},
		{Time: 60 * ms, Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: "n2"},
		{Time: 70 * ms, Kind: history.KindMsg, What: history.MsgSend, Msg: 1, Src: "n2", Dest: "n1", MType: "coordinator"},
		{Time: 70 * ms, Kind: history.KindMsg, What: history.MsgCorrupt, Msg: 1, Src: "n2", Dest: "n1", MType: "coordinator", Body: `{"type":"<script>alert(1)</script>"}`},
		{Time: 71 * ms, Kind: history.KindMsg, What: history.MsgDeliver, Msg: 1, Src: "n2", Dest: "n1", MType: "coordinator"},
		{Time: 100 * ms, Kind: history.KindNemesis, What: "pause", Phase: history.PhaseEnd, Nodes: []string{"n1"}},
		{Time: 100 * ms, Kind: history.KindProcess, Node: "n1", What: history.ProcResume},
		{Time: 300 * ms, Kind: history.KindProcess, Node: "n1", What: history.ProcStop},
		{Time: 300 * ms, Kind: history.KindProcess, Node: "n2", What: history.ProcStop},
	}
	es = append(es, extra...)
	es = append(es, history.Event{Time: 300 * ms, Kind: history.KindEnd, Counts: map[string]int64{"messages.sent": 1, "messages.sent.coordinator": 1}})
	for i := range es {
		es[i].Index = int64(i)
	}
	h, err := history.FromEvents(es)
	if err != nil {
		panic(err)
	}
	return h
}

func TestWriteReport(t *testing.T) {
	h := reportHistory()
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, res, h); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		"<!DOCTYPE html>",
		"valid = false",
		"so the outcome is <b>unexpected</b> (exit code 1)",
		"n1 and n2 both believed they were the leader from 0.060s to 0.300s",
		"<svg",
		"n1 believes it is the leader from 0.010s to 0.020s", // a span's title
		"nemesis: pause n1 from 0.020s to 0.100s",            // a fault band
		"&lt;script&gt;", // the corrupted body, escaped
		`<td class="v">believes it is the leader</td>`, // an evidence row
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	assertSelfContained(t, page, nil)
}

var (
	hrefAttr = regexp.MustCompile(`(?i)<[^<>]*\shref\s*=\s*"([^"]*)"`)
	srcAttr  = regexp.MustCompile(`(?i)<[^<>]*\ssrc\s*=[^<>]*>`)
	quoted   = regexp.MustCompile(`"[^"<>]*"`) // attribute values, emptied before looking for attributes
)

// assertSelfContained fails unless the page loads nothing: no element with
// a source, no style imports or remote fonts, and links only within the
// page or to the files given (the checks' files beside it).
func assertSelfContained(t *testing.T, page string, files []string) {
	t.Helper()
	for _, bad := range []string{"@import", "url(http", "@font-face", "<link", "<iframe", "<object", "<embed", "<img"} {
		if strings.Contains(strings.ToLower(page), strings.ToLower(bad)) {
			t.Errorf("report contains %q", bad)
		}
	}
	if m := srcAttr.FindString(quoted.ReplaceAllString(page, `""`)); m != "" {
		t.Errorf("report loads something: %s", m)
	}
	for _, m := range hrefAttr.FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "#") && !slices.Contains(files, m[1]) {
			t.Errorf("report links to %q", m[1])
		}
	}
}

// A history with many belief changes draws at most a rectangle or two per
// pixel column and node, not one per change.
func TestReportTimelineStaysSmall(t *testing.T) {
	var extra []history.Event
	for i := range 20000 {
		v := "n1"
		if i%2 == 0 {
			v = "n2"
		}
		extra = append(extra, history.Event{Time: int64(300e6), Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: v})
	}
	h := reportHistory()
	// Spread the changes over the run, before the stop events.
	es := append([]history.Event(nil), h.Events[:12]...)
	for i, e := range extra {
		e.Time = 101e6 + int64(i)*9000
		es = append(es, e)
	}
	es = append(es, h.Events[12:]...)
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
	svg := newReportModel(res, h).timelineSVG()
	n := strings.Count(svg, "<rect")
	t.Logf("%d rectangles", n)
	if n > 4*chWidth {
		t.Errorf("the timeline has %d rectangles for %d belief changes, want at most %d", n, len(extra), 4*chWidth)
	}
	if !strings.Contains(svg, "changed its belief many times") {
		t.Errorf("the timeline does not say that some changes were too quick to draw")
	}
}

func TestTicks(t *testing.T) {
	tests := []struct {
		from, end int64
		first     string
		last      string
		n         int
	}{
		{0, 300e6, "0.00s", "0.30s", 7},
		{0, 617e6, "0.0s", "0.6s", 7},
		{0, 2e9, "0.0s", "2.0s", 5},
		{0, 12e9, "0s", "12s", 7},
		{472e6, 481e6, "0.472s", "0.480s", 5},
		{0, math.MaxInt64, "0s", "8000000000s", 5},
		{math.MinInt64, math.MaxInt64, "-5000000000s", "5000000000s", 3},
		{5, 5, "0.000000005s", "0.000000006s", 2}, // made one nanosecond wide
	}
	for _, tt := range tests {
		ticks := newAxis(tt.from, tt.end, 0, 100).ticks()
		if len(ticks) != tt.n || ticks[0].label != tt.first || ticks[len(ticks)-1].label != tt.last {
			var got []string
			for _, tk := range ticks {
				got = append(got, tk.label)
			}
			t.Errorf("ticks of [%d, %d]: %q, want %d from %s to %s", tt.from, tt.end, got, tt.n, tt.first, tt.last)
		}
	}
}

// A node that sends a great many distinct types does not make the counts
// table as long: the largest counts are listed, the rest summed.
func TestStatRowsAreBounded(t *testing.T) {
	s := &verdict.Stats{Messages: verdict.MessageStats{ByType: map[string]int64{}}}
	for i := range 1000 {
		s.Messages.ByType[fmt.Sprintf("t%04d", i)] = int64(i % 7)
	}
	s.Messages.ByType["big"] = 1000
	rows := statRows(s, false)
	if len(rows) > 5+maxStatRows+1 {
		t.Errorf("%d rows for 1001 types", len(rows))
	}
	if rows[5] != [2]string{"sent: big", "1000"} {
		t.Errorf("the first type listed is %v, want the largest, big", rows[5])
	}
	last := rows[len(rows)-1]
	if last[0] != "sent: 951 more kinds" {
		t.Errorf("the last row is %v, want the sum of the 951 types not listed", last)
	}
}

// Whatever a node names (itself, its messages, its metrics) or a history
// says, the page holds no markup but its own: two script elements, its
// data's and its code's.
func TestReportEscapesWhatNodesWrite(t *testing.T) {
	bad := `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`
	b := newHB("n1", bad)
	b.starts(0, "n1", bad).
		leader(bad, bad, 1).leader("n1", bad, 2).
		metric(bad, bad, "1", 3).
		send(1, bad, "n1", bad, 4).deliver(1, 5).
		send(2, "n1", bad, bad, 6).drop(2, 7, bad).
		nemesis(bad, history.PhaseStart, 8, bad).nemesis(bad, history.PhaseEnd, 9, bad).
		op(bad, history.OpInvoke, bad, bad, 10).
		op(bad, history.OpInvoke, "acquire", bad, 11).op(bad, history.OpOK, "acquire", "", 12).
		end(100)
	_, page := render(t, b.h(t))
	if n := strings.Count(strings.ToLower(page), "<script"); n != 2 {
		t.Errorf("%d script elements, want 2", n)
	}
	for _, raw := range []string{"<img", "</script><"} {
		if strings.Contains(page, raw) {
			t.Errorf("the page holds %q unescaped", raw)
		}
	}
	assertSelfContained(t, page, nil)
}

// A lock grant's fencing token is named where the page describes the
// event (the evidence's "what").
func TestEventTextNamesTheToken(t *testing.T) {
	token := int64(12)
	e := history.Event{Kind: history.KindOp, F: "acquire", Type: history.OpOK, Process: "c2", Value: "lease 7 ttl 2s", Token: &token}
	if got := eventText(&e); !strings.Contains(got, "fencing token 12") || !strings.Contains(got, "lease 7 ttl 2s") {
		t.Errorf("eventText = %q, want the lease and the token", got)
	}
}

// The verdict's line names a check the scenario allows either way and
// what it gave, so that valid = false reads as the expected outcome it is.
func TestReportHeadlineEither(t *testing.T) {
	h := reportHistory()
	h.Meta.Expect = &history.Expect{Valid: false, Violations: []string{"integrity"}, Either: []string{"two-leaders"}}
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, res, h); err != nil {
		t.Fatal(err)
	}
	want := "valid = false</span>\n— two-leaders is allowed either way (it gave false); every other check as expected (the scenario expected a violation of integrity),\nso the outcome is <b>as expected</b> (exit code 0)."
	if !strings.Contains(buf.String(), want) {
		i := strings.Index(buf.String(), `<div class="outcome">`)
		t.Errorf("the verdict's line does not say the check allowed either way:\n%s\nwant it to hold\n%s", buf.String()[i:min(i+400, buf.Len())], want)
	}
}

// A run of real servers, which sends no messages, has no rows of zero
// messages; a run of nodes keeps them, zero or not.
func TestStatRowsOfServers(t *testing.T) {
	s := &verdict.Stats{Counts: map[string]int64{history.CountNetPackets: 1, history.CountNetBytes: 60}}
	has := func(rows [][2]string) bool {
		return slices.ContainsFunc(rows, func(r [2]string) bool { return strings.HasPrefix(r[0], "messages ") })
	}
	if has(statRows(s, true)) {
		t.Errorf("a real servers' run has rows of messages: %v", statRows(s, true))
	}
	if !has(statRows(s, false)) {
		t.Errorf("a run of nodes has no rows of messages: %v", statRows(s, false))
	}
}
