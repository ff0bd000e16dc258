package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
)

// overlapHistory has n1 and n2 both leaders for overlap ms, from 600ms,
// on a run of 1200ms.
func overlapHistory(t *testing.T, overlap float64) *history.History {
	b := newHB("n1", "n2", "n3")
	b.starts(0, "n1", "n2", "n3").
		leader("n1", "n1", 100).leader("n2", "n1", 101).leader("n3", "n1", 102).
		proc("n1", history.ProcPause, 500).
		send(1, "n2", "n3", "coordinator", 600).leader("n2", "n2", 600).deliver(1, 601).leader("n3", "n2", 601).
		send(2, "n2", "n1", "coordinator", 600+overlap-1).proc("n1", history.ProcResume, 600+overlap-0.5).
		deliver(2, 600+overlap).leader("n1", "n2", 600+overlap).
		end(1200)
	return b.h(t)
}

// A violation shorter than a twentieth of the run is drawn again,
// magnified, with the messages of its window; a longer one is not.
func TestMagnifiedViolation(t *testing.T) {
	res, page := render(t, overlapHistory(t, 3))
	if c := res.Checks["two-leaders"]; c.Valid != checks.False || c.Interval == nil {
		t.Fatalf("two-leaders %v, want false with an interval", c.Valid)
	}
	fig := regexp.MustCompile(`<figure class="zoom-view" id="zoom-two-leaders" data-check="two-leaders" data-from="600000000" data-to="603000000">`)
	if !fig.MatchString(page) {
		t.Fatalf("no magnified view of the 3ms overlap")
	}
	for _, want := range []string{
		"two-leaders: the interval from 0.600s to 0.603s (3ms, 1/400 of the run) magnified 80×, with 2 copies of messages in this window of 0.594s to 0.609s",
		`<a href="#zoom-two-leaders"><text`,           // the timeline points at it
		`(<a href="#zoom-two-leaders">magnified</a>)`, // and so does the check
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	svg := svgByID(page, "zoom-svg-zoom-two-leaders")
	if svg == "" {
		t.Fatal("no magnified drawing")
	}
	// On its own axis the 3ms interval is a fifth of the drawing.
	m := regexp.MustCompile(`<g class="violation" data-check="two-leaders" data-nth="1"><title>[^<]*</title><rect x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatal("the magnified drawing does not outline the interval")
	}
	var w float64
	fmt.Sscan(m[1], &w)
	if w < chWidth/6 {
		t.Errorf("the magnified interval is %.1f pixels wide, want at least a sixth of %d", w, chWidth)
	}
	if got := countClass(svg, "msg"); got != 2 {
		t.Errorf("%d messages in the magnified window, want 2", got)
	}

	_, page = render(t, overlapHistory(t, 200))
	if strings.Contains(page, `class="zoom-view"`) || strings.Contains(page, "magnified below") {
		t.Errorf("a 200ms overlap on a 1.2s run is magnified")
	}
}

// Metrics are plotted per name, a step line per node, with GST and the
// time leadership became stable marked; values that are not numbers are
// counted, not drawn; a node that reports a great many values draws a
// bounded number of points.
func TestMetricPlots(t *testing.T) {
	b := newHB("n1", "n2")
	b.meta.GST = msT(600)
	b.meta.Checks = []string{"eventual-leadership"}
	b.starts(0, "n1", "n2").leader("n1", "n1", 1).leader("n2", "n1", 1)
	for k := range 20000 {
		b.metric("n1", "timeout", fmt.Sprint(40+k%50), 2+float64(k)*0.05)
	}
	b.metric("n2", "timeout", "40", 10).metric("n2", "timeout", "45", 300).metric("n2", "timeout", "NaN", 301).metric("n2", "timeout", "x", 302)
	b.metric("n2", "suspicions", "1", 100).metric("n2", "suspicions", "3", 700)
	b.end(1200)
	_, page := render(t, b.h(t))
	plot := svgByID(page, "metric-timeout")
	if plot == "" {
		t.Fatal("no plot of timeout")
	}
	if svgByID(page, "metric-suspicions") == "" {
		t.Errorf("no plot of suspicions")
	}
	for _, want := range []string{`data-node="n1"`, `data-node="n2"`, ">GST 0.600s</text>", "n2: timeout = 45 at 0.300s", ">stable 0.001s</text>"} {
		if !strings.Contains(plot, want) {
			t.Errorf("the plot lacks %q", want)
		}
	}
	if !strings.Contains(page, "2 reported values were not numbers") {
		t.Errorf("the page does not count the values it could not draw")
	}
	n1 := plot[strings.Index(plot, `data-node="n1"`):]
	n1 = n1[:strings.Index(n1, "</g>")]
	if h := strings.Count(n1, " H"); h > 4*chWidth {
		t.Errorf("n1's line has %d steps for 20000 values, want at most %d", h, 4*chWidth)
	}
	if strings.Contains(n1, `class="point"`) {
		t.Errorf("a series of thousands of points has markers")
	}
}

// More metrics than a page draws are counted, not drawn.
func TestMetricPlotsAreBounded(t *testing.T) {
	b := newHB("n1")
	b.starts(0, "n1")
	for k := range maxMetrics + 5 {
		b.metric("n1", fmt.Sprintf("m%02d", k), "1", float64(k))
	}
	b.end(100)
	_, page := render(t, b.h(t))
	if got := strings.Count(page, `<figure class="metric-plot"`); got != maxMetrics {
		t.Errorf("%d plots, want %d", got, maxMetrics)
	}
	if !strings.Contains(page, "5 more metrics are not drawn") {
		t.Errorf("the page does not say that 5 metrics were left out")
	}
}

// A mutex run has a lane per client, the joint holds in red, the nodes'
// critical sections, and links porcupine's page.
func TestMutexLanes(t *testing.T) {
	b := newHB("n1", "n2")
	b.meta.Algorithm = "centralised"
	b.meta.Checks = []string{"mutex-linearizable", "mutex-cs"}
	b.meta.Expect = &history.Expect{Valid: false}
	b.starts(0, "n1", "n2").
		op("c2", history.OpInvoke, "acquire", "n1", 10).op("c2", history.OpOK, "acquire", "", 20).
		add(history.Event{Time: msT(20), Kind: history.KindReport, Node: "n1", What: history.ReportCS, Value: "enter"}).
		op("c10", history.OpInvoke, "acquire", "n2", 30).op("c10", history.OpOK, "acquire", "", 40).
		op("c1", history.OpInvoke, "acquire", "n2", 45).op("c1", history.OpFail, "acquire", "", 46).
		op("c2", history.OpInvoke, "release", "n1", 60).
		add(history.Event{Time: msT(61), Kind: history.KindReport, Node: "n1", What: history.ReportCS, Value: "exit"}).
		op("c2", history.OpOK, "release", "", 62).
		end(200)
	h := b.h(t)
	res, page := render(t, h)
	if res.Checks["mutex-linearizable"].Valid != checks.False {
		t.Fatalf("mutex-linearizable %v, want false", res.Checks["mutex-linearizable"].Valid)
	}
	svg := svgByID(page, "mutex-svg")
	if svg == "" {
		t.Fatal("no lanes")
	}
	rows := regexp.MustCompile(`<text class="row"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
	var names []string
	for _, r := range rows {
		names = append(names, r[1])
	}
	if got := strings.Join(names, ","); got != "c1,c2,c10,held by 2+,n1 in cs" {
		t.Errorf("lanes %s, want c1,c2,c10,held by 2+,n1 in cs", got)
	}
	for class, want := range map[string]int{"lane hold": 2, "lane request": 3, "lane release": 1, "lane joint": 1, "lane cs": 1} {
		if got := countClass(svg, class); got != want {
			t.Errorf("%d elements of class %q, want %d", got, class, want)
		}
	}
	if !strings.Contains(svg, "c2 and c10 held the lock together from 0.040s to 0.060s (20ms)") {
		t.Errorf("the joint hold is not described")
	}
	link := `<a class="file" href="` + checks.VisualisationFile + `">`
	if strings.Count(page, link) < 2 {
		t.Errorf("porcupine's page is not linked from the lanes and the check")
	}
	assertSelfContained(t, page, []string{checks.VisualisationFile})
}

// A simulated run says so, with its seed; a real one does not.
func TestSimulatedRunIsMarked(t *testing.T) {
	b := newHB("n1")
	b.meta.Simulated = true
	b.starts(0, "n1").end(10)
	_, page := render(t, b.h(t))
	if !strings.Contains(page, `<span class="badge sim" id="simulated"`) || !strings.Contains(page, ">simulated, seed 7</span>") {
		t.Errorf("the simulated run is not marked")
	}
	b.meta.Simulated = false
	if _, page := render(t, b.h(t)); strings.Contains(page, `id="simulated"`) {
		t.Errorf("a real run is marked simulated")
	}
}

// A client's process that the nemesis paused is hatched over its own lane,
// and over no other.
func TestMutexLanesShowAPausedClient(t *testing.T) {
	b := newHB("n1", "n2")
	b.meta.Checks = []string{"mutex-linearizable"}
	b.starts(0, "n1", "n2").
		op("c1", history.OpInvoke, "acquire", "n1", 10).op("c1", history.OpOK, "acquire", "", 20).
		nemesis("pause", history.PhaseStart, 30, "c1").
		op("c2", history.OpInvoke, "acquire", "n2", 35).op("c2", history.OpOK, "acquire", "", 60).
		nemesis("pause", history.PhaseEnd, 80, "c1").
		op("c1", history.OpInvoke, "release", "n1", 90).op("c1", history.OpOK, "release", "", 95).
		end(200)
	_, page := render(t, b.h(t))
	svg := svgByID(page, "mutex-svg")
	if got := countClass(svg, "lane paused"); got != 1 {
		t.Fatalf("%d paused hatchings, want 1 (c1's)", got)
	}
	if !strings.Contains(svg, "c1's process paused from 0.030s to 0.080s (50ms)") {
		t.Errorf("the pause is not described on c1's lane")
	}
}
