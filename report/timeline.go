package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
)

// The timeline: per node, a bar for each span of its life coloured by the
// leader it believed in (tall and outlined where it believed it was the
// leader, grey where it believed in none, white with a dashed outline and
// a ? where its belief was unknown, hatched while paused, absent while
// down; its hover text quotes what a real server's belief was read from), the nemesis's faults as shaded bands, and each false
// check's interval outlined. Spans narrower than a pixel are merged, so
// the picture stays small for long histories.

const (
	tlRow = 26 // a node's row
	tlBar = 16 // the height of a leader's bar
)

// timelineSVG draws the whole run's timeline.
func (m *reportModel) timelineSVG() string {
	c := newChart(newAxis(m.from, m.to, chLeft, chWidth), m.nodes, tlRow)
	c.top += 16 // room for pointers to magnified views
	c.open("timeline", "timeline-svg")
	c.faults(m.tl.Faults, m.h.Meta.Nodes, 0.28)
	c.violations(m, true)
	c.rowLabels(true)
	m.drawBeliefs(c)
	m.drawMarks(c)
	m.drawClocks(c)
	c.axisTicks()
	if m.tl.RunEnd < m.tl.End {
		c.vline(m.tl.RunEnd, "", fmt.Sprintf("the harness began stopping the nodes at %s: the end of the run the checks judge", secs(m.tl.RunEnd)), "#000", "2,2", false)
	}
	return c.close()
}

// drawBeliefs draws each node's spans in its row.
func (m *reportModel) drawBeliefs(c *chart) {
	for i, name := range m.nodes {
		mid := c.mid(i)
		for _, s := range mergeSpans(m.tl.Nodes[i].Spans, c.ax) {
			top, hgt, stroke := mid-tlBar/2+3, float64(tlBar-6), ""
			fill, text, textColour := colNoLeader, "", "#000"
			what := "believes in no leader"
			if s.Leader != "" {
				st, idx := m.styleOfNode(s.Leader)
				fill, text, textColour = st.fill(idx), s.Leader, st.textColour()
				what = "believes in " + s.Leader
			}
			if s.Leader == name {
				top, hgt, stroke = mid-tlBar/2, tlBar, ` stroke="#000" stroke-width="1.2"`
				what = "believes it is the leader"
			}
			if s.Unknown {
				fill, stroke, text = colUnknown, ` stroke="#777" stroke-width="0.8" stroke-dasharray="2,2"`, "?"
				what = "'s belief is unknown (a poll failed or timed out)"
			}
			if s.mixed {
				fill, stroke, text, what = colMixed, "", "", "changed its belief many times"
			}
			sep := " "
			if strings.HasPrefix(what, "'") {
				sep = ""
			}
			title := fmt.Sprintf("%s%s%s from %s to %s", name, sep, what, secs(s.From), secs(s.To))
			if s.Paused {
				title += " (paused)"
			}
			if !s.mixed {
				title += m.hoverReadings(s.Evidence)
			}
			w := math.Max(s.x1-s.x0, 1)
			c.printf(`<g class="span"><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s/>`,
				esc(title), s.x0, top, w, hgt, fill, stroke)
			if s.Paused {
				c.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#paused)"/>`, s.x0, top, w, hgt)
			}
			// The leader's name, where it fits: the cue that does not
			// depend on telling colours apart.
			if text != "" && w >= float64(7*len([]rune(text))+8) && (!s.Paused || s.Unknown) {
				c.printf(`<text x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="central" font-size="10" fill="%s">%s</text>`,
					s.x0+w/2, mid, textColour, esc(short(text, 16)))
			}
			c.printf(`</g>`)
		}
	}
}

// drawMarks draws each node's crashes, exits and restarts in its row, at
// most one per pixel column.
func (m *reportModel) drawMarks(c *chart) {
	for i, name := range m.nodes {
		mid := c.mid(i)
		cols := map[int]bool{}
		for _, mk := range m.tl.Nodes[i].Marks {
			if !c.ax.contains(mk.Time) {
				continue
			}
			x := c.ax.x(mk.Time)
			if cols[int(x)] {
				continue
			}
			title := fmt.Sprintf("%s: %s at %s", name, mk.What, secs(mk.Time))
			switch mk.What {
			case history.ProcCrash:
				cols[int(x)] = true
				c.printf(`<g class="mark mark-%s"><title>%s</title><path d="M%.1f %.1f l7 7 m0 -7 l-7 7" stroke="%s" stroke-width="2.2"/></g>`,
					mk.What, esc(title), x-3.5, mid-3.5, colViolation)
			case history.ProcExit, history.ProcPartExit:
				cols[int(x)] = true
				c.printf("%s", exitMark(x, mid, exitTitle(name, mk)))
			case history.ProcStart:
				if mk.Restart {
					cols[int(x)] = true
					title = fmt.Sprintf("%s: restarted under the same id at %s", name, secs(mk.Time))
					c.printf(`<g class="mark mark-restart"><title>%s</title><path d="M%.1f %.1f l8 5 l-8 5 z" fill="#007a3d" stroke="#fff" stroke-width="0.8"/></g>`, esc(title), x, mid-5)
				}
			}
		}
	}
}

// drawnSpan is a span as drawn: pixel extent, and mixed when several
// spans of different beliefs share its pixels.
type drawnSpan struct {
	checks.Span
	x0, x1 float64
	mixed  bool
}

// mergeSpans turns the spans of a node that meet the axis's window into
// at most one rectangle per pixel column, merging neighbours of the same
// belief. Spans that end before they begin (a history whose time runs
// backwards) are left out.
func mergeSpans(spans []checks.Span, ax axis) []drawnSpan {
	var out []drawnSpan
	for _, s := range spans {
		if s.To < s.From || !ax.overlaps(s.From, s.To) {
			continue
		}
		d := drawnSpan{Span: s, x0: ax.x(s.From), x1: ax.x(s.To)}
		if k := len(out); k > 0 {
			last := &out[k-1]
			touching := last.To == s.From
			same := last.Leader == s.Leader && last.Paused == s.Paused && last.Unknown == s.Unknown && !last.mixed
			if touching && (same || d.x1-last.x0 < 1) {
				if !same {
					last.mixed = last.Leader != s.Leader || last.Unknown != s.Unknown || last.mixed
					last.Paused = last.Paused || s.Paused
				}
				last.To, last.x1 = s.To, d.x1
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// legend lists the leaders' colours: each node drawn, with its style.
func (m *reportModel) legend() []legendItem {
	var out []legendItem
	for i, n := range m.nodes {
		out = append(out, legendItem{Name: n, CSS: styleOf(i).swatchCSS()})
	}
	return out
}

// legendItem is one entry of a legend: a swatch (a CSS background), or a
// line sample with its dash and marker.
type legendItem struct {
	Name, CSS    string
	Dash, Marker string
	Line         bool
}

// legendHTML renders a legend's items.
func legendHTML(items []legendItem) template.HTML {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(`<span class="item">`)
		if it.Line {
			fmt.Fprintf(&b, `<svg width="34" height="12" aria-hidden="true"><line x1="1" y1="6" x2="33" y2="6" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>%s</svg>`,
				esc(it.CSS), esc(it.Dash), markerAt(it.Marker, 17, 6, it.CSS, it.Name))
		} else {
			fmt.Fprintf(&b, `<i style="background: %s"></i>`, esc(it.CSS))
		}
		b.WriteString(esc(it.Name))
		b.WriteString(`</span>`)
	}
	return template.HTML(b.String())
}
