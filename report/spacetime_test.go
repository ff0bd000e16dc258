package report

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// svgByID returns the SVG element with the given id in page, or "".
func svgByID(page, id string) string {
	i := strings.Index(page, `<svg id="`+id+`"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</svg>")
	return page[i : i+j+len("</svg>")]
}

// countClass counts the elements whose class attribute is exactly class.
func countClass(svg, class string) int {
	return strings.Count(svg, `class="`+class+`"`)
}

// A ring of three with one message of each fate: delivered, lost by the
// network, dropped at a receiver that was down, corrupted and rejected,
// corrupted and not rejected, duplicated.
func fatesHistory(t testing.TB) *history.History {
	b := newHB("n1", "n2", "n3")
	b.meta.Checksums = true
	b.starts(0, "n1", "n2", "n3").
		op("c1", history.OpInvoke, "elect", "n1", 5).
		send(1, "n1", "n2", "election", 10).deliver(1, 12).
		send(2, "n2", "n3", "election", 14).drop(2, 14, "loss").
		send(3, "n2", "n3", "election", 20).corrupt(3, 23, "bitflip").deliver(3, 23).rejected("n3", 3, 24).
		send(4, "n3", "n1", "elected", 30).corrupt(4, 32, "mutate").deliver(4, 32).
		send(5, "n1", "n2", "ping", 40).fate(history.MsgDuplicate, 5, 40, "").deliver(5, 41).deliver(5, 42).
		proc("n3", history.ProcCrash, 50).
		send(6, "n1", "n3", "ping", 55).drop(6, 56, "down").
		end(300)
	return b.h(t)
}

func TestSpacetimeDrawsEveryFate(t *testing.T) {
	h := fatesHistory(t)
	_, page := render(t, h)
	// Read back from its lines, the history keeps its messages apart
	// (compact); the page is the same.
	compact, err := history.Read(strings.NewReader(jsonl(t, h)))
	if err != nil {
		t.Fatal(err)
	}
	if _, again := render(t, compact); again != page {
		t.Errorf("the page of the history read back differs from the page of the history in memory")
	}
	// The messages keep to the first 56ms of 300: that window is shown
	// first, and it draws each copy.
	if !regexp.MustCompile(`<input type="radio" name="stw" id="stw-1" checked><label for="stw-1">the messages</label>`).MatchString(page) {
		t.Errorf("the window of the messages is not the one shown first")
	}
	svg := svgByID(page, "st-1")
	if svg == "" {
		t.Fatal("no diagram st-1")
	}
	for class, want := range map[string]int{
		"msg":                  4, // 1, 3, 4 and 5's first copy
		"msg duplicate":        1,
		"msg dropped":          2,
		"drop":                 2,
		"rejected":             1,
		"accepted":             1,
		"request":              1,
		"mark mark-crash":      1,
		"spacetime":            1,
		"spacetime aggregated": 0,
	} {
		if got := countClass(svg, class); got != want {
			t.Errorf("%d elements of class %q, want %d", got, class, want)
		}
	}
	for _, want := range []string{
		"election n2→n3, message 2: sent 0.014s, dropped 0.014s (loss: the nemesis lost it)",
		"ping n1→n3, message 6: sent 0.055s, dropped 0.056s (down: the receiver was not running)",
		"election n2→n3, message 3: sent 0.020s, delivered 0.023s after 3ms; corrupted by the nemesis (bitflip) and rejected by n3 at 0.024s (checksum)",
		"elected n3→n1, message 4: sent 0.030s, delivered 0.032s after 2ms; corrupted by the nemesis (mutate); n1 did not report rejecting it",
		"ping n1→n2, message 5 (a duplicate copy)",
		"c1 asked n1 to elect at 0.005s",
		`>election</text>`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the diagram lacks %q", want)
		}
	}
	// A lost copy ends mid-way between the rows, one whose receiver was
	// down near the receiver: rows are stRowHeight(3) = 34 apart.
	lost := regexp.MustCompile(`message 2: [^<]*</title><line x1="[0-9.]+" y1="([0-9.]+)" x2="[0-9.]+" y2="([0-9.]+)"`).FindStringSubmatch(svg)
	if lost == nil || lost[1] != "85.0" || lost[2] != "102.0" {
		t.Errorf("the lost copy runs %v, want from y 85 to y 102 (half-way from n2 to n3)", lost)
	}
}

// Dense windows are drawn as cells, with a bounded number of elements,
// and the eighths of the run are offered.
func TestSpacetimeAggregatesDenseWindows(t *testing.T) {
	b := newHB("n1", "n2", "n3", "n4")
	b.starts(0, "n1", "n2", "n3", "n4")
	id := int64(0)
	for k := range 5000 {
		id++
		at := float64(k) * 0.2
		src, dst := b.meta.Nodes[k%4], b.meta.Nodes[(k+1)%4]
		b.send(id, src, dst, fmt.Sprintf("t%d", k%11), at)
		if k%3 == 0 {
			b.drop(id, at+0.1, "loss")
		} else {
			b.deliver(id, at+0.1)
		}
	}
	b.end(1000)
	_, page := render(t, b.h(t))
	whole := svgByID(page, "st-0")
	if !strings.Contains(whole, `class="spacetime aggregated"`) {
		t.Fatalf("the whole run of 5000 copies is not aggregated")
	}
	if n := strings.Count(whole, "<rect") + strings.Count(whole, "<path") + strings.Count(whole, "<line"); n > stAggCells*2+200 {
		t.Errorf("the aggregated diagram has %d elements", n)
	}
	if got := countClass(whole, "msg"); got != 0 {
		t.Errorf("the aggregated diagram draws %d arrows", got)
	}
	if !regexp.MustCompile(`n2 sent \d+ between 0\.\d+s and 0\.\d+s: t\d+ \d+`).MatchString(whole) {
		t.Errorf("the cells do not say how many messages a node sent")
	}
	if !strings.Contains(page, `<label for="stw-2">0.125s–0.250s</label>`) {
		t.Errorf("the eighths of the run are not offered")
	}
	// An eighth has 625 copies, still too many; a sixteenth would not be,
	// and the reader can draw one with the script, whose data has every
	// copy.
	data := regexp.MustCompile(`(?s)<script type="application/json" id="coup-data">(.*?)</script>`).FindStringSubmatch(page)
	if data == nil {
		t.Fatal("no data for the script")
	}
	var d scriptData
	if err := json.Unmarshal([]byte(data[1]), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Flights) != 5000 || d.Omitted != 0 || len(d.Types) != len(typeColours) {
		t.Errorf("script data: %d flights, %d omitted, %d types; want 5000, 0, %d", len(d.Flights), d.Omitted, len(d.Types), len(typeColours))
	}
	if len(page) > 3<<20 {
		t.Errorf("the page is %d bytes", len(page))
	}
}

// Past maxScriptData copies the page embeds none for the script, and says
// so, rather than grow.
func TestSpacetimeScriptDataIsBounded(t *testing.T) {
	b := newHB("n1", "n2")
	b.starts(0, "n1", "n2")
	for k := range maxScriptData + 10 {
		b.send(int64(k+1), "n1", "n2", "a", float64(k)*0.01).deliver(int64(k+1), float64(k)*0.01+0.005)
	}
	b.end(1000)
	m := newReportModel(&verdict.Results{Checks: map[string]checks.Result{}}, b.h(t))
	var d scriptData
	if err := json.Unmarshal([]byte(m.scriptJSON()), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Flights) != 0 || d.Omitted != maxScriptData+10 {
		t.Errorf("%d flights embedded and %d omitted, want none and %d", len(d.Flights), d.Omitted, maxScriptData+10)
	}
	for name, v := range map[string]any{"rows": d.Rows, "types": d.Types, "lives": d.Lives, "marks": d.Marks, "faults": d.Faults, "violations": d.Violations} {
		if strings.Contains(string(m.scriptJSON()), `"`+name+`":null`) {
			t.Errorf("%s is null (%v): the script reads lists", name, v)
		}
	}
}

// A history written with messages off says why there is no diagram.
func TestSpacetimeWithoutRecordedMessages(t *testing.T) {
	b := newHB("n1", "n2")
	b.starts(0, "n1", "n2").end(100)
	b.events[len(b.events)-1].Counts = map[string]int64{history.CountSent: 12, history.CountDelivered: 10, history.CountDropped: 2}
	_, page := render(t, b.h(t))
	if !strings.Contains(page, `id="messages-note">The history does not record messages one by one`) || !strings.Contains(page, "12 were sent, 10 delivered and 2 dropped") {
		t.Errorf("the page does not say that messages were not recorded")
	}
	if strings.Contains(page, `class="spacetime`) || strings.Contains(page, "coup-data") {
		t.Errorf("the page draws a diagram of messages it does not have")
	}
}

func TestSameWindow(t *testing.T) {
	tests := []struct {
		a0, a1, b0, b1 int64
		want           bool
	}{
		{0, 100, 0, 100, true},
		{0, 100, 5, 100, true},
		{0, 100, 25, 125, true},
		{0, 100, 40, 140, false},
		{0, 100, 0, 200, false},
		{0, 100, 200, 300, false},
	}
	for _, tt := range tests {
		if got := sameWindow(tt.a0, tt.a1, tt.b0, tt.b1); got != tt.want {
			t.Errorf("sameWindow([%d,%d], [%d,%d]) = %v, want %v", tt.a0, tt.a1, tt.b0, tt.b1, got, tt.want)
		}
	}
}
