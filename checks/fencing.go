package checks

import (
	"fmt"
	"sort"

	"github.com/coupharness/coup/history"
)

// tokenGrant is an acquire that returned ok with a fencing token: its
// invocation and its completion.
type tokenGrant struct {
	invoke, done *history.Event
	token        int64
}

// fencing: for any two lock grants of which one was known to its client
// (its acquire returned ok) before the other's acquire was invoked, the
// later carries the higher token; no two grants carry the same one. Grants
// whose acquires overlap in time may have been granted in either order,
// and are only required to differ. So a resource that refuses a token
// lower than the highest it has seen refuses every stale holder: if two
// clients ever hold the lock at once (a lease that expired under a paused
// holder), the one granted later writes with the higher token, and the
// other's writes are refused. Grants without a token are counted, not
// judged.
//
// The sweep: grants by invocation; those known before each invocation
// (ok earlier) are taken in order of their ok, and the highest token
// among them is the bound the next must exceed. Equal tokens are found
// by a map. O(n log n).
func fencing(h *history.History) Result {
	r := Result{Figures: map[string]any{}}
	grants, untokened := grantsOf(h)
	r.Figures["grants"] = len(grants)
	r.Figures["grants_without_token"] = untokened
	if len(grants) == 0 {
		r.Valid = Unknown
		r.Explanation = "no lock grant carries a fencing token, so there is nothing to judge"
		if untokened > 0 {
			r.Explanation += fmt.Sprintf(" (%s without one)", plural(untokened, "grant"))
		}
		return r
	}
	type pair struct {
		first, later *tokenGrant
		what         string
	}
	var pairs []pair // same tokens first, then lower ones, each in the order found
	seen := map[int64]*tokenGrant{}
	for _, g := range grants {
		if o, ok := seen[g.token]; ok {
			pairs = append(pairs, pair{o, g, "the same token"})
			continue
		}
		seen[g.token] = g
	}
	byInvoke := append([]*tokenGrant(nil), grants...)
	sort.SliceStable(byInvoke, func(i, j int) bool { return byInvoke[i].invoke.Index < byInvoke[j].invoke.Index })
	byDone := append([]*tokenGrant(nil), grants...)
	sort.SliceStable(byDone, func(i, j int) bool { return byDone[i].done.Index < byDone[j].done.Index })
	var best *tokenGrant // the highest token among the grants known so far
	k := 0
	for _, g := range byInvoke {
		for ; k < len(byDone) && byDone[k].done.Index < g.invoke.Index; k++ {
			if best == nil || byDone[k].token > best.token {
				best = byDone[k]
			}
		}
		if best != nil && g.token < best.token {
			pairs = append(pairs, pair{best, g, "a lower token"})
		}
	}
	if len(pairs) == 0 {
		r.Valid = True
		r.Explanation = fmt.Sprintf("every grant that began after another was known carries a higher fencing token, and no two share one (%s, tokens %d to %d)%s",
			plural(len(grants), "grant"), minToken(grants), maxToken(grants), untokenedText(untokened))
		return r
	}
	var list violationList
	for _, p := range pairs {
		list.add(grantSpan(p.first, p.later))
	}
	list.finish(&r, func(i int) Violation { return fencingViolation(pairs[i].first, pairs[i].later, pairs[i].what) })
	first := r.Violations[0]
	r.Valid = False
	r.Nodes, r.Interval, r.Evidence, r.Explanation = first.Nodes, &first.Interval, first.Evidence, first.Explanation
	if n := len(pairs); n > 1 {
		r.Explanation += fmt.Sprintf("; %d pairs of grants are out of order in all", n)
	}
	return r
}

// grantSpan is the interval of a fencing violation: from the earlier of
// the two grants' oks to the later.
func grantSpan(a, b *tokenGrant) Interval {
	return Interval{From: min(a.done.Time, b.done.Time), To: max(a.done.Time, b.done.Time)}
}

// fencingViolation is two grants whose tokens are out of order: later's
// acquire was invoked once first's grant was known and carries the same
// token or a lower one.
func fencingViolation(first, later *tokenGrant, what string) Violation {
	v := Violation{Nodes: []string{first.invoke.Process, later.invoke.Process}, Interval: grantSpan(first, later)}
	v.Explanation = fmt.Sprintf("%s's grant, invoked at %s after %s's grant (token %d) was known at %s, carries %s: %d; a resource that refuses lower tokens would refuse the later holder, and one that accepts them would let a stale holder in",
		later.invoke.Process, fmtTime(later.invoke.Time), first.invoke.Process, first.token, fmtTime(first.done.Time), what, later.token)
	if what == "the same token" {
		v.Explanation = fmt.Sprintf("%s's grant (ok at %s) and %s's grant (ok at %s) carry the same fencing token %d: a resource cannot tell their writes apart",
			first.invoke.Process, fmtTime(first.done.Time), later.invoke.Process, fmtTime(later.done.Time), later.token)
	}
	v.Evidence = []history.Event{*first.invoke, *first.done, *later.invoke, *later.done}
	sort.Slice(v.Evidence, func(i, j int) bool { return v.Evidence[i].Index < v.Evidence[j].Index })
	return v
}

// grantsOf pairs each acquire's ok carrying a token with its invocation
// (a process is sequential); it counts the oks without a token.
func grantsOf(h *history.History) ([]*tokenGrant, int) {
	var out []*tokenGrant
	untokened := 0
	open := map[string]*history.Event{}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.KindOp || e.F != fAcquire {
			continue
		}
		switch e.Type {
		case history.OpInvoke:
			open[e.Process] = e
		case history.OpOK:
			inv := open[e.Process]
			delete(open, e.Process)
			switch {
			case inv == nil:
			case e.Token == nil:
				untokened++
			default:
				out = append(out, &tokenGrant{invoke: inv, done: e, token: *e.Token})
			}
		default:
			delete(open, e.Process)
		}
	}
	return out, untokened
}

func minToken(gs []*tokenGrant) int64 {
	m := gs[0].token
	for _, g := range gs {
		m = min(m, g.token)
	}
	return m
}

func maxToken(gs []*tokenGrant) int64 {
	m := gs[0].token
	for _, g := range gs {
		m = max(m, g.token)
	}
	return m
}

func untokenedText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %s without a token could not be judged", plural(n, "grant"))
}
