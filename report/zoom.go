package report

import (
	"fmt"
	"html/template"
	"math"

	"github.com/coupharness/coup/internal/console"
)

// Magnified views: a violation whose interval is shorter than
// shortFraction of the run is a hairline on the run's axis (a 3 ms overlap
// of two leaders on a 1.2 s run), so the report draws it again on an axis
// of its own, a few times the interval wide: what every node believed,
// the messages in that window, and the interval outlined.

const shortFraction = 0.05

// isShort reports whether a violation needs a magnified view.
func (m *reportModel) isShort(v violation) bool {
	run := float64(m.to) - float64(m.from)
	return float64(v.to)-float64(v.from) < shortFraction*run
}

// zoomView is one magnified violation, for the page.
type zoomView struct {
	ID, Check, Caption string
	SVG                template.HTML
	// Lanes are the lock's lanes in the same window, for a mutex run.
	Lanes    template.HTML
	From, To int64
}

// zoomViews draws every short violation magnified.
func (m *reportModel) zoomViews() []zoomView {
	var out []zoomView
	for _, v := range m.violations {
		if !v.zoom {
			continue
		}
		run := float64(m.to) - float64(m.from)
		pad := max(2*(v.to-v.from), floatTime(run/400), 1000)
		from, to := padWindow(v.from, v.to, pad, m.from, m.to)
		ax := newAxis(from, to, chLeft, chWidth)
		svg, n := m.zoomSVG(ax, v)
		frac := (float64(v.to) - float64(v.from)) / run
		caption := fmt.Sprintf("%s%s: the interval from %s to %s (%s, %s of the run) magnified %s×, with %s in this window of %s to %s.",
			v.check, v.ordinal(), secs(v.from), secs(v.to), dur(v.to-v.from), fraction(frac), magnification(run, ax.span()),
			console.Plural(n, "copy of a message", "copies of messages"), secs(from), secs(to))
		z := zoomView{ID: v.id, Check: v.check, Caption: caption, SVG: template.HTML(svg), From: v.from, To: v.to}
		if m.locks != nil {
			z.Lanes = template.HTML(m.lanesSVG(ax, "zoom-lanes-"+v.id, true))
		}
		out = append(out, z)
	}
	return out
}

// zoomSVG draws the beliefs and the messages of the window, with the
// violation's interval outlined and labelled.
func (m *reportModel) zoomSVG(ax axis, v violation) (string, int) {
	rows, rowOf := m.stRows()
	c := newChart(ax, rows, tlRow+6)
	c.top += 12
	c.open("zoom", "zoom-svg-"+v.id)
	c.faults(m.tl.Faults, m.h.Meta.Nodes, 0.28)
	c.violations(m, false)
	c.rowLabels(true)
	// The beliefs faded, the messages in black over them, so that
	// neither hides the other.
	c.printf(`<g class="beliefs" opacity="0.6">`)
	m.drawBeliefs(c)
	c.printf(`</g>`)
	fl := m.inWindow(ax)
	if len(fl) <= detailCap {
		m.drawFlights(c, fl, rowOf, 1.2, true)
	} else {
		m.drawCells(c, fl, rowOf, true)
	}
	m.drawRejections(c)
	m.drawMarks(c)
	// The interval's bracket and its length, above the rows.
	x0, x1 := ax.x(v.from), ax.x(v.to)
	y := float64(c.top - 14)
	c.printf(`<g class="interval"><path d="M%.1f %.1f v-5 H%.1f v5" fill="none" stroke="%s" stroke-width="1.5"/><text x="%.1f" y="%.1f" text-anchor="middle" font-size="11" font-weight="bold" fill="%s">%s: %s</text></g>`,
		x0, y+4, math.Max(x1, x0+1), colViolation, (x0+x1)/2, y-4, colViolation, esc(v.check), dur(v.to-v.from))
	c.axisTicks()
	return c.close(), len(fl)
}

// fraction says how small a part of the run is: "1/400".
func fraction(f float64) string {
	if f <= 0 {
		return "an instant"
	}
	return fmt.Sprintf("1/%s", trimFloat(math.Round(1/f)))
}

// magnification is how much wider the window draws than on the run's axis.
func magnification(run, window float64) string {
	if window <= 0 {
		return "∞"
	}
	return trimFloat(math.Round(run / window))
}
