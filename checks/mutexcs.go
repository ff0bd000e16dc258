package checks

import (
	"fmt"

	"github.com/coupharness/coup/history"
)

// The values of a cs report.
const (
	csEnter = "enter"
	csExit  = "exit"
)

// csClaims returns every span during which a live node said it was in the
// critical section, in the order they began, and the number of cs reports
// ignored because their node was not live. A span lasts from the node's
// enter report until its exit report, or until it stops being live (crash,
// exit, stop, or a new start), or until the end of the history. A paused
// node stays inside. A second enter while inside changes nothing.
func csClaims(h *history.History) ([]*claim, int) {
	var claims []*claim
	live := map[string]bool{}
	paused := map[string]*history.Event{}
	open := map[string]*claim{}
	ignored := 0
	closeAt := func(node string, e *history.Event) {
		if c := open[node]; c != nil {
			c.to, c.end = e.Time, e
			delete(open, node)
		}
	}
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindProcess && e.Node != "":
			switch e.What {
			case history.ProcStart:
				closeAt(e.Node, e)
				live[e.Node] = true
				delete(paused, e.Node)
			case history.ProcCrash, history.ProcExit, history.ProcStop:
				closeAt(e.Node, e)
				live[e.Node] = false
				delete(paused, e.Node)
			case history.ProcPause:
				if live[e.Node] && paused[e.Node] == nil {
					paused[e.Node] = e
				}
			case history.ProcResume:
				delete(paused, e.Node)
			}
		case e.Kind == history.KindReport && e.What == history.ReportCS && e.Node != "":
			if !live[e.Node] {
				ignored++
				continue
			}
			switch e.Value {
			case csEnter:
				if open[e.Node] == nil {
					c := &claim{node: e.Node, from: e.Time, at: i, begin: e, paused: paused[e.Node]}
					open[e.Node] = c
					claims = append(claims, c)
				}
			case csExit:
				closeAt(e.Node, e)
			}
		}
	}
	for _, c := range open {
		c.to = h.End()
	}
	return claims, ignored
}

// csWithoutStarts returns the first cs report of a history that has no
// process start at all, or nil.
func csWithoutStarts(h *history.History) *history.Event {
	var first *history.Event
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindProcess && e.What == history.ProcStart:
			return nil
		case first == nil && e.Kind == history.KindReport && e.What == history.ReportCS:
			first = e
		}
	}
	return first
}

// mutexCS: at no instant are two live nodes in the critical section, by
// their own reports.
func mutexCS(h *history.History) Result {
	if e := csWithoutStarts(h); e != nil {
		return Result{
			Valid: Unknown,
			Explanation: fmt.Sprintf("%s reported entering the critical section at %s but the history has no process start event, so no node is known to be live; record process events",
				e.Node, fmtTime(e.Time)),
			Evidence: []history.Event{*e},
		}
	}
	claims, ignored := csClaims(h)
	all := overlaps(claims)
	r := Result{Figures: map[string]any{"entries": len(claims), "overlaps": len(all)}}
	if ignored > 0 {
		r.Figures["ignored_reports"] = ignored
	}
	if len(all) == 0 {
		r.Valid = True
		r.Explanation = fmt.Sprintf("no two live nodes were in the critical section at once (%s)", entries(len(claims)))
		return r
	}
	var list violationList
	for _, o := range all {
		list.add(Interval{From: o.from(), To: o.to()})
	}
	list.finish(&r, func(i int) Violation { return explainCS(h, all[i]) })
	first := r.Violations[0]
	r.Valid = False
	r.Nodes, r.Interval, r.Evidence, r.Explanation = first.Nodes, &first.Interval, first.Evidence, first.Explanation
	if n := len(all); n > 1 {
		r.Explanation += fmt.Sprintf("; %d pairs of entries overlap in all, for %s", n, fmtDur(r.ViolationTime))
	}
	return r
}

// explainCS is one overlap of two nodes' stays in the critical section as
// a violation: both enter reports and the event that ended the overlap as
// evidence, and how it came about.
func explainCS(h *history.History, o overlap) Violation {
	a, b := o.a, o.b
	from, to := o.from(), o.to()
	v := Violation{Nodes: []string{a.node, b.node}, Interval: Interval{From: from, To: to}}
	v.Evidence = []history.Event{*a.begin, *b.begin}
	ender := a
	if b.to < a.to {
		ender = b
	}
	until := fmtTime(to)
	if ender.end != nil {
		v.Evidence = append(v.Evidence, *ender.end)
	} else {
		until = "the end of the history at " + until
	}
	sortEvents(v.Evidence)
	state := "still live"
	if p, end := pausedDuring(h, a, from, to); p != nil {
		state = "still live (" + pauseText(p, end) + ")"
	}
	v.Explanation = fmt.Sprintf("%s and %s were both in the critical section %s: ",
		a.node, b.node, fmtSpan(from, to, until))
	if a.from == b.from {
		v.Explanation += fmt.Sprintf("both entered at %s", fmtTime(b.from))
	} else {
		v.Explanation += fmt.Sprintf("%s entered at %s while %s, %s, had been inside since %s",
			b.node, fmtTime(b.from), a.node, state, fmtTime(a.from))
	}
	return v
}

// entries returns "1 entry", "2 entries".
func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
