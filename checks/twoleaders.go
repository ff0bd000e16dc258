package checks

import (
	"container/heap"
	"fmt"
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

// overlaps returns the first overlap (the one that begins earliest) and the
// number of overlapping pairs of claims. Claims that touch (one ends when
// the other begins) do not overlap. claims must be in the order they began.
// It sweeps once, keeping the claims still open in a heap ordered by end;
// since a node has at most one open claim, the heap holds at most one claim
// per node.
func overlaps(claims []*claim) (first *overlap, count int) {
	var open byEnd
	for _, b := range claims {
		for len(open) > 0 && open[0].to <= b.from {
			heap.Pop(&open)
		}
		if b.to <= b.from {
			continue // an instant: it overlaps nothing
		}
		count += len(open)
		if first == nil && len(open) > 0 {
			// Exactly one claim is open here: two open claims would both
			// contain the instant just after b.from, so they would overlap
			// each other, and that overlap would have been found first.
			first = &overlap{a: open[0], b: b}
		}
		heap.Push(&open, b)
	}
	return first, count
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
// leader.
func twoLeaders(h *history.History) Result {
	claims, ignored := claimsOf(h)
	first, count := overlaps(claims)
	r := Result{Figures: map[string]any{"claims": len(claims), "overlaps": count}}
	if ignored > 0 {
		r.Figures["ignored_reports"] = ignored
	}
	if first == nil {
		r.Valid = True
		r.Explanation = fmt.Sprintf("no two live nodes believed they were the leader at once (%s of leadership)", plural(len(claims), "claim"))
		return r
	}
	a, b := first.a, first.b
	from, to := first.from(), first.to()
	r.Valid = False
	r.Nodes = []string{a.node, b.node}
	r.Interval = &Interval{From: from, To: to}
	r.Evidence = []history.Event{*a.begin, *b.begin}
	ender := a
	if b.to < a.to {
		ender = b
	}
	until := fmtTime(to)
	if ender.end != nil {
		r.Evidence = append(r.Evidence, *ender.end)
	}
	sortEvents(r.Evidence)

	r.Explanation = fmt.Sprintf("%s and %s both believed they were the leader %s: ",
		a.node, b.node, fmtSpan(from, to, until))
	if a.from == b.from {
		r.Explanation += fmt.Sprintf("%s%s and %s%s both claimed leadership at %s",
			a.node, claimContext(h, a, from, to), b.node, claimContext(h, b, from, to), fmtTime(b.from))
	} else {
		r.Explanation += fmt.Sprintf("%s claimed leadership at %s%s, and %s claimed it at %s%s while %s's claim still stood",
			a.node, fmtTime(a.from), claimContext(h, a, from, to), b.node, fmtTime(b.from), claimContext(h, b, from, to), a.node)
	}
	r.Explanation += overlapEnd(ender)
	if ta, tb := termAt(h, a, from), termAt(h, b, from); ta != nil || tb != nil {
		r.Explanation += termsText(a.node, b.node, ta, tb)
		for _, e := range []*history.Event{ta, tb} {
			if e != nil && e != a.begin && e != b.begin {
				r.Evidence = append(r.Evidence, *e)
			}
		}
		sortEvents(r.Evidence)
	}
	if count > 1 {
		r.Explanation += fmt.Sprintf("; %d pairs of claims overlap in all", count)
	}
	return r
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

// termAt returns the leader report that set the term of c's claim in force
// at t (its last leader report at or before t, from the one that began the
// claim on), or nil if that report gives no term. c must stand at t.
func termAt(h *history.History, c *claim, t int64) *history.Event {
	var last *history.Event
	for i := c.at; i < len(h.Events) && h.Events[i].Time <= t; i++ {
		e := &h.Events[i]
		if e.Kind == history.KindReport && e.What == history.ReportLeader && e.Node == c.node {
			last = e
		}
	}
	if last == nil || last.Term == nil {
		return nil
	}
	return last
}

// termsText says which terms two overlapping claims were in, and so
// whether the overlap is a stale leader or two leaders in one term.
func termsText(a, b string, ea, eb *history.Event) string {
	switch {
	case ea == nil:
		return fmt.Sprintf("; %s claimed term %d and %s gave no term", b, *eb.Term, a)
	case eb == nil:
		return fmt.Sprintf("; %s claimed term %d and %s gave no term", a, *ea.Term, b)
	case *ea.Term == *eb.Term:
		return fmt.Sprintf("; both claimed term %d: two leaders in one term, which one-leader-per-term forbids", *ea.Term)
	}
	old, nw, to, tn := a, b, *ea.Term, *eb.Term
	if to > tn {
		old, nw, to, tn = b, a, tn, to
	}
	return fmt.Sprintf("; %s claimed term %d and %s the higher term %d: %s was a stale leader, which one-leader-per-term allows and stale-leader measures", old, to, nw, tn, old)
}
