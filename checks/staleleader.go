package checks

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/coupharness/coup/history"
)

// staleness is how long one term claim overlapped claims by other live
// nodes in higher terms.
type staleness struct {
	c *termClaim
	// window is the total time the claim stood while another live node
	// claimed a higher term; from and to are the first and last instants
	// of it (to - from exceeds window when the stale time has gaps).
	window, from, to int64
	// first and last are the highest-term claims that stood at from and
	// just before to (the earliest begun among equals).
	first, last *termClaim
}

// staleWindows measures every term claim's stale time in one sweep over the
// claims' ends. Between two successive ends the open claims do not change;
// a claim in term t is stale there exactly when the highest open term is
// above t, since a node has at most one open claim, so the claim holding
// that term is another node's. Claims without a term, and claims of no
// length, take no part. The cost is the sort, plus the open claims (at
// most one per node) at each end.
func staleWindows(claims []*termClaim) []*staleness {
	type point struct {
		t    int64
		open bool
		s    *staleness
	}
	var out []*staleness
	var points []point
	for _, c := range claims {
		if c.term == nil || c.to <= c.from {
			continue
		}
		s := &staleness{c: c}
		out = append(out, s)
		points = append(points, point{c.from, true, s}, point{c.to, false, s})
	}
	slices.SortStableFunc(points, func(x, y point) int { return cmp.Compare(x.t, y.t) })
	var open []*staleness // in the order the claims began
	last := int64(0)
	for _, p := range points {
		if len(open) > 0 && p.t > last {
			top := open[0].c
			for _, s := range open[1:] {
				if *s.c.term > *top.term || (*s.c.term == *top.term && s.c.at < top.at) {
					top = s.c
				}
			}
			for _, s := range open {
				if *s.c.term >= *top.term {
					continue
				}
				if s.window == 0 {
					s.from, s.first = last, top
				}
				s.window += p.t - last
				s.to, s.last = p.t, top
			}
		}
		last = p.t
		if p.open {
			at := len(open)
			for at > 0 && open[at-1].c.at > p.s.c.at {
				at--
			}
			open = slices.Insert(open, at, p.s)
		} else {
			open = slices.DeleteFunc(open, func(s *staleness) bool { return s == p.s })
		}
	}
	return out
}

// staleLeader: for every claim in a term, how long it overlapped another
// live node's claim in a higher term (its stale-leader window). It reports
// the longest window; it is false only when the history's meta event gives
// a bound (StaleLeader) and a window exceeds it.
func staleLeader(h *history.History) Result {
	claims, termed := termClaimsOf(h)
	bound := h.Meta.StaleLeader
	r := Result{Figures: map[string]any{}}
	if bound > 0 {
		r.Figures["bound_ns"] = bound
	}
	termedClaims, untermed := claimFigures(&r, claims)
	if !termed {
		r.Valid = Unknown
		r.Explanation = noTerms(h)
		return r
	}
	var longest *staleness
	stale, over := 0, 0
	all := staleWindows(claims)
	for _, s := range all {
		if s.window == 0 {
			continue
		}
		stale++
		if bound > 0 && s.window > bound {
			over++
		}
		if longest == nil || s.window > longest.window {
			longest = s
		}
	}
	r.Figures["stale_claims"] = stale
	if bound > 0 {
		r.Figures["over_bound"] = over
	}
	unjudged := unjudgedText(untermed)
	boundText := "; no bound was given ([checks] stale_leader in the scenario)"
	if bound > 0 {
		boundText = fmt.Sprintf(", within the %s bound", fmtDur(bound))
	}
	if longest == nil {
		r.Valid = True
		r.Figures["longest_ns"] = int64(0)
		r.Explanation = fmt.Sprintf("no leader's claim overlapped another live node's claim in a higher term (%s)%s",
			plural(termedClaims, "claim"), unjudged)
		return r
	}
	r.Figures["longest_ns"] = longest.window
	v := explainStale(longest)
	r.Nodes, r.Interval, r.Evidence = v.Nodes, &v.Interval, v.Evidence
	r.Explanation = "the longest stale-leader window is " + v.Explanation
	if stale > 1 {
		r.Explanation += fmt.Sprintf("; %d of %s were stale at some time", stale, plural(termedClaims, "claim"))
	}
	switch {
	case bound > 0 && over > 0:
		r.Valid = False
		var windows []*staleness // those past the bound, in the order they began
		for _, s := range all {
			if s.window > bound {
				windows = append(windows, s)
			}
		}
		slices.SortStableFunc(windows, func(x, y *staleness) int { return cmp.Compare(x.from, y.from) })
		var list violationList
		for _, s := range windows {
			list.add(Interval{From: s.from, To: s.to})
		}
		list.finish(&r, func(i int) Violation { return explainStale(windows[i]) })
		r.Explanation = fmt.Sprintf("%s; this exceeds the %s bound ([checks] stale_leader in the scenario)", r.Explanation, fmtDur(bound))
		if over > 1 {
			r.Explanation += fmt.Sprintf(", as %d windows do in all", over)
		}
	default:
		r.Valid = True
		r.Explanation += boundText
	}
	r.Explanation += unjudged
	return r
}

// explainStale is one claim's stale-leader window as a violation: the
// claim, the higher claims that stood at its first and last instants, and
// the event that ended it as evidence; the sentence begins with the
// window's length ("40ms: n1 claimed …").
func explainStale(w *staleness) Violation {
	a, first, last := w.c, w.first, w.last
	v := Violation{Nodes: []string{a.node, first.node}, Interval: Interval{From: w.from, To: w.to}}
	v.Evidence = []history.Event{*a.begin, *first.begin}
	if last != first {
		v.Evidence = append(v.Evidence, *last.begin)
		if last.node != first.node {
			v.Nodes = append(v.Nodes, last.node)
		}
	}
	var ended string
	switch {
	case a.to == w.to && a.end != nil:
		ended = claimEnd(a)
		v.Evidence = append(v.Evidence, *a.end)
	case last.to == w.to && last.end != nil:
		ended = claimEnd(last)
		v.Evidence = append(v.Evidence, *last.end)
	}
	sortEvents(v.Evidence)
	v.Evidence = slices.CompactFunc(v.Evidence, func(x, y history.Event) bool { return x.Index == y.Index })

	span := fmtSpan(w.from, w.to, "")
	if w.window != w.to-w.from {
		span = fmt.Sprintf("for %s in all between %s and %s", fmtDur(w.window), fmtTime(w.from), fmtTime(w.to))
	}
	v.Explanation = fmt.Sprintf("%s: %s claimed leadership in term %d at %s%s and still claimed it %s while %s, live, claimed the higher term %d (claimed at %s)",
		fmtDur(w.window), a.node, *a.term, fmtTime(a.from), restartContext(&a.claim), span, first.node, *first.term, fmtTime(first.from))
	if last != first {
		v.Explanation += fmt.Sprintf(", and later %s term %d (claimed at %s)", last.node, *last.term, fmtTime(last.from))
	}
	if ended != "" {
		v.Explanation += "; the window ended when " + ended
	} else {
		v.Explanation += "; both claims still stood when the history ended"
	}
	return v
}
