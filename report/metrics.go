package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"

	"github.com/coupharness/coup/history"
)

// Metric plots: every metric the nodes report (Ω's timeout, a gossip
// node's member count, ...) drawn over the run's time, one small plot per
// metric with a step line per node, GST and the time the eventual-leadership
// check found leadership stable marked, and the nemesis's faults shaded.
// Per node and pixel column only the first, lowest, highest and last
// values are kept, so a node that reports a million values draws no more
// than a few thousand points.

const (
	mpHeight = 130 // a plot's rows: the value axis
	mpMarks  = 80  // points a series may have and still get markers
)

// metricPoint is a reported value at a time.
type metricPoint struct {
	t int64
	v float64
}

// column is the values a series reported within one pixel column.
type column struct {
	first, low, high, last metricPoint
}

// series is one node's values of one metric.
type series struct {
	node string
	cols map[int]*column
}

// metricPlot is one metric, for the page.
type metricPlot struct {
	ID      string // the figure's anchor
	Name    string
	Caption string
	SVG     template.HTML
	Legend  template.HTML
}

// metricPlots draws the plots, and says how many metrics were left out
// and how many values could not be read as numbers.
func (m *reportModel) metricPlots() ([]metricPlot, int, int) {
	ax := newAxis(m.from, m.to, chLeft, chWidth)
	byName := map[string]map[string]*series{}
	var names []string
	skipped, unreadable := map[string]bool{}, 0
	for i := range m.h.Events {
		e := &m.h.Events[i]
		if e.Kind != history.KindReport || e.What != history.ReportMetric {
			continue
		}
		v, err := strconv.ParseFloat(e.Value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			unreadable++
			continue
		}
		nodes, ok := byName[e.Name]
		if !ok {
			if len(names) >= maxMetrics {
				skipped[e.Name] = true
				continue
			}
			nodes = map[string]*series{}
			byName[e.Name] = nodes
			names = append(names, e.Name)
		}
		s, ok := nodes[e.Node]
		if !ok {
			if _, drawn := m.index[e.Node]; !drawn {
				continue
			}
			s = &series{node: e.Node, cols: map[int]*column{}}
			nodes[e.Node] = s
		}
		s.add(int(ax.x(e.Time)-ax.left), metricPoint{t: e.Time, v: v})
	}
	sort.Strings(names)
	var out []metricPlot
	for _, name := range names {
		out = append(out, m.metricPlot(ax, name, byName[name]))
	}
	return out, len(skipped), unreadable
}

func (s *series) add(col int, p metricPoint) {
	c := s.cols[col]
	if c == nil {
		s.cols[col] = &column{first: p, low: p, high: p, last: p}
		return
	}
	if p.v < c.low.v {
		c.low = p
	}
	if p.v > c.high.v {
		c.high = p
	}
	c.last = p
}

// points are the series' kept values in time order.
func (s *series) points() []metricPoint {
	cols := make([]int, 0, len(s.cols))
	for k := range s.cols {
		cols = append(cols, k)
	}
	sort.Ints(cols)
	var out []metricPoint
	for _, k := range cols {
		c := s.cols[k]
		ps := []metricPoint{c.first, c.low, c.high, c.last}
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].t < ps[j].t })
		for i, p := range ps {
			if i > 0 && p == ps[i-1] {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// metricPlot draws one metric's series.
func (m *reportModel) metricPlot(ax axis, name string, nodes map[string]*series) metricPlot {
	var list []*series
	for _, s := range nodes {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool { return m.index[list[i].node] < m.index[list[j].node] })
	lo, hi := math.Inf(1), math.Inf(-1)
	pts := make([][]metricPoint, len(list))
	for i, s := range list {
		pts[i] = s.points()
		for _, p := range pts[i] {
			lo, hi = math.Min(lo, p.v), math.Max(hi, p.v)
		}
	}
	if !(hi > lo) {
		lo, hi = lo-1, hi+1
	}
	pad := (hi - lo) * 0.08
	lo, hi = lo-pad, hi+pad
	c := newChart(ax, nil, 0)
	c.top = 20
	top, bottom := float64(c.top), float64(c.top+mpHeight)
	y := func(v float64) float64 { return bottom - (v-lo)/(hi-lo)*(bottom-top) }
	// The chart's rows are the value axis: its height is mpHeight.
	c.rows = make([]string, 1)
	c.rowH = mpHeight
	c.open("metric", "metric-"+anchor(name))
	c.faults(m.tl.Faults, m.h.Meta.Nodes, 0.14)
	// Value ticks.
	for _, v := range valueTicks(lo, hi) {
		c.printf(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" font-size="10" fill="#555">%s</text>`,
			chLeft, y(v), ax.right(), y(v), chLeft-6, y(v), trimFloat(v))
	}
	c.printf(`<rect x="%d" y="%.1f" width="%d" height="%d" fill="none" stroke="#ccc"/>`, chLeft, top, chWidth, mpHeight)
	var legend []legendItem
	for i, s := range list {
		st, _ := m.styleOfNode(s.node)
		ps := pts[i]
		if len(ps) == 0 {
			continue
		}
		// A step line: the value holds until the next report.
		var d []byte
		for k, p := range ps {
			x := ax.x(p.t)
			if k == 0 {
				d = fmt.Appendf(d, "M%.1f %.1f", x, y(p.v))
			} else {
				d = fmt.Appendf(d, " H%.1f V%.1f", x, y(p.v))
			}
		}
		d = fmt.Appendf(d, " H%.1f", ax.x(m.tl.End))
		dash := ""
		if st.dash != "" {
			dash = ` stroke-dasharray="` + st.dash + `"`
		}
		last := ps[len(ps)-1]
		c.printf(`<g class="series" data-node="%s"><title>%s: %s, %d values kept, last %s at %s</title><path d="%s" fill="none" stroke="%s" stroke-width="1.8"%s/>`,
			esc(s.node), esc(s.node), esc(name), len(ps), trimFloat(last.v), secs(last.t), d, st.colour, dash)
		if len(ps) <= mpMarks {
			for _, p := range ps {
				c.printf(`%s`, markerAt(st.marker, ax.x(p.t), y(p.v), st.colour, fmt.Sprintf("%s: %s = %s at %s", s.node, name, trimFloat(p.v), secs(p.t))))
			}
		}
		c.printf(`</g>`)
		legend = append(legend, legendItem{Name: s.node, CSS: st.colour, Dash: st.dash, Marker: st.marker, Line: true})
	}
	if g := m.h.Meta.GST; g > 0 {
		c.vline(g, "GST "+secs(g), fmt.Sprintf("global stabilisation time (GST) at %s: from here every message arrives within Δ", secs(g)), "#000", "6,3", true)
	}
	if r, ok := m.res.Checks["eventual-leadership"]; ok {
		if at, ok := r.Figures["stabilised_ns"]; ok {
			if t, ok := figureTime(at); ok {
				c.vline(t, "stable "+secs(t), fmt.Sprintf("eventual-leadership: every correct node trusts the same node from %s on", secs(t)), "#007a3d", "2,2", false)
			}
		}
	}
	c.axisTicks()
	caption := "the value each node reported, held until its next report"
	return metricPlot{ID: "plot-" + anchor(name), Name: name, Caption: caption, SVG: template.HTML(c.close()), Legend: legendHTML(legend)}
}

// figureTime reads a figure that is a time (a number, as results hold it
// or as JSON gives it back).
func figureTime(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		return floatTime(x), true
	}
	return 0, false
}

// valueTicks returns three to six round values within [lo, hi].
func valueTicks(lo, hi float64) []float64 {
	step := niceStep((hi - lo) / 4)
	var out []float64
	for i := 0; i < 8; i++ {
		v := math.Ceil(lo/step)*step + float64(i)*step
		if v > hi {
			break
		}
		out = append(out, v)
	}
	return out
}

// niceStep returns 1, 2 or 5 times a power of ten, at least raw.
func niceStep(raw float64) float64 {
	if !(raw > 0) || math.IsInf(raw, 0) {
		return 1
	}
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*pow >= raw {
			return m * pow
		}
	}
	return 10 * pow
}

// markerAt draws a point's marker: its shape is a node's cue beyond hue.
func markerAt(shape string, x, y float64, colour, title string) string {
	var s string
	switch shape {
	case "square":
		s = fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="6" height="6" fill="%s"/>`, x-3, y-3, colour)
	case "triangle":
		s = fmt.Sprintf(`<path d="M%.1f %.1f l4 7 h-8 z" fill="%s"/>`, x, y-4, colour)
	case "diamond":
		s = fmt.Sprintf(`<path d="M%.1f %.1f l4 4 l-4 4 l-4 -4 z" fill="%s"/>`, x, y-4, colour)
	default:
		s = fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, x, y, colour)
	}
	return `<g class="point"><title>` + esc(title) + `</title>` + s + `</g>`
}
