package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
)

// Mutex lanes: for a run with lock clients, one lane per client, in the
// order c1, c2, ...: a thin dotted bar while it waits for an acquire (the
// request), a thick bar while it holds the lock by its own account (from
// the acquire's ok to its release), a thin bar while its release is on its
// way; a cross ends a request that failed, a question mark one that timed
// out. Below the clients, a lane marks the times two or more held the
// lock at once, and a lane per node the times it said it was in the
// critical section.

const (
	mlRow = 24
	mlBar = 14
)

// mutexView is the lanes, for the page.
type mutexView struct {
	SVG    template.HTML
	Hidden int // clients past maxLanes, not drawn
	Joint  int // times the lock was held by two or more
}

// mutexLanes draws the lanes over the whole run; nil for a run without
// lock operations.
func (m *reportModel) mutexLanes() *mutexView {
	if m.locks == nil {
		return nil
	}
	svg := m.lanesSVG(newAxis(m.from, m.to, chLeft, chWidth), "mutex-svg", false)
	hidden := max(0, len(m.locks.Lanes)-maxLanes)
	return &mutexView{SVG: template.HTML(svg), Hidden: hidden, Joint: len(m.locks.Joint)}
}

// lanesSVG draws the lanes over a window; with active, only the clients
// and nodes with something in it.
func (m *reportModel) lanesSVG(ax axis, id string, active bool) string {
	l := m.locks
	var lanes []checks.LockLane
	for _, ln := range l.Lanes {
		if len(lanes) == maxLanes {
			break
		}
		if active && !slices.ContainsFunc(ln.Steps, func(s checks.LockStep) bool { return ax.overlaps(s.From, s.To) }) {
			continue
		}
		lanes = append(lanes, ln)
	}
	var rows []string
	for _, ln := range lanes {
		rows = append(rows, ln.Process)
	}
	jointRow := len(rows)
	rows = append(rows, "held by 2+")
	csRow := map[string]int{}
	for _, s := range l.InCS {
		if active && !ax.overlaps(s.From, s.To) {
			continue
		}
		if _, ok := csRow[s.Node]; !ok && len(csRow) < maxRows {
			csRow[s.Node] = len(rows)
			rows = append(rows, s.Node+" in cs")
		}
	}
	c := newChart(ax, rows, mlRow)
	c.open("mutex", id)
	c.faults(m.tl.Faults, m.h.Meta.Nodes, 0.28)
	c.violations(m, false)
	c.rowLabels(true)
	for i, ln := range lanes {
		mid := c.mid(i)
		for _, s := range ln.Steps {
			if !ax.overlaps(s.From, s.To) || s.To < s.From {
				continue
			}
			x0, x1 := ax.x(s.From), ax.x(s.To)
			w := math.Max(x1-x0, 1.5)
			title := stepTitle(ln.Process, s)
			switch s.What {
			case checks.StepHold:
				st, idx := m.styleOfNode(s.Owner)
				fill := "#2e7d32"
				if idx >= 0 && s.Owner != ln.Process {
					fill = st.fill(idx)
				}
				c.printf(`<g class="lane hold"><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s" stroke="#000" stroke-width="0.8"/>`,
					esc(title), x0, mid-mlBar/2, w, mlBar, fill)
				label := "holds"
				if s.Token != nil {
					label = fmt.Sprintf("holds, token %d", *s.Token)
				}
				if w >= 6*float64(len(label)) {
					c.printf(`<text x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="central" font-size="10" fill="#fff">%s</text>`, x0+w/2, mid, esc(label))
				} else if w >= 36 {
					c.printf(`<text x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="central" font-size="10" fill="#fff">holds</text>`, x0+w/2, mid)
				}
				c.printf(`</g>`)
			case checks.StepRequest, checks.StepRelease:
				fill, h := "url(#waiting)", 6.0
				if s.What == checks.StepRelease {
					fill, h = "#7aa6c2", 4.0
				}
				c.printf(`<g class="lane %s"><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="#0072B2" stroke-width="0.6"/>`,
					s.What, esc(title), x0, mid-h/2, w, h, fill)
				switch {
				case !ax.contains(s.To): // it ends outside the window
				case s.Outcome == history.OpFail:
					c.printf(`<path d="M%.1f %.1f l6 6 m0 -6 l-6 6" stroke="%s" stroke-width="1.8"/>`, x1-3, mid-3, colViolation)
				case s.Outcome == history.OpInfo || s.Outcome == "":
					c.printf(`<text x="%.1f" y="%.1f" font-size="11" font-weight="bold" fill="%s" dominant-baseline="central">?</text>`, x1+1, mid, colViolation)
				}
				c.printf(`</g>`)
			}
		}
	}
	// A client's process that the nemesis paused: hatching over its lane.
	for i, ln := range lanes {
		for _, f := range m.tl.Faults {
			if f.What != "pause" || !slices.Contains(f.Nodes, ln.Process) || f.To < f.From || !ax.overlaps(f.From, f.To) {
				continue
			}
			x0, x1 := ax.x(f.From), ax.x(f.To)
			c.printf(`<g class="lane paused"><title>%s's process paused from %s to %s (%s)</title><rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="url(#paused)" stroke="#555" stroke-width="0.5"/></g>`,
				esc(ln.Process), secs(f.From), secs(f.To), dur(f.To-f.From), x0, c.mid(i)-mlBar/2-2, math.Max(x1-x0, 1), mlBar+4)
		}
	}
	for _, j := range l.Joint {
		if !ax.overlaps(j.From, j.To) {
			continue
		}
		x0, x1 := ax.x(j.From), ax.x(j.To)
		c.printf(`<g class="lane joint"><title>%s held the lock together from %s to %s (%s)</title><rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s" stroke="#000" stroke-width="0.8"/></g>`,
			esc(andList(j.Owners, 6)), secs(j.From), secs(j.To), dur(j.To-j.From), x0, c.mid(jointRow)-mlBar/2, math.Max(x1-x0, 3), mlBar, colViolation)
	}
	for _, s := range l.InCS {
		r, ok := csRow[s.Node]
		if !ok || !ax.overlaps(s.From, s.To) {
			continue
		}
		st, idx := m.styleOfNode(s.Node)
		x0, x1 := ax.x(s.From), ax.x(s.To)
		c.printf(`<g class="lane cs"><title>%s said it was in the critical section from %s to %s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"/></g>`,
			esc(s.Node), secs(s.From), secs(s.To), x0, c.mid(r)-mlBar/2+2, math.Max(x1-x0, 1.5), mlBar-4, st.fill(idx))
	}
	m.drawMutexMarks(c, csRow)
	c.axisTicks()
	return c.close()
}

// drawMutexMarks marks crashes and restarts in the nodes' cs lanes.
func (m *reportModel) drawMutexMarks(c *chart, csRow map[string]int) {
	for i, name := range m.nodes {
		r, ok := csRow[name]
		if !ok {
			continue
		}
		for _, mk := range m.tl.Nodes[i].Marks {
			if !c.ax.contains(mk.Time) {
				continue
			}
			x, y := c.ax.x(mk.Time), c.mid(r)
			switch {
			case mk.What == history.ProcExit || mk.What == history.ProcPartExit:
				c.printf("%s", exitMark(x, y, exitTitle(name, mk)))
			case mk.What == history.ProcCrash:
				c.printf(`<g class="mark"><title>%s: %s at %s</title><path d="M%.1f %.1f l7 7 m0 -7 l-7 7" stroke="%s" stroke-width="2.2"/></g>`,
					esc(name), mk.What, secs(mk.Time), x-3.5, y-3.5, colViolation)
			case mk.What == history.ProcStart && mk.Restart:
				c.printf(`<g class="mark"><title>%s: restarted under the same id at %s</title><path d="M%.1f %.1f l8 5 l-8 5 z" fill="#007a3d"/></g>`,
					esc(name), secs(mk.Time), x, y-5)
			}
		}
	}
}

// stepTitle says what a client was doing, for hovering.
func stepTitle(process string, s checks.LockStep) string {
	switch s.What {
	case checks.StepHold:
		until := "the end of the history"
		if s.Outcome != "" {
			until = "it asked to release"
		}
		token := ""
		if s.Token != nil {
			token = fmt.Sprintf(", with fencing token %d", *s.Token)
		}
		return fmt.Sprintf("%s held the lock (for %s%s) from %s, when its acquire returned ok, to %s, when %s", process, s.Owner, token, secs(s.From), secs(s.To), until)
	}
	answer := map[string]string{
		history.OpOK:   "ok",
		history.OpFail: "failed",
		history.OpInfo: "timed out (it may or may not have taken effect)",
		"":             "no answer before the history ended",
	}[s.Outcome]
	if answer == "" {
		answer = s.Outcome
	}
	return fmt.Sprintf("%s asked %s to %s (for %s) at %s: %s at %s (%s)", process, s.Node, verbOf(s.What), s.Owner, secs(s.From), answer, secs(s.To), dur(s.To-s.From))
}

func verbOf(what string) string {
	if what == checks.StepRequest {
		return "acquire"
	}
	return "release"
}

// andList joins up to n names as a sentence does: "c1, c2 and c3", then
// says how many more.
func andList(names []string, n int) string {
	switch {
	case len(names) > n:
		return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
	case len(names) < 2:
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
