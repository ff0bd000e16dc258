package checks

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strings"

	"github.com/coupharness/coup/history"
)

// claim is one span during which a live node believed it was the leader.
type claim struct {
	node     string
	from, to int64
	at       int            // position in the history of the report that began it
	begin    *history.Event // the report that began it
	end      *history.Event // the event that ended it; nil if the history ended first
	paused   *history.Event // the pause in force when it began, if any
	start    *history.Event // the start of the incarnation that claimed
	restart  *history.Event // the end of the previous incarnation, if it was a restart
}

// claimsOf returns every claim in h, in the order they began, and the
// number of leader reports ignored because their node was not live.
func claimsOf(h *history.History) ([]*claim, int) {
	w := newWorld(&h.Meta)
	var claims []*claim
	open := map[string]*claim{}
	for i := range h.Events {
		e := &h.Events[i]
		if !affects(e) {
			continue
		}
		n := w.node(e.Node)
		was := n.claims()
		w.apply(e)
		switch now := n.claims(); {
		case !was && now:
			c := &claim{node: n.name, from: e.Time, at: i, begin: e, paused: n.pause, start: n.start, restart: n.restart}
			open[n.name] = c
			claims = append(claims, c)
		case was && !now:
			c := open[n.name]
			c.to, c.end = e.Time, e
			delete(open, n.name)
		}
	}
	for _, c := range open {
		c.to = h.End()
	}
	return claims, w.ignored
}

// overlap is two claims that overlap for a positive length of time; a began
// no later than b.
type overlap struct {
	a, b *claim
}

func (o overlap) from() int64 { return o.b.from }
func (o overlap) to() int64   { return min(o.a.to, o.b.to) }

// overlaps returns every overlap, in the order their later claims began,
// and among those with the same later claim in the order the earlier ones
// began: the first is the one that begins earliest, paired with the
// earliest claim it overlaps. Claims that touch (one ends when the other
// begins) do not overlap. claims must be in the order they began. It
// sweeps once, keeping the claims still open in a heap ordered by end;
// since a node has at most one open claim, the heap holds at most one
// claim per node.
func overlaps(claims []*claim) []overlap {
	var open byEnd
	var out []overlap
	for _, b := range claims {
		for len(open) > 0 && open[0].to <= b.from {
			heap.Pop(&open)
		}
		if b.to <= b.from {
			continue // an instant: it overlaps nothing
		}
		if len(open) > 0 {
			// Every claim still open contains the instant just after
			// b.from, so each overlaps b.
			from := len(out)
			for _, a := range open {
				out = append(out, overlap{a: a, b: b})
			}
			slices.SortFunc(out[from:], func(x, y overlap) int { return cmp.Compare(x.a.at, y.a.at) })
		}
		heap.Push(&open, b)
	}
	return out
}

// byEnd is a min-heap of claims by end time.
type byEnd []*claim

func (q byEnd) Len() int           { return len(q) }
func (q byEnd) Less(i, j int) bool { return q[i].to < q[j].to }
func (q byEnd) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *byEnd) Push(x any)        { *q = append(*q, x.(*claim)) }
func (q *byEnd) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// twoLeaders: at no instant do two live nodes each believe they are the
// leader. Every overlap is a violation; the result's own fields are the
// first's.
func twoLeaders(h *history.History) Result {
	claims, ignored := claimsOf(h)
	all := overlaps(claims)
	r := Result{Figures: map[string]any{"claims": len(claims), "overlaps": len(all)}}
	if ignored > 0 {
		r.Figures["ignored_reports"] = ignored
	}
	cut := ClaimsCutShort(h)
	if cut > 0 {
		r.Figures["claims_cut_short"] = cut
	}
	if len(all) == 0 {
		r.Valid = True
		r.Explanation = fmt.Sprintf("no two live nodes believed they were the leader at once (%s of leadership", plural(len(claims), "claim"))
		if cut > 0 {
			r.Explanation += fmt.Sprintf(", %d of them cut short where a poll had no answer and the node's belief was unknown", cut)
		}
		r.Explanation += ")"
		return r
	}
	var list violationList
	for _, o := range all {
		list.add(Interval{From: o.from(), To: o.to()})
	}
	list.finish(&r, func(i int) Violation { return explainOverlap(h, all[i]) })
	first := r.Violations[0]
	r.Valid = False
	r.Nodes, r.Interval, r.Evidence, r.Explanation = first.Nodes, &first.Interval, first.Evidence, first.Explanation
	if n := len(all); n > 1 {
		r.Explanation += fmt.Sprintf("; %d pairs of claims overlap in all, for %s", n, fmtDur(r.ViolationTime))
	}
	return r
}

// explainOverlap is one overlap of two claims as a violation: both claims'
// reports and the event that ended the overlap as evidence, with the
// terms the claims were in, and a sentence saying how it came about.
func explainOverlap(h *history.History, o overlap) Violation {
	a, b := o.a, o.b
	from, to := o.from(), o.to()
	v := Violation{Nodes: []string{a.node, b.node}, Interval: Interval{From: from, To: to}}
	v.Evidence = []history.Event{*a.begin, *b.begin}
	ender := a
	if b.to < a.to {
		ender = b
	}
	if ender.end != nil {
		v.Evidence = append(v.Evidence, *ender.end)
	}
	v.Explanation = fmt.Sprintf("%s and %s both believed they were the leader %s: ",
		a.node, b.node, fmtSpan(from, to, ""))
	if a.from == b.from {
		v.Explanation += fmt.Sprintf("%s%s and %s%s both claimed leadership at %s",
			a.node, claimContext(h, a, from, to), b.node, claimContext(h, b, from, to), fmtTime(b.from))
	} else {
		v.Explanation += fmt.Sprintf("%s claimed leadership at %s%s, and %s claimed it at %s%s while %s's claim still stood",
			a.node, fmtTime(a.from), claimContext(h, a, from, to), b.node, fmtTime(b.from), claimContext(h, b, from, to), a.node)
	}
	v.Explanation += overlapEnd(ender)
	ta, tb := claimTerm(h, a, from, to), claimTerm(h, b, from, to)
	if ta.report != nil || tb.report != nil {
		v.Explanation += termsText(a.node, b.node, ta, tb)
		for _, t := range []claimedTerm{ta, tb} {
			if t.report != nil && t.report != a.begin && t.report != b.begin {
				v.Evidence = append(v.Evidence, *t.report)
			}
		}
	}
	sortEvents(v.Evidence)
	v.Evidence = slices.CompactFunc(v.Evidence, func(x, y history.Event) bool { return x.Index == y.Index })
	return v
}

// claimContext says, in parentheses, what a reader needs to see why a node
// claimed or kept claiming: that it was restarted under the same id (a
// replaced node has lost its old belief and may claim again), and that it
// was paused during the overlap (a paused node keeps its belief while the
// world moves on). It returns "" when neither holds.
func claimContext(h *history.History, c *claim, from, to int64) string {
	var parts []string
	if c.restart != nil && c.start != nil {
		parts = append(parts, fmt.Sprintf("restarted under the same id at %s after it %s at %s",
			fmtTime(c.start.Time), downWord(c.restart), fmtTime(c.restart.Time)))
	}
	if p, end := pausedDuring(h, c, from, to); p != nil {
		parts = append(parts, pauseText(p, end)+", it kept that belief: a paused node is still live")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// overlapEnd says how an overlap ended: with the event that ended the
// claim that ended first.
func overlapEnd(ender *claim) string {
	if ender.end == nil {
		return "; both claims still stood when the history ended"
	}
	return "; the overlap ended when " + endedBy(ender.node, ender.end)
}

// pauseText says when a pause began and ended: "paused from 0.300s to
// 0.600s".
func pauseText(p, end *history.Event) string {
	switch {
	case end == nil:
		return "paused at " + fmtTime(p.Time)
	case end.What == history.ProcResume:
		return fmt.Sprintf("paused from %s to %s", fmtTime(p.Time), fmtTime(end.Time))
	case end.What == history.ProcStart:
		return fmt.Sprintf("paused at %s until it was started again at %s", fmtTime(p.Time), fmtTime(end.Time))
	}
	return fmt.Sprintf("paused at %s until it %s at %s", fmtTime(p.Time), downWord(end), fmtTime(end.Time))
}

// pausedDuring returns the pause of c's node that was in force at some
// instant of (from, to), and the event that ended it (its resume, or the
// node going down; nil if the history ends first), or nil if the node ran
// throughout.
func pausedDuring(h *history.History, c *claim, from, to int64) (pause, end *history.Event) {
	p := c.paused
	for i := c.at + 1; i < len(h.Events); i++ {
		e := &h.Events[i]
		if p == nil && e.Time >= to {
			break // not paused at any instant of the interval
		}
		if e.Kind != history.KindProcess || e.Node != c.node {
			continue
		}
		switch e.What {
		case history.ProcPause:
			if p == nil {
				p = e
			}
		case history.ProcResume, history.ProcStart, history.ProcCrash, history.ProcExit, history.ProcStop:
			if p != nil && e.Time > from {
				return p, e // it ran again, or went down, within the interval or after it
			}
			p = nil
		}
	}
	return p, nil
}

// claimedTerm is the term a claim was in during an overlap, as the
// claim's own leader reports give it: report is the report that set it
// (nil when the claim gave no term up to the overlap's end), and late is
// true when the claim gave no term at the overlap's start and report is
// the first one after it that did, and after true when that came only
// once the overlap had ended.
type claimedTerm struct {
	report      *history.Event
	late, after bool
}

// claimTerm returns the term of c's claim during (from, to): that of its
// last leader report at or before from (from the one that began the claim
// on), or, when that report gives no term, that of the first report of
// the claim after from that gives one (within the overlap or after it).
// So a claim whose term came only after the overlap began is named with
// that term, as the term checks, which cut claims by term, name it too.
// c must stand at from.
func claimTerm(h *history.History, c *claim, from, to int64) claimedTerm {
	var last *history.Event
	i := c.at
	for ; i < len(h.Events) && h.Events[i].Time <= from; i++ {
		if e := &h.Events[i]; isLeaderReport(e, c.node) {
			last = e
		}
	}
	if last != nil && last.Term != nil {
		return claimedTerm{report: last}
	}
	for ; i < len(h.Events); i++ {
		if e := &h.Events[i]; e == c.end {
			break
		} else if isLeaderReport(e, c.node) && e.Term != nil {
			return claimedTerm{report: e, late: true, after: e.Time >= to}
		}
	}
	return claimedTerm{}
}

// isLeaderReport reports whether e is a leader report of node.
func isLeaderReport(e *history.Event, node string) bool {
	return e.Kind == history.KindReport && e.What == history.ReportLeader && e.Node == node
}

// text names a claimed term for a sentence: "claimed term 3", "gave no
// term until 1.250s, then term 3", "gave no term".
func (t claimedTerm) text() string {
	switch {
	case t.report == nil:
		return "gave no term"
	case t.after:
		return fmt.Sprintf("gave no term until %s, after the overlap, then term %d", fmtTime(t.report.Time), *t.report.Term)
	case t.late:
		return fmt.Sprintf("gave no term until %s, then term %d", fmtTime(t.report.Time), *t.report.Term)
	}
	return fmt.Sprintf("claimed term %d", *t.report.Term)
}

// termsText says which terms two overlapping claims were in, and so
// whether the overlap is a stale leader or two leaders in one term.
func termsText(a, b string, ta, tb claimedTerm) string {
	if ta.report == nil || tb.report == nil {
		if ta.report == nil {
			a, b, ta, tb = b, a, tb, ta
		}
		return fmt.Sprintf("; %s %s and %s %s", a, ta.text(), b, tb.text())
	}
	ea, eb := ta.report, tb.report
	if *ea.Term == *eb.Term {
		if ta.late || tb.late {
			return fmt.Sprintf("; %s %s and %s %s: two leaders in one term, which one-leader-per-term forbids", a, ta.text(), b, tb.text())
		}
		return fmt.Sprintf("; both claimed term %d: two leaders in one term, which one-leader-per-term forbids", *ea.Term)
	}
	old, nw, to, tn := a, b, ta, tb
	if *ea.Term > *eb.Term {
		old, nw, to, tn = b, a, tb, ta
	}
	if !to.late && !tn.late {
		return fmt.Sprintf("; %s claimed term %d and %s the higher term %d: %s was a stale leader, which one-leader-per-term allows and stale-leader measures", old, *to.report.Term, nw, *tn.report.Term, old)
	}
	return fmt.Sprintf("; %s %s and %s %s, a higher one: %s was a stale leader, which one-leader-per-term allows and stale-leader measures", old, to.text(), nw, tn.text(), old)
}
