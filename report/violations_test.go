package report

import (
	"encoding/json"
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// threeOverlaps has n1 leading throughout and n2 claiming leadership
// three times, each claim overlapping n1's: for 100ms, 300ms and 50ms.
func threeOverlaps(t *testing.T) *history.History {
	b := newHB("n1", "n2", "n3")
	b.starts(0, "n1", "n2", "n3").
		leader("n1", "n1", 10).
		leader("n2", "n2", 100).leader("n2", "n1", 200).
		leader("n2", "n2", 400).leader("n2", "n1", 700).
		leader("n2", "n2", 900).proc("n2", history.ProcCrash, 950).
		end(1000)
	return b.h(t)
}

// Three separate overlaps are three violations in results.json, each with
// its evidence, and the report outlines each on the timeline and lists
// each in two-leaders' section.
func TestEveryViolationOutlined(t *testing.T) {
	res, page := render(t, threeOverlaps(t))
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var saved struct {
		Checks map[string]struct {
			Violations []struct {
				Nodes    []string
				Interval struct{ From, To int64 }
				Evidence []history.Event
			} `json:"violations"`
			Count int   `json:"violation_count"`
			Time  int64 `json:"violation_time_ns"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.Fatal(err)
	}
	two := saved.Checks["two-leaders"]
	if len(two.Violations) != 3 || two.Count != 3 || two.Time != msT(450) {
		t.Fatalf("results: %d violations listed, count %d, time %d; want 3, 3 and %d", len(two.Violations), two.Count, two.Time, msT(450))
	}
	for i, from := range []float64{100, 400, 900} {
		v := two.Violations[i]
		if v.Interval.From != msT(from) || len(v.Evidence) < 2 || strings.Join(v.Nodes, ",") != "n1,n2" {
			t.Errorf("violation %d: %+v, want n1 and n2 from %vms with evidence", i+1, v, from)
		}
	}
	timeline := svgByID(page, "timeline-svg")
	if timeline == "" {
		t.Fatal("no timeline")
	}
	for n := 1; n <= 3; n++ {
		if want := `<g class="violation" data-check="two-leaders" data-nth="` + itoa(n) + `"><title>two-leaders (violation ` + itoa(n) + ` of 3)`; !strings.Contains(timeline, want) {
			t.Errorf("the timeline does not outline violation %d (%q)", n, want)
		}
	}
	if got := strings.Count(timeline, `<g class="violation" data-check="two-leaders"`); got != 3 {
		t.Errorf("the timeline outlines %d two-leaders violations, want 3", got)
	}
	if got := strings.Count(page, `<tr class="violation-row">`); got != 3 {
		t.Errorf("two-leaders' section lists %d violations, want 3", got)
	}
	if !strings.Contains(page, "3 violations, 450ms in all") {
		t.Errorf("two-leaders' section does not count the violations and their time")
	}
}

// A node's own exit has a mark of its own (not the crash's ✕) and a row
// in the page's list of exits.
func TestExitMarked(t *testing.T) {
	b := newHB("n1", "n2")
	b.starts(0, "n1", "n2").leader("n1", "n1", 10).leader("n2", "n1", 11).
		add(history.Event{Time: msT(500), Kind: history.KindProcess, Node: "n2", What: history.ProcExit, Incarnation: 1, Detail: "exit status 1", Tail: []string{"TypeError: <boom>"}}).
		proc("n1", history.ProcCrash, 600).end(1000)
	res, page := render(t, b.h(t))
	if len(res.Exits) != 1 || res.ExitCode != 1 {
		t.Fatalf("exits %+v, exit %d; want n2's, and 1", res.Exits, res.ExitCode)
	}
	timeline := svgByID(page, "timeline-svg")
	if !strings.Contains(timeline, `<g class="mark mark-exit"><title>n2: exited on its own at 0.500s`) {
		t.Errorf("the timeline has no exit mark for n2")
	}
	if strings.Count(timeline, `class="mark mark-crash"`) != 1 {
		t.Errorf("the timeline draws %d crash marks, want n1's alone", strings.Count(timeline, `class="mark mark-crash"`))
	}
	for _, want := range []string{`<h2 id="exits">Process exits</h2>`, `<td>n2</td><td>0.500s</td><td>exit status 1</td><td>no: a finding</td><td><pre class="log">TypeError: &lt;boom&gt;</pre>`, "but n2 at 0.500s exited on its own"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// Short violations close together each get a pointer to its magnified
// view where its label fits, and the labels never run into each other:
// the first whole, the next ones by number or not at all.
func TestPointerLabelsDoNotOverlap(t *testing.T) {
	b := newHB("n1", "n2")
	b.starts(0, "n1", "n2").leader("n1", "n1", 10)
	for i := range 8 {
		at := 1000 + 40*float64(i)
		b.leader("n2", "n2", at).leader("n2", "n1", at+5)
	}
	b.end(10000)
	_, page := render(t, b.h(t))
	timeline := svgByID(page, "timeline-svg")
	re := regexp.MustCompile(`<a href="#[^"]*"><text x="([0-9.]+)"[^>]*>([^<]*)</text></a>`)
	labels := re.FindAllStringSubmatch(timeline, -1)
	if len(labels) == 0 || !strings.Contains(labels[0][2], "two-leaders, magnified below") {
		t.Fatalf("pointer labels %q, want the first whole", labels)
	}
	end := math.Inf(-1)
	for _, l := range labels {
		x, err := strconv.ParseFloat(l[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		text := html.UnescapeString(l[2])
		if half := labelWidth(text) / 2; x-half < end {
			t.Errorf("label %q at %.1f runs into the one before (which ends at %.1f)", text, x, end)
		}
		end = x + labelWidth(text)/2
	}
}

// Two violations over one interval (two-leaders and one-leader-per-term,
// n1 and n2 both claiming term 1) never share one unlabelled outline:
// each is drawn apart, the second inside the first, and each says which
// it is.
func TestViolationsApartWhenTheyMeet(t *testing.T) {
	term := func(n int64) *int64 { return &n }
	b := newHB("n1", "n2", "n3")
	b.meta.Checks = []string{"two-leaders", "one-leader-per-term"}
	b.starts(0, "n1", "n2", "n3")
	b.add(history.Event{Time: msT(100), Kind: history.KindReport, Node: "n1", What: history.ReportLeader, Value: "n1", Term: term(1)})
	b.add(history.Event{Time: msT(100), Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: "n2", Term: term(1)})
	b.add(history.Event{Time: msT(600), Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: "n1", Term: term(1)})
	b.end(1000)
	_, page := render(t, b.h(t))
	svg := svgByID(page, "timeline-svg")
	outlines := regexp.MustCompile(`<g class="violation" data-check="([a-z-]+)" data-nth="1"><title>[^<]*</title><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"`).FindAllStringSubmatch(svg, -1)
	if len(outlines) != 2 {
		t.Fatalf("%d violation outlines on the timeline, want 2 (two-leaders and one-leader-per-term)", len(outlines))
	}
	if outlines[0][2:] == nil || strings.Join(outlines[0][2:], " ") == strings.Join(outlines[1][2:], " ") {
		t.Errorf("both violations share one outline: %v", outlines[0][2:])
	}
	for _, o := range outlines {
		if !strings.Contains(svg, `class="vtag"`) || !strings.Contains(svg, ">"+o[1]+" 1</text>") {
			t.Errorf("the outline of %s's violation is not labelled with its name", o[1])
		}
	}
}

// A run that did not start writes a page that says nothing ran, and
// claims no history: no timeline, no checks, no counts.
func TestAnUnstartedRunDrawsNothing(t *testing.T) {
	b := newHB("n1", "n2", "n3")
	b.meta.Servers = true
	b.add(history.Event{Kind: history.KindUnstarted, What: history.UnstartedFailed, Detail: "network namespaces and TUN devices need root"})
	_, page := render(t, b.h(t))
	if !strings.Contains(page, `id="unstarted"`) || !strings.Contains(page, "need root") {
		t.Error("the page does not say that nothing ran, and why")
	}
	for _, s := range []string{`<svg id="timeline-svg"`, `<h2 id="checks">`, `<h2 id="counts">`, "written before coup recorded them", "The run did not finish"} {
		if strings.Contains(page, s) {
			t.Errorf("the page of a run that did not start has %q", s)
		}
	}
}
