package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/console"
)

// The space-time (Lamport) diagram: one horizontal line per node (solid
// while it is up, hatched while paused, dotted while down, with its
// crashes and restarts), an arrow per delivered copy of a message from its
// send to its delivery labelled by its type, a dashed stub ending in a
// cross for a dropped copy (where the drop happened: mid-way for the
// network, near the receiver when it was down), a ringed end for a
// corrupted copy its receiver rejected and a diamond for one it did not,
// the nemesis's faults shaded and the violations outlined. A window with
// more than detailCap copies is drawn as cells instead: per node and slice
// of time, how many messages it sent (darker is more) and how many to it
// were dropped.

const stAggCells = 3000 // cells of an aggregated window, all rows together

// flightTimes are the send and end times of a flight; a flight whose send
// the history lacks, or whose time runs backwards, has no length.
func (m *reportModel) flightTimes(f *checks.Flight) (int64, int64) {
	return min(f.Sent, f.At), f.At
}

// stRows returns the diagram's rows, and the row of a node: the nodes
// drawn, then a row "other" when some message comes from or goes to a
// node that is not drawn.
func (m *reportModel) stRows() ([]string, func(string) int) {
	rows := append([]string(nil), m.nodes...)
	other := -1
	for _, f := range m.fl.List {
		_, okS := m.index[m.fl.Name(f.Src)]
		_, okD := m.index[m.fl.Name(f.Dest)]
		if !okS || !okD {
			other = len(rows)
			rows = append(rows, "other")
			break
		}
	}
	return rows, func(n string) int {
		if i, ok := m.index[n]; ok {
			return i
		}
		return other
	}
}

// stRowHeight fits many nodes into a readable height.
func stRowHeight(rows int) int { return max(14, min(34, 420/max(rows, 1))) }

// inWindow returns the flights that meet the axis's window.
func (m *reportModel) inWindow(ax axis) []*checks.Flight {
	var out []*checks.Flight
	for i := range m.fl.List {
		f := &m.fl.List[i]
		if s, e := m.flightTimes(f); ax.overlaps(s, e) {
			out = append(out, f)
		}
	}
	return out
}

// spacetimeSVG draws the diagram of one window; it returns the SVG, the
// copies in the window and whether they were drawn one by one.
func (m *reportModel) spacetimeSVG(ax axis, id string) (string, int, bool) {
	rows, rowOf := m.stRows()
	c := newChart(ax, rows, stRowHeight(len(rows)))
	fl := m.inWindow(ax)
	detailed := len(fl) <= detailCap
	class := "spacetime"
	if !detailed {
		class += " aggregated"
	}
	c.open(class, id)
	c.faults(m.tl.Faults, m.h.Meta.Nodes, 0.28)
	c.violations(m, false)
	c.rowLabels(false)
	m.drawLifelines(c)
	m.drawRequests(c)
	if detailed {
		m.drawFlights(c, fl, rowOf, 1.3, false)
	} else {
		m.drawCells(c, fl, rowOf, false)
	}
	m.drawRejections(c)
	m.drawMarks(c)
	if g := m.h.Meta.GST; g > 0 {
		c.vline(g, "GST", fmt.Sprintf("global stabilisation time (GST) at %s: from here every message arrives within Δ", secs(g)), "#000", "6,3", true)
	}
	c.axisTicks()
	return c.close(), len(fl), detailed
}

// drawLifelines draws each node's line: dotted across the window, solid
// while up, hatched while paused.
func (m *reportModel) drawLifelines(c *chart) {
	for i := range c.rows {
		y := c.mid(i)
		c.printf(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#bbb" stroke-dasharray="1,3"/>`, chLeft, y, c.ax.right(), y)
		if i >= len(m.nodes) {
			continue
		}
		for _, s := range mergeSpans(m.tl.Nodes[i].Spans, c.ax) {
			w := math.Max(s.x1-s.x0, 1)
			if s.Paused {
				c.printf(`<g class="paused"><title>%s paused from %s to %s</title><rect x="%.1f" y="%.1f" width="%.1f" height="8" fill="url(#paused)" stroke="#555" stroke-width="0.5"/></g>`,
					esc(m.nodes[i]), secs(s.From), secs(s.To), s.x0, y-4, w)
				continue
			}
			c.printf(`<line class="life" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444" stroke-width="1.6"/>`, s.x0, y, s.x0+w, y)
		}
	}
}

// drawRequests marks where clients asked a node for something other than
// the lock (an election, say), as a small triangle over its line; the
// lock's requests have lanes of their own.
func (m *reportModel) drawRequests(c *chart) {
	drawn := 0
	for _, i := range m.requests() {
		e := &m.h.Events[i]
		if !c.ax.contains(e.Time) {
			continue
		}
		if drawn++; drawn > detailCap {
			return
		}
		r := m.index[e.Node]
		x, y := c.ax.x(e.Time), c.mid(r)
		c.printf(`<g class="request"><title>%s asked %s to %s at %s</title><path d="M%.1f %.1f l-4 -7 h8 z" fill="#000"/><text x="%.1f" y="%.1f" font-size="9" text-anchor="end">%s</text></g>`,
			esc(e.Process), esc(e.Node), esc(e.F), secs(e.Time), x, y-2, x-5, y-5, esc(short(e.F, 10)))
	}
}

// requests are the positions of the invocations drawRequests marks: by
// clients, of anything but the lock, at a node drawn.
func (m *reportModel) requests() []int {
	var out []int
	for i := range m.h.Events {
		e := &m.h.Events[i]
		if e.Kind != history.KindOp || e.Type != history.OpInvoke || e.F == "acquire" || e.F == "release" {
			continue
		}
		if _, ok := m.index[e.Node]; ok {
			out = append(out, i)
		}
	}
	return out
}

// labelGrid keeps labels from overlapping: a label takes the cells of a
// coarse grid its box covers, and is left out when one is taken.
type labelGrid map[[2]int]bool

func (g labelGrid) place(x, y, w, h float64) bool {
	const cw, chh = 12.0, 10.0
	x0, x1 := int(math.Floor((x-w/2)/cw)), int(math.Floor((x+w/2)/cw))
	y0, y1 := int(math.Floor((y-h/2)/chh)), int(math.Floor((y+h/2)/chh))
	for i := x0; i <= x1; i++ {
		for j := y0; j <= y1; j++ {
			if g[[2]int{i, j}] {
				return false
			}
		}
	}
	for i := x0; i <= x1; i++ {
		for j := y0; j <= y1; j++ {
			g[[2]int{i, j}] = true
		}
	}
	return true
}

// dropDepth is how far towards its receiver a dropped copy is drawn:
// near it when the receiver was down or its queue full, mid-way when the
// network lost it.
func dropDepth(reason string) float64 {
	switch reason {
	case "down", "overflow", "write-failed":
		return 0.85
	}
	return 0.5
}

// drawFlights draws each flight as an arrow from its send to its end,
// in its type's colour, or in black over coloured bars (mono).
func (m *reportModel) drawFlights(c *chart, fl []*checks.Flight, rowOf func(string) int, width float64, mono bool) {
	labels := labelGrid{}
	for _, f := range fl {
		src, dest, mtype := m.fl.Name(f.Src), m.fl.Name(f.Dest), m.fl.Name(f.Type)
		r0, r1 := rowOf(src), rowOf(dest)
		if r0 < 0 || r1 < 0 {
			continue
		}
		sendT, endT := m.flightTimes(f)
		x0, x1 := c.ax.xRaw(sendT), c.ax.xRaw(endT)
		y0, y1 := c.mid(r0), c.mid(r1)
		if f.Dropped {
			y1 = y0 + (y1-y0)*dropDepth(m.fl.Name(f.Reason))
		}
		cx0, cy0, cx1, cy1, ok := clipSegment(x0, y0, x1, y1, c.ax.left, c.ax.right())
		if !ok {
			continue
		}
		colour, marker := m.typeColour(mtype), m.typeMarker(mtype)
		if mono {
			colour, marker = colMono, "ah-mono"
		}
		class, dash, markerEnd := "msg", "", ` marker-end="url(#`+marker+`)"`
		if f.Dropped {
			class, dash, markerEnd = "msg dropped", ` stroke-dasharray="4,3"`, ""
		}
		if f.Duplicate {
			class += " duplicate"
			if !f.Dropped {
				dash = ` stroke-dasharray="1.5,2"`
			}
		}
		if cx1 != x1 { // the end is outside the window
			markerEnd = ""
		}
		c.printf(`<g class="%s"><title>%s</title>`, class, esc(m.flightTitle(f)))
		if r0 == r1 && !f.Dropped {
			// A message to itself: a small loop above the line.
			c.printf(`<path d="M%.1f %.1f Q%.1f %.1f %.1f %.1f" fill="none" stroke="%s" stroke-width="%.1f"%s%s/>`,
				cx0, cy0, (cx0+cx1)/2, cy0-float64(c.rowH)/2, math.Max(cx1, cx0+4), cy1, colour, width, dash, markerEnd)
		} else {
			c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s%s/>`, cx0, cy0, cx1, cy1, colour, width, dash, markerEnd)
		}
		if cx1 == x1 {
			switch {
			case f.Dropped:
				c.printf(`<path class="drop" d="M%.1f %.1f l7 7 m0 -7 l-7 7" stroke="%s" stroke-width="2"/>`, cx1-3.5, cy1-3.5, colViolation)
			case f.Corrupted && f.Rejected:
				c.printf(`<circle class="rejected" cx="%.1f" cy="%.1f" r="4.5" fill="#fff" stroke="%s" stroke-width="1.6"/><path d="M%.1f %.1f l6 -6" stroke="%s" stroke-width="1.4"/>`,
					cx1, cy1, colViolation, cx1-3, cy1+3, colViolation)
			case f.Corrupted:
				c.printf(`<path class="accepted" d="M%.1f %.1f l5 5 l-5 5 l-5 -5 z" fill="%s" stroke="#000" stroke-width="0.8"/>`, cx1, cy1-5, colViolation)
			}
		}
		// The type's name at the middle of the visible part, where it
		// does not cover another.
		name := short(mtype, 14)
		lx, ly := (cx0+cx1)/2, (cy0+cy1)/2-3
		long := math.Hypot(cx1-cx0, cy1-cy0) >= 24
		w := float64(len([]rune(name)))*5.6 + 4
		lx = math.Max(c.ax.left+w/2, math.Min(lx, c.ax.right()-w/2)) // not over the row names
		if name != "" && long && labels.place(lx, ly, w, 10) {
			c.printf(`<text class="mtype" x="%.1f" y="%.1f" text-anchor="middle" font-size="9" fill="%s" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`, lx, ly, colour, esc(name))
		}
		c.printf(`</g>`)
	}
}

// flightTitle says what became of a copy, for hovering.
func (m *reportModel) flightTitle(f *checks.Flight) string {
	dest := m.fl.Name(f.Dest)
	sendT, endT := m.flightTimes(f)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s→%s, message %d", m.fl.Name(f.Type), m.fl.Name(f.Src), dest, f.Msg)
	if f.Duplicate {
		b.WriteString(" (a duplicate copy)")
	}
	if f.HasSend {
		fmt.Fprintf(&b, ": sent %s", secs(sendT))
	} else {
		b.WriteString(": its send is not in the history")
	}
	if f.Dropped {
		fmt.Fprintf(&b, ", dropped %s", secs(endT))
		if r := m.fl.Name(f.Reason); r != "" {
			fmt.Fprintf(&b, " (%s)", dropReason(r))
		}
	} else {
		fmt.Fprintf(&b, ", delivered %s", secs(endT))
		if f.HasSend {
			fmt.Fprintf(&b, " after %s", dur(endT-sendT))
		}
	}
	if f.Corrupted {
		fmt.Fprintf(&b, "; corrupted by the nemesis")
		if how := m.fl.Name(f.How); how != "" {
			fmt.Fprintf(&b, " (%s)", how)
		}
		if f.Rejected {
			fmt.Fprintf(&b, " and rejected by %s at %s", dest, secs(f.RejectedAt))
			if why := m.fl.Name(f.Rejection); why != "" {
				fmt.Fprintf(&b, " (%s)", why)
			}
		} else {
			fmt.Fprintf(&b, "; %s did not report rejecting it", dest)
		}
	}
	return b.String()
}

// dropReason says why the router dropped a copy.
func dropReason(r string) string {
	switch r {
	case "down":
		return "down: the receiver was not running"
	case "loss":
		return "loss: the nemesis lost it"
	case "partition":
		return "partition: the link was cut"
	case "overflow":
		return "overflow: the receiver's queue was full"
	}
	return r
}

// clipSegment clips the segment (x0,y0)-(x1,y1) to left <= x <= right.
func clipSegment(x0, y0, x1, y1, left, right float64) (float64, float64, float64, float64, bool) {
	if math.Max(x0, x1) < left || math.Min(x0, x1) > right {
		return 0, 0, 0, 0, false
	}
	at := func(x float64) float64 { return y0 + (y1-y0)*(x-x0)/(x1-x0) }
	cx0, cy0 := x0, y0
	if x0 < left || x0 > right {
		cx0 = math.Max(left, math.Min(x0, right))
		cy0 = at(cx0)
	}
	cx1, cy1 := x1, y1
	if x1 < left || x1 > right {
		cx1 = math.Max(left, math.Min(x1, right))
		cy1 = at(cx1)
	}
	return cx0, cy0, cx1, cy1, true
}

// cell counts the copies of one node in one slice of time.
type cell struct {
	sent, dropped int
	types         map[string]int
	reasons       map[string]int
}

// drawCells draws, per row and slice of the window, how many copies the
// node sent (a cell above its line, darker for more) and how many copies
// to it were dropped (a cross below, with the count); corrupted copies are
// still drawn one by one, up to detailCap.
func (m *reportModel) drawCells(c *chart, fl []*checks.Flight, rowOf func(string) int, mono bool) {
	n := max(20, min(120, stAggCells/max(len(c.rows), 1)))
	slice := func(t int64) int {
		return max(0, min(n-1, int((float64(t)-float64(c.ax.from))/c.ax.span()*float64(n))))
	}
	cells := map[[2]int]*cell{}
	get := func(r, s int) *cell {
		k := [2]int{r, s}
		if cells[k] == nil {
			cells[k] = &cell{types: map[string]int{}, reasons: map[string]int{}}
		}
		return cells[k]
	}
	var corrupt []*checks.Flight
	for _, f := range fl {
		sendT, endT := m.flightTimes(f)
		if r := rowOf(m.fl.Name(f.Src)); r >= 0 && c.ax.contains(sendT) {
			ce := get(r, slice(sendT))
			ce.sent++
			ce.types[m.fl.Name(f.Type)]++
		}
		if r := rowOf(m.fl.Name(f.Dest)); r >= 0 && f.Dropped && c.ax.contains(endT) {
			ce := get(r, slice(endT))
			ce.dropped++
			ce.reasons[m.fl.Name(f.Reason)]++
		}
		if f.Corrupted && len(corrupt) < detailCap {
			corrupt = append(corrupt, f)
		}
	}
	most := 1
	for _, ce := range cells {
		most = max(most, ce.sent)
	}
	keys := make([][2]int, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	step := c.ax.span() / float64(n)
	h := float64(c.rowH) * 0.36
	for _, k := range keys {
		ce := cells[k]
		from := floatTime(float64(c.ax.from) + float64(k[1])*step)
		to := floatTime(float64(c.ax.from) + float64(k[1]+1)*step)
		x0, x1 := c.ax.x(from), c.ax.x(to)
		y := c.mid(k[0])
		if ce.sent > 0 {
			op := 0.12 + 0.83*math.Sqrt(float64(ce.sent)/float64(most))
			c.printf(`<rect class="cell" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#222" fill-opacity="%.2f"><title>%s sent %d between %s and %s: %s</title></rect>`,
				x0+0.5, y-h-1, math.Max(x1-x0-1, 0.5), h, op, esc(c.rows[k[0]]), ce.sent, secs(from), secs(to), esc(countText(ce.types)))
		}
		if ce.dropped > 0 {
			xm := (x0 + x1) / 2
			c.printf(`<g class="drops"><title>%d to %s dropped between %s and %s: %s</title><path d="M%.1f %.1f l6 6 m0 -6 l-6 6" stroke="%s" stroke-width="1.8"/>`,
				ce.dropped, esc(c.rows[k[0]]), secs(from), secs(to), esc(countText(ce.reasons)), xm-3, y+2, colViolation)
			if x1-x0 >= 14 {
				c.printf(`<text x="%.1f" y="%.1f" font-size="8" text-anchor="middle" fill="%s">%d</text>`, xm, y+float64(c.rowH)/2-1, colViolation, ce.dropped)
			}
			c.printf(`</g>`)
		}
	}
	m.drawFlights(c, corrupt, rowOf, 1, mono)
}

// countText lists counts by name, largest first: "alive 12, probe 3".
func countText(counts map[string]int) string {
	names := make([]string, 0, len(counts))
	for k := range counts {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if counts[names[i]] != counts[names[j]] {
			return counts[names[i]] > counts[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for i, k := range names {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("%d more kinds", len(names)-i))
			break
		}
		name := k
		if name == "" {
			name = "unnamed"
		}
		parts = append(parts, fmt.Sprintf("%s %d", short(name, 20), counts[k]))
	}
	return strings.Join(parts, ", ")
}

// drawRejections marks the rejections that match no corrupted copy on
// their node's line.
func (m *reportModel) drawRejections(c *chart) {
	drawn := 0
	for _, e := range m.fl.Rejections {
		r, ok := m.index[e.Node]
		if !ok || !c.ax.contains(e.Time) || drawn >= detailCap {
			continue
		}
		drawn++
		x, y := c.ax.x(e.Time), c.mid(r)
		c.printf(`<g class="rejection"><title>%s rejected a message at %s (%s) that the history does not show corrupted</title><circle cx="%.1f" cy="%.1f" r="4" fill="#fff" stroke="%s" stroke-width="1.4"/><path d="M%.1f %.1f l5 -5" stroke="%s" stroke-width="1.2"/></g>`,
			esc(e.Node), secs(e.Time), esc(e.Value), x, y, colViolation, x-2.5, y+2.5, colViolation)
	}
}

// stWindow is one preset window of the diagram.
type stWindow struct {
	Label    string
	Note     string
	SVG      template.HTML
	Default  bool // the window shown first
	from, to int64
}

// maxWindows bounds the preset windows.
const maxWindows = 16

// spacetimeWindows returns the diagram's preset windows: the whole run;
// the span of the messages when they keep to a small part of it (shown
// first: a lone election is a sliver of its run); around each violation,
// GST and the first few faults; and, when the whole run has too many
// copies to draw one by one, its eighths.
func (m *reportModel) spacetimeWindows() []stWindow {
	span := float64(m.to) - float64(m.from)
	type win struct {
		label    string
		from, to int64
	}
	wins := []win{{"whole run", m.from, m.to}}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range m.fl.List {
		s, e := m.flightTimes(&m.fl.List[i])
		first, last = min(first, s), max(last, e)
	}
	for _, i := range m.requests() {
		first, last = min(first, m.h.Events[i].Time), max(last, m.h.Events[i].Time)
	}
	busy := false
	if last >= first && float64(last)-float64(first) < 0.6*span {
		from, to := padWindow(first, last, max(floatTime((float64(last)-float64(first))/12), floatTime(span/200)), m.from, m.to)
		wins = append(wins, win{"the messages", from, to})
		busy = true
	}
	for _, v := range m.violations {
		if v.nth > 1 {
			continue // a window around each check's first violation, as the check's own fields say
		}
		pad := max(2*(v.to-v.from), floatTime(span/50))
		from, to := padWindow(v.from, v.to, pad, m.from, m.to)
		wins = append(wins, win{"around " + v.check, from, to})
	}
	if g := m.h.Meta.GST; g > m.from && g < m.to {
		from, to := padWindow(g, g, floatTime(span/10), m.from, m.to)
		wins = append(wins, win{"around GST", from, to})
	}
	kinds := 0
	for _, f := range m.tl.Faults {
		if kinds == 4 || f.From <= m.from {
			continue
		}
		kinds++
		from := clampTime(addTime(f.From, -floatTime(span/40)), m.from, m.to)
		to := clampTime(addTime(f.From, floatTime(span/10)), m.from, m.to)
		wins = append(wins, win{"around " + f.What + " " + faultTargets(f.Nodes, m.h.Meta.Nodes), from, to})
	}
	if len(m.inWindow(newAxis(m.from, m.to, chLeft, chWidth))) > detailCap {
		for k := range 8 {
			from := floatTime(float64(m.from) + span*float64(k)/8)
			to := floatTime(float64(m.from) + span*float64(k+1)/8)
			wins = append(wins, win{fmt.Sprintf("%s–%s", secs(from), secs(to)), from, to})
		}
	}
	var out []stWindow
	for i, w := range wins {
		if len(out) == maxWindows || slices.ContainsFunc(out, func(o stWindow) bool { return sameWindow(o.from, o.to, w.from, w.to) }) {
			continue
		}
		svg, n, detailed := m.spacetimeSVG(newAxis(w.from, w.to, chLeft, chWidth), fmt.Sprintf("st-%d", i))
		note := fmt.Sprintf("%s to %s: %s, each drawn as an arrow.", secs(w.from), secs(w.to), console.Plural(n, "copy of a message", "copies of messages"))
		if !detailed {
			note = fmt.Sprintf("%s to %s: %s, too many to draw one by one, so each cell counts the messages a node sent in that slice of time (darker: more) and each red cross the messages to it that were dropped; hover for the kinds. Pick a narrower window to see the arrows.",
				secs(w.from), secs(w.to), console.Plural(n, "copy of a message", "copies of messages"))
		}
		out = append(out, stWindow{Label: w.label, Note: note, SVG: template.HTML(svg), from: w.from, to: w.to,
			Default: busy && i == 1 || !busy && i == 0})
	}
	return out
}

// sameWindow reports whether two windows show much the same: their
// common part is at least 70% of the longer.
func sameWindow(a0, a1, b0, b1 int64) bool {
	common := float64(min(a1, b1)) - float64(max(a0, b0))
	longer := math.Max(float64(a1)-float64(a0), float64(b1)-float64(b0))
	return longer <= 0 || common >= 0.7*longer
}

// messagesNote says why there is no diagram, or "".
func (m *reportModel) messagesNote() string {
	switch {
	case m.fl.Recorded:
		return ""
	case m.res.Stats.Messages.Sent > 0:
		return fmt.Sprintf("The history does not record messages one by one (the scenario has messages = false under [history]), so there is no diagram of them: %d were sent, %d delivered and %d dropped. Run the scenario with messages recorded to see them.",
			m.res.Stats.Messages.Sent, m.res.Stats.Messages.Delivered, m.res.Stats.Messages.Dropped)
	case m.h.Meta.Servers:
		return "The servers' messages are bytes on connections, never recorded one by one, and this history records no link counts either (no link event: it was written before coup recorded them), so there is no view of the links."
	}
	return "No message between nodes is recorded in the history."
}

// typeLegend lists the message types with their colours, most sent first.
func (m *reportModel) typeLegend() []legendItem {
	var out []legendItem
	for i, t := range m.types {
		if i == len(typeColours) {
			out = append(out, legendItem{Name: fmt.Sprintf("%d other kinds", len(m.types)-i), CSS: colOther})
			break
		}
		out = append(out, legendItem{Name: short(t, 20), CSS: typeColours[i]})
	}
	return out
}
