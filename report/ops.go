package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"

	"github.com/coupharness/coup/history"
)

// Operations over time, as Jepsen's perf graphs draw them: each client
// operation's latency against the time it was invoked, a dot per completed
// operation coloured by its outcome (ok, fail, info) and shaped by its f
// (read, write, cas, add, acquire, release, ...), on a logarithmic axis;
// and the throughput, the operations completed per second by outcome. The
// nemesis's faults are drawn behind both, so that a reader sees at once
// what a partition did to the clients: the timeouts stacked at the
// timeout's latency, the failures, the gap in throughput and its
// recovery. Dots that fall on the same pixel with the same outcome and f
// draw once, and at most maxOpDots are drawn, so a history of a million
// operations draws a page of the same size.

const (
	opPlotHeight = 170  // the latency plot's value axis, in pixels
	ratePlotH    = 120  // the throughput plot's
	maxOpDots    = 8000 // dots drawn, past those that fall on the same pixel
	minRateBins  = 12   // a throughput plot has at least this many bins, for short runs
	maxRateBins  = 470  // and at most this many (two pixels each)
)

// The outcomes' colours (Okabe and Ito's, as everywhere: blue for ok as
// Jepsen's, reddish purple for a failure, wine for an indeterminate
// operation), in the order the outcomes are drawn and listed.
var outcomes = []struct{ typ, colour, words string }{
	{history.OpOK, "#0072B2", "ok"},
	{history.OpInfo, "#882255", "info (timed out: may or may not have happened)"},
	{history.OpFail, "#CC79A7", "fail"},
}

func outcomeColour(typ string) string {
	for _, o := range outcomes {
		if o.typ == typ {
			return o.colour
		}
	}
	return colOther
}

// fShapes are the shapes of the workloads' usual fs; any other f takes
// the first shape no f of the run has, in the order of opShapes.
var fShapes = map[string]string{
	"read": "circle", "write": "square", "cas": "diamond", "add": "triangle",
	"acquire": "triangle", "release": "triangle-down", "elect": "circle", "echo": "circle",
}

var opShapes = []string{"circle", "square", "diamond", "triangle", "triangle-down", "plus", "cross"}

// completedOp is one client operation: its invocation and its completion.
type completedOp struct {
	invoke, done int64
	f, typ       string // typ: ok, fail or info
	process      string
	node, served string
}

// latency is how long the operation took, at least 0.
func (o completedOp) latency() int64 { return max(0, o.done-o.invoke) }

// opsOf pairs each invocation with its process's next completion, and
// counts the invocations that never completed (open at the end of the
// history) and the completions with no invocation (a damaged history).
func opsOf(h *history.History) (ops []completedOp, open, stray int) {
	pending := map[string]*history.Event{}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.KindOp {
			continue
		}
		if e.Type == history.OpInvoke {
			if pending[e.Process] != nil {
				open++ // a second invocation: the first never completed
			}
			pending[e.Process] = e
			continue
		}
		inv := pending[e.Process]
		if inv == nil {
			stray++
			continue
		}
		delete(pending, e.Process)
		ops = append(ops, completedOp{invoke: inv.Time, done: e.Time, f: inv.F, typ: e.Type, process: e.Process, node: inv.Node, served: e.Served})
	}
	return ops, open + len(pending), stray
}

// opsView is the operations section, for the page.
type opsView struct {
	Latency, Rate template.HTML
	Legend        template.HTML
	// Completed counts the operations drawn, Open those that never
	// completed, Stray completions with no invocation, Hidden the dots
	// not drawn past maxOpDots; Bin is the throughput's bin in words.
	Completed, Open, Stray, Hidden int
	Bin                            string
	// Counts are the operations by f and outcome.
	Counts []opCount
}

// opCount is how many operations of one f ended each way.
type opCount struct {
	F              string
	OK, Fail, Info int
}

// opsSection draws the operations section, or returns nil for a run with
// no client operation.
func (m *reportModel) opsSection() *opsView {
	ops, open, stray := opsOf(m.h)
	if len(ops) == 0 && open == 0 {
		return nil
	}
	v := &opsView{Completed: len(ops), Open: open, Stray: stray}
	shapes := shapesOf(ops)
	ax := newAxis(m.from, m.to, chLeft, chWidth)
	var hidden int
	v.Latency, hidden = m.latencyPlot(ax, ops, shapes)
	v.Hidden = hidden
	bin := rateBin(ax.span())
	v.Bin = dur(bin)
	v.Rate = m.ratePlot(ax, ops, bin)
	var items []legendItem
	for _, o := range outcomes {
		items = append(items, legendItem{Name: o.words, CSS: o.colour, Marker: "circle", Line: true})
	}
	for _, f := range sortedFs(shapes) {
		items = append(items, legendItem{Name: f, CSS: colOther, Marker: shapes[f]})
	}
	v.Legend = opsLegend(items)
	v.Counts = opCounts(ops)
	return v
}

// shapesOf gives every f of the operations its shape.
func shapesOf(ops []completedOp) map[string]string {
	out := map[string]string{}
	used := map[string]bool{}
	var others []string
	for _, o := range ops {
		if _, ok := out[o.f]; ok {
			continue
		}
		if s, ok := fShapes[o.f]; ok {
			out[o.f] = s
			used[s] = true
			continue
		}
		out[o.f] = ""
		others = append(others, o.f)
	}
	sort.Strings(others)
	for i, f := range others {
		shape := opShapes[i%len(opShapes)]
		for _, s := range opShapes {
			if !used[s] {
				shape = s
				break
			}
		}
		out[f] = shape
		used[shape] = true
	}
	return out
}

func sortedFs(shapes map[string]string) []string {
	fs := make([]string, 0, len(shapes))
	for f := range shapes {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	if len(fs) > 12 {
		fs = fs[:12]
	}
	return fs
}

// opCounts counts the operations by f and outcome, the fs in name order
// (at most maxStatRows).
func opCounts(ops []completedOp) []opCount {
	by := map[string]*opCount{}
	for _, o := range ops {
		c := by[o.f]
		if c == nil {
			c = &opCount{F: o.f}
			by[o.f] = c
		}
		switch o.typ {
		case history.OpOK:
			c.OK++
		case history.OpFail:
			c.Fail++
		case history.OpInfo:
			c.Info++
		}
	}
	var out []opCount
	for _, c := range by {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b opCount) int {
		switch {
		case a.F < b.F:
			return -1
		case a.F > b.F:
			return 1
		}
		return 0
	})
	if len(out) > maxStatRows {
		out = out[:maxStatRows]
	}
	return out
}

// logScale maps latencies onto a plot's height, logarithmically, between
// the powers of ten around the shortest and the longest (at least a
// decade, at least a microsecond).
type logScale struct {
	lo, hi      float64 // log10 of nanoseconds
	top, bottom float64 // pixels
}

func newLogScale(ops []completedOp, top, bottom float64) logScale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, o := range ops {
		l := math.Log10(float64(max(o.latency(), 1000)))
		lo, hi = math.Min(lo, l), math.Max(hi, l)
	}
	if math.IsInf(lo, 1) {
		lo, hi = 6, 9
	}
	lo, hi = math.Floor(lo), math.Ceil(hi)
	if hi <= lo {
		hi = lo + 1
	}
	return logScale{lo: lo, hi: hi, top: top, bottom: bottom}
}

// y is the pixel of a latency in nanoseconds.
func (s logScale) y(ns int64) float64 {
	l := math.Log10(float64(max(ns, 1000)))
	l = math.Max(s.lo, math.Min(l, s.hi))
	return s.bottom - (l-s.lo)/(s.hi-s.lo)*(s.bottom-s.top)
}

// ticks are the powers of ten of the scale (every other one past eight).
func (s logScale) ticks() []int64 {
	step := 1.0
	if s.hi-s.lo > 8 {
		step = 2
	}
	var out []int64
	for l := s.lo; l <= s.hi; l += step {
		out = append(out, int64(math.Pow(10, l)))
	}
	return out
}

// opDot is one dot of the latency plot.
type opDot struct {
	x, y  float64
	op    completedOp
	count int // the operations that fall on its pixel
}

// latencyDots are the dots of the operations on the axis and scale: one
// per pixel, outcome and f, in the order of the operations' invocations
// (the first operation of a pixel stands for the others); at most
// maxOpDots, the rest counted.
func latencyDots(ops []completedOp, ax axis, s logScale) ([]opDot, int) {
	type key struct {
		x, y   int
		typ, f string
	}
	sorted := slices.Clone(ops)
	slices.SortStableFunc(sorted, func(a, b completedOp) int {
		switch {
		case a.invoke < b.invoke:
			return -1
		case a.invoke > b.invoke:
			return 1
		}
		return 0
	})
	at := map[key]int{}
	var dots []opDot
	hidden := 0
	for _, o := range sorted {
		x, y := ax.x(o.invoke), s.y(o.latency())
		k := key{int(math.Round(x)), int(math.Round(y)), o.typ, o.f}
		if i, ok := at[k]; ok {
			dots[i].count++
			continue
		}
		if len(dots) == maxOpDots {
			hidden++
			continue
		}
		at[k] = len(dots)
		dots = append(dots, opDot{x: x, y: y, op: o, count: 1})
	}
	return dots, hidden
}

// latencyPlot draws the latency of every operation against the time it
// was invoked; it returns the SVG and the dots not drawn.
func (m *reportModel) latencyPlot(ax axis, ops []completedOp, shapes map[string]string) (template.HTML, int) {
	c := newChart(ax, make([]string, 1), opPlotHeight)
	c.top = 20
	top, bottom := float64(c.top), float64(c.top+opPlotHeight)
	s := newLogScale(ops, top+4, bottom-4)
	c.open("ops-latency", "ops-latency")
	c.faults(m.tl.Faults, m.h.Meta.Nodes, 0.2)
	for _, t := range s.ticks() {
		y := s.y(t)
		c.printf(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" font-size="10" fill="#555">%s</text>`,
			chLeft, y, ax.right(), y, chLeft-6, y, dur(t))
	}
	c.printf(`<rect x="%d" y="%.1f" width="%d" height="%d" fill="none" stroke="#ccc"/>`, chLeft, top, chWidth, opPlotHeight)
	c.printf(`<text x="12" y="%.1f" font-size="10" fill="#555" transform="rotate(-90 12 %.1f)" text-anchor="middle">latency</text>`, (top+bottom)/2, (top+bottom)/2)
	dots, hidden := latencyDots(ops, ax, s)
	// The outcomes drawn in reverse order of the list, so that ok, the
	// commonest, lies under the others.
	for k := len(outcomes) - 1; k >= 0; k-- {
		typ := outcomes[k].typ
		c.printf(`<g class="ops %s" fill-opacity="0.75">`, typ)
		for _, d := range dots {
			if d.op.typ != typ {
				continue
			}
			c.printf(`%s`, opMarker(shapes[d.op.f], d.x, d.y, outcomeColour(typ), d.title()))
		}
		c.printf(`</g>`)
	}
	c.axisTicks()
	return template.HTML(c.close()), hidden
}

// title says what a dot stands for, for hovering.
func (d opDot) title() string {
	o := d.op
	s := fmt.Sprintf("%s %s %s: invoked %s, took %s", o.process, o.f, o.typ, secs(o.invoke), dur(o.latency()))
	if o.node != "" {
		s += ", at " + o.node
	}
	if o.served != "" && o.served != o.node {
		s += ", served by " + o.served
	}
	if d.count > 1 {
		s += fmt.Sprintf(" (and %d more %s %s on this pixel)", d.count-1, o.f, o.typ)
	}
	return s
}

// opMarker draws a dot of the latency plot in its f's shape.
func opMarker(shape string, x, y float64, colour, title string) string {
	var s string
	switch shape {
	case "square":
		s = fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="6" height="6" fill="%s"/>`, x-3, y-3, colour)
	case "diamond":
		s = fmt.Sprintf(`<path d="M%.1f %.1fl4 4l-4 4l-4 -4z" fill="%s"/>`, x, y-4, colour)
	case "triangle":
		s = fmt.Sprintf(`<path d="M%.1f %.1fl4 7h-8z" fill="%s"/>`, x, y-4, colour)
	case "triangle-down":
		s = fmt.Sprintf(`<path d="M%.1f %.1fl4 -7h-8z" fill="%s"/>`, x, y+4, colour)
	case "plus":
		s = fmt.Sprintf(`<path d="M%.1f %.1fh7m-3.5 -3.5v7" stroke="%s" stroke-width="2"/>`, x-3.5, y, colour)
	case "cross":
		s = fmt.Sprintf(`<path d="M%.1f %.1fl6 6m0 -6l-6 6" stroke="%s" stroke-width="2"/>`, x-3, y-3, colour)
	default:
		s = fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, x, y, colour)
	}
	return `<g class="op"><title>` + esc(title) + `</title>` + s + `</g>`
}

// rateBin is the throughput's bin for a run of span nanoseconds: a
// second, or a round fraction of one for a run too short to have
// minRateBins of them, or a round multiple for one so long that it would
// have more than maxRateBins.
func rateBin(span float64) int64 {
	switch {
	case span > maxRateBins*1e9:
		return max(floatTime(niceStep(span/maxRateBins)), 1e9)
	case span >= minRateBins*1e9:
		return 1e9
	}
	bins := []int64{1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8, 5e8}
	for k := len(bins) - 1; k >= 0; k-- {
		if span/float64(bins[k]) >= minRateBins {
			return bins[k]
		}
	}
	return bins[0]
}

// rateBins counts the operations completed in each bin of the window, by
// outcome (the order of outcomes); a completion outside the window is
// counted in the bin at its edge.
func rateBins(ops []completedOp, from, to, bin int64) [][]int {
	n := max(1, int(math.Ceil((float64(to)-float64(from))/float64(bin))))
	out := make([][]int, len(outcomes))
	for k := range out {
		out[k] = make([]int, n)
	}
	for _, o := range ops {
		k := slices.IndexFunc(outcomes, func(x struct{ typ, colour, words string }) bool { return x.typ == o.typ })
		if k < 0 {
			continue
		}
		i := int((float64(clampTime(o.done, from, to)) - float64(from)) / float64(bin))
		out[k][max(0, min(n-1, i))]++
	}
	return out
}

// ratePlot draws the operations completed per second, by outcome, as step
// lines over bins of bin nanoseconds.
func (m *reportModel) ratePlot(ax axis, ops []completedOp, bin int64) template.HTML {
	counts := rateBins(ops, ax.from, ax.to, bin)
	perSec := 1e9 / float64(bin)
	most := 1.0
	for _, row := range counts {
		for _, n := range row {
			most = math.Max(most, float64(n)*perSec)
		}
	}
	c := newChart(ax, make([]string, 1), ratePlotH)
	c.top = 20
	top, bottom := float64(c.top), float64(c.top+ratePlotH)
	hi := niceStep(most/4) * 4
	hi = math.Max(hi, most)
	y := func(v float64) float64 { return bottom - v/hi*(bottom-top-4) }
	c.open("ops-rate", "ops-rate")
	c.faults(m.tl.Faults, m.h.Meta.Nodes, 0.2)
	for _, v := range valueTicks(0, hi) {
		c.printf(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" font-size="10" fill="#555">%s</text>`,
			chLeft, y(v), ax.right(), y(v), chLeft-6, y(v), trimFloat(v))
	}
	c.printf(`<rect x="%d" y="%.1f" width="%d" height="%d" fill="none" stroke="#ccc"/>`, chLeft, top, chWidth, ratePlotH)
	c.printf(`<text x="12" y="%.1f" font-size="10" fill="#555" transform="rotate(-90 12 %.1f)" text-anchor="middle">ops/s</text>`, (top+bottom)/2, (top+bottom)/2)
	xOf := func(t float64) float64 {
		return ax.left + math.Min(1, (t-float64(ax.from))/ax.span())*ax.width
	}
	for k, o := range outcomes {
		// The line runs from the bin of the outcome's first completion to
		// that of its last: zero before and after says nothing.
		first, last := -1, -1
		total := 0
		for i, n := range counts[k] {
			if n > 0 {
				if first < 0 {
					first = i
				}
				last = i
			}
			total += n
		}
		var d []byte
		for i := max(first, 0); i <= last; i++ {
			n := counts[k][i]
			x0, x1 := xOf(float64(ax.from)+float64(i)*float64(bin)), xOf(float64(ax.from)+float64(i+1)*float64(bin))
			if i == first {
				d = fmt.Appendf(d, "M%.1f %.1f", x0, y(float64(n)*perSec))
			} else {
				d = fmt.Appendf(d, " V%.1f", y(float64(n)*perSec))
			}
			d = fmt.Appendf(d, " H%.1f", x1)
		}
		if total == 0 {
			continue
		}
		c.printf(`<g class="rate %s" data-outcome="%s"><title>%s: %d operations completed, in bins of %s</title><path d="%s" fill="none" stroke="%s" stroke-width="1.8"/>`,
			o.typ, o.typ, o.typ, total, dur(bin), d, o.colour)
		if len(counts[k]) <= 80 {
			for i, n := range counts[k] {
				if n == 0 {
					continue
				}
				x := (xOf(float64(ax.from)+float64(i)*float64(bin)) + xOf(float64(ax.from)+float64(i+1)*float64(bin))) / 2
				c.printf(`%s`, markerAt("circle", x, y(float64(n)*perSec), o.colour,
					fmt.Sprintf("%d %s from %s to %s: %s/s", n, o.typ, secs(ax.from+int64(i)*bin), secs(ax.from+int64(i+1)*bin), trimFloat(float64(n)*perSec))))
			}
		}
		c.printf(`</g>`)
	}
	c.axisTicks()
	return template.HTML(c.close())
}

// opsLegend renders the outcomes (a line and a dot in their colour) and
// the fs (their shape, in grey).
func opsLegend(items []legendItem) template.HTML {
	var b []byte
	for _, it := range items {
		b = append(b, `<span class="item">`...)
		if it.Line {
			b = fmt.Appendf(b, `<svg width="34" height="12" aria-hidden="true"><line x1="1" y1="6" x2="33" y2="6" stroke="%s" stroke-width="2"/><circle cx="17" cy="6" r="3" fill="%s"/></svg>`, esc(it.CSS), esc(it.CSS))
		} else {
			b = fmt.Appendf(b, `<svg width="16" height="14" aria-hidden="true">%s</svg>`, opMarker(it.Marker, 8, 7, "#444", it.Name))
		}
		b = append(b, esc(it.Name)...)
		b = append(b, `</span>`...)
	}
	return template.HTML(b)
}
