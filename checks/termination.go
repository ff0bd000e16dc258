package checks

import (
	"fmt"
	"time"

	"github.com/coupharness/coup/history"
)

// defaultTermination is the termination bound used when the meta event
// gives none.
const defaultTermination = int64(time.Second)

// reference finds the time from which termination is measured: the latest of
// the first event, the last nemesis event (any phase) and the last elect
// invocation. It returns that time and what it was, for explanations.
func reference(h *history.History) (int64, string) {
	if len(h.Events) == 0 {
		return 0, "the start of the history"
	}
	t, what := h.Events[0].Time, "the first event"
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindNemesis:
			t, what = e.Time, "the last nemesis event"
			if e.What != "" {
				what += fmt.Sprintf(" (%s %s)", e.What, e.Phase)
			}
		case e.Kind == history.KindOp && e.Type == history.OpInvoke && e.F == "elect":
			t, what = e.Time, "the last elect request"
		}
	}
	return t, what
}

// termination: every node live at the deadline (the reference time plus the
// bound) believes in some leader at the deadline.
func termination(h *history.History) Result {
	ref, refWhat := reference(h)
	bound := h.Meta.Termination
	if bound <= 0 {
		bound = defaultTermination
	}
	d := addTime(ref, bound)
	end := h.End()
	r := Result{Figures: map[string]any{"reference_ns": ref, "deadline_ns": d, "bound_ns": bound}}
	if end < d {
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("the history ends at %s, before the termination deadline %s (%s after %s at %s); run the scenario longer after its last fault",
			fmtTime(end), fmtTime(d), fmtDur(bound), refWhat, fmtTime(ref))
		if !h.Ended {
			r.Explanation += " or find why it was killed"
		}
		return r
	}
	w := worldAt(h, d)
	live := w.live()
	var without []string
	for _, name := range live {
		n := w.nodes[name]
		if n.leader != "" {
			continue
		}
		without = append(without, name)
		if n.report != nil {
			r.Evidence = append(r.Evidence, *n.report)
		} else {
			r.Evidence = append(r.Evidence, *n.start)
		}
	}
	r.Figures["live"] = len(live)
	r.Figures["without_leader"] = len(without)
	since := fmt.Sprintf("%s (%s after %s at %s)", fmtTime(d), fmtDur(bound), refWhat, fmtTime(ref))
	switch {
	case len(live) == 0:
		r.Valid = True
		r.Explanation = fmt.Sprintf("no node was live at %s, so none lacked a leader", since)
		return r
	case len(without) == 0:
		r.Valid = True
		r.Explanation = fmt.Sprintf("every node live at %s believed in a leader (%s)", since, plural(len(live), "node"))
		return r
	}
	sortEvents(r.Evidence)
	r.Valid = False
	r.Nodes = without
	r.Interval = &Interval{From: ref, To: d}
	r.Explanation = fmt.Sprintf("%s, live at %s, believed in no leader: the election did not finish within the %s bound (checks.termination in the scenario)",
		joinNames(without), since, fmtDur(bound))
	return r
}
