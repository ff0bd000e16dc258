package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/coupharness/coup/checks"
)

// The geometry of every drawing over time, in pixels: names on the left,
// the time axis, a margin on the right.
const (
	chLeft  = 80
	chWidth = 940
	chRight = 24
	chTop   = 34 // fault labels above the rows
	chAxis  = 30 // the time axis below them
)

// chart is one SVG drawing over a window of time, with one row per lane
// (a node, a client, ...).
type chart struct {
	b    strings.Builder
	ax   axis
	rows []string
	rowH int
	top  int
	// over is drawn last, over everything else (the tags of violations
	// whose outlines meet, which the rows' bars would hide).
	over strings.Builder
}

func newChart(ax axis, rows []string, rowH int) *chart {
	return &chart{ax: ax, rows: rows, rowH: rowH, top: chTop}
}

// mid is the y of row i's centre line.
func (c *chart) mid(i int) float64 { return float64(c.top + i*c.rowH + c.rowH/2) }

// bottom is the y below the last row.
func (c *chart) bottom() int { return c.top + len(c.rows)*c.rowH }

// height is the whole drawing's.
func (c *chart) height() int { return c.bottom() + chAxis }

func (c *chart) printf(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

// open starts the SVG, with a class and the window it shows (for the
// page's script and for tests).
func (c *chart) open(class, id string) {
	w := chLeft + chWidth + chRight
	idAttr := ""
	if id != "" {
		idAttr = ` id="` + esc(id) + `"`
	}
	c.printf(`<svg%s class="%s" width="%d" height="%d" viewBox="0 0 %d %d" data-from="%d" data-to="%d" data-left="%d" data-width="%d" role="img">`,
		idAttr, class, w, c.height(), w, c.height(), c.ax.from, c.ax.to, chLeft, chWidth)
}

// close ends the SVG and returns it.
func (c *chart) close() string {
	c.b.WriteString(c.over.String())
	c.b.WriteString(`</svg>`)
	return c.b.String()
}

// rowLabels writes each row's name on the left, and a faint line along it.
func (c *chart) rowLabels(guides bool) {
	for i, r := range c.rows {
		y := c.mid(i)
		c.printf(`<text class="row" x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, chLeft-8, y, esc(short(r, 12)))
		if guides {
			c.printf(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`, chLeft, y, c.ax.right(), y)
		}
	}
}

// faults shades each fault of the nemesis that meets the window as a band
// across the rows; a fault whose end the history does not record is a
// dashed line at its start. Faults that draw on the same pixels draw once;
// the labels of faults that begin close together are joined, at the top.
func (c *chart) faults(faults []checks.Fault, all []string, opacity float64) {
	top, bottom := c.top-4, c.bottom()+4
	seen := map[[2]int]bool{}
	labelX, label := math.Inf(-1), ""
	flush := func() {
		if label != "" {
			c.printf(`<text class="fault-label" x="%.1f" y="%d" fill="%s" font-size="10">%s</text>`, labelX+2, top-4, colNemesisText, esc(short(label, 60)))
		}
	}
	for _, f := range faults {
		end := f.To
		if end < 0 {
			end = f.From
		}
		if !c.ax.overlaps(f.From, end) {
			continue
		}
		x0, x1 := c.ax.x(f.From), c.ax.x(end)
		name := f.What
		if len(f.Nodes) > 0 {
			name += " " + faultTargets(f.Nodes, all)
		}
		switch {
		case x0-labelX >= 90:
			flush()
			labelX, label = x0, name
		case !strings.Contains(label, name) && len(label) < 60:
			label += " · " + name
		}
		if seen[[2]int{int(x0), int(x1)}] {
			continue
		}
		seen[[2]int{int(x0), int(x1)}] = true
		if f.To < 0 {
			c.printf(`<g class="fault"><title>%s at %s (no end recorded)</title><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="4,2"/></g>`,
				esc("nemesis: "+name), secs(f.From), x0, top, x0, bottom, colNemesisStroke)
			continue
		}
		c.printf(`<g class="fault"><title>%s from %s to %s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="%.2f" stroke="%s" stroke-dasharray="3,2"/></g>`,
			esc("nemesis: "+name), secs(f.From), secs(f.To), x0, top, math.Max(x1-x0, 1), bottom-top, colNemesis, opacity, colNemesisStroke)
	}
	flush()
}

// faultTargets names a fault's nodes: "all" when it is every node.
func faultTargets(nodes, all []string) string {
	if len(nodes) == len(all) && len(all) > 1 {
		same := true
		for i := range nodes {
			same = same && nodes[i] == all[i]
		}
		if same {
			return "(all)"
		}
	}
	return joinShort(nodes, 4)
}

// violations outlines the intervals of the false checks that meet the
// window, at least 3 pixels wide so that the shortest stays visible; with
// pointers, a short interval (see isShort) also gets a pointer to its
// magnified view.
func (c *chart) violations(m *reportModel, pointers bool) {
	// A pointer's label is written whole where it fits, as its number
	// alone where only that fits beside the one before, and not at all
	// where neither does: labels never run into each other.
	//
	// Violations whose outlines would meet are drawn apart: each one
	// nested inside those before it (inset by 3 pixels a level, dashed
	// from the second level) and each labelled with its check and
	// number, so that two never share one unlabelled outline.
	labelEnd := math.Inf(-1)
	type outline struct {
		v      violation
		x0, w  float64
		level  int  // how many drawn before it it meets
		shared bool // it meets another
	}
	var outs []outline
	for _, v := range m.violations {
		if !c.ax.overlaps(v.from, v.to) {
			continue
		}
		x0, x1 := c.ax.x(v.from), c.ax.x(v.to)
		w := math.Max(x1-x0, 3)
		if x1-x0 < 3 {
			x0 -= (3 - (x1 - x0)) / 2
		}
		o := outline{v: v, x0: x0, w: w}
		for k := range outs {
			if x0 <= outs[k].x0+outs[k].w+1 && outs[k].x0 <= x0+w+1 {
				o.level++
				o.shared, outs[k].shared = true, true
			}
		}
		outs = append(outs, o)
	}
	for _, o := range outs {
		v, x0, w := o.v, o.x0, o.w
		inset := math.Min(float64(3*o.level), float64(c.bottom()-c.top)/2)
		dash := ""
		if o.level > 0 {
			dash = ` stroke-dasharray="5,2"`
		}
		c.printf(`<g class="violation" data-check="%s" data-nth="%d"><title>%s%s: %s to %s (%s): %s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.15" stroke="%s" stroke-width="1.5"%s/>`,
			esc(v.check), v.nth, esc(v.check), v.ordinal(), secs(v.from), secs(v.to), dur(v.to-v.from), esc(v.text),
			x0+inset, float64(c.top-2)+inset, math.Max(w-2*inset, 1), float64(c.bottom()-c.top+4)-2*inset, colViolation, colViolation, dash)
		if o.shared {
			tag := fmt.Sprintf("%s %d", v.check, v.nth) // a line of its own, below the tags of those it meets
			fmt.Fprintf(&c.over, `<text class="vtag" x="%.1f" y="%.1f" font-size="9" font-weight="bold" fill="%s" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`,
				x0+inset+2, float64(c.top)+inset+8+10*float64(o.level), colViolation, esc(tag))
		}
		if pointers && v.zoom {
			mid := x0 + w/2
			label := "▼ " + v.check + ", magnified below"
			if mid-labelWidth(label)/2 < labelEnd+4 {
				label = fmt.Sprintf("▼ %d", v.nth)
			}
			if half := labelWidth(label) / 2; mid-half >= labelEnd+4 {
				c.printf(`<a href="#%s"><text x="%.1f" y="%d" text-anchor="middle" fill="%s" font-size="10" font-weight="bold">%s</text></a>`,
					esc(v.id), mid, c.top-22, colViolation, esc(label))
				labelEnd = mid + half
			}
		}
		c.printf(`</g>`)
	}
}

// labelWidth is about how wide a pointer's label is drawn, in pixels (10
// pixels bold: about 6.2 a character).
func labelWidth(label string) float64 { return 6.2 * float64(len([]rune(label))) }

// ordinal says which of its check's violations v is, for a title: ""
// when the check lists one, " (violation 2 of 3)" otherwise.
func (v violation) ordinal() string {
	if v.of <= 1 {
		return ""
	}
	return fmt.Sprintf(" (violation %d of %d)", v.nth, v.of)
}

// axisTicks draws the time axis below the rows.
func (c *chart) axisTicks() {
	y := c.bottom() + 6
	c.printf(`<g class="axis"><line x1="%d" y1="%d" x2="%.1f" y2="%d" stroke="#888"/>`, chLeft, y, c.ax.right(), y)
	for _, t := range c.ax.ticks() {
		x := c.ax.x(t.t)
		c.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888"/><text x="%.1f" y="%d" text-anchor="middle" fill="#555" font-size="10">%s</text>`,
			x, y, x, y+4, x, y+16, t.label)
	}
	c.printf(`</g>`)
}

// vline draws a labelled vertical line across the rows at t (GST, the
// end of the run), if t is in the window; the label goes on the line's
// left when left is set, else on its right.
func (c *chart) vline(t int64, label, title, colour, dash string, left bool) {
	if !c.ax.contains(t) {
		return
	}
	x := c.ax.x(t)
	c.printf(`<g class="mark-line"><title>%s</title><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1.5" stroke-dasharray="%s"/>`,
		esc(title), x, c.top-4, x, c.bottom()+4, colour, dash)
	if label != "" {
		anchor, lx := "start", x+3
		if left {
			anchor, lx = "end", x-3
		}
		c.printf(`<text x="%.1f" y="%d" font-size="10" font-weight="bold" fill="%s" text-anchor="%s" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`, lx, c.bottom()-3, colour, anchor, esc(label))
	}
	c.printf(`</g>`)
}

// globalDefs are the definitions every SVG of the page uses: the hatching
// of a paused node, the nodes' patterns, the arrowheads of message types.
func globalDefs(m *reportModel) string {
	var b strings.Builder
	b.WriteString(`<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>`)
	b.WriteString(`<pattern id="paused" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#000" fill-opacity="0.35"/></pattern>`)
	b.WriteString(`<pattern id="waiting" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="4" height="4" fill="#fff"/><circle cx="2" cy="2" r="0.9" fill="#0072B2"/></pattern>`)
	b.WriteString(patternDefs(len(m.nodes)))
	marker := func(id, colour string) {
		fmt.Fprintf(&b, `<marker id="%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 1 L10 5 L0 9 z" fill="%s"/></marker>`, id, colour)
	}
	for i, c := range typeColours {
		marker("ah-"+itoa(i), c)
	}
	marker("ah-other", colOther)
	marker("ah-mono", colMono)
	b.WriteString(`</defs></svg>`)
	return b.String()
}

func esc(s string) string { return html.EscapeString(s) }

func itoa(i int) string { return strconv.Itoa(i) }

// short cuts s to n runes, with an ellipsis: node-supplied names and types
// can be any length.
func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// joinShort joins up to n names, then says how many more.
func joinShort(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ",")
	}
	return fmt.Sprintf("%s +%d", strings.Join(names[:n], ","), len(names)-n)
}

// dur formats a duration in nanoseconds for a person: 3ms, 1.2s, 850µs.
func dur(ns int64) string {
	f := float64(ns)
	switch {
	case f >= 1e9 || f <= -1e9:
		return trimFloat(f/1e9) + "s"
	case f >= 1e6 || f <= -1e6:
		return trimFloat(f/1e6) + "ms"
	case f >= 1e3 || f <= -1e3:
		return trimFloat(f/1e3) + "µs"
	}
	return strconv.FormatInt(ns, 10) + "ns"
}

// trimFloat formats f with up to three decimals, no trailing zeros.
func trimFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
