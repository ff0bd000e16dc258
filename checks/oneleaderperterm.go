package checks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coupharness/coup/history"
)

// oneLeaderPerTerm: no two distinct nodes ever claim leadership in the same
// term, over the whole history, whether or not their claims overlap and
// whether or not the first claimant is still live. A node that claims the
// same term again (after stepping down, or after a restart under the same
// id) is still one claimant. Claims without a term are counted, not judged.
func oneLeaderPerTerm(h *history.History) Result {
	claims, termed := termClaimsOf(h)
	r := Result{Figures: map[string]any{}}
	termedClaims, untermed := claimFigures(&r, claims)
	if !termed {
		r.Valid = Unknown
		r.Explanation = noTerms(h)
		return r
	}
	// holder is, for each term claimed by one node so far, that node's
	// latest claim of it; contested marks the terms claimed by two or more.
	holder := map[int64]*termClaim{}
	contested := map[int64]bool{}
	type pair struct{ a, b *termClaim }
	var pairs []pair // the first two claimants of each contested term, in the order found
	for _, c := range claims {
		if c.term == nil {
			continue
		}
		t := *c.term
		h, ok := holder[t]
		switch {
		case !ok || h.node == c.node:
			if !contested[t] {
				holder[t] = c
			}
		case !contested[t]:
			contested[t] = true
			pairs = append(pairs, pair{h, c})
		}
	}
	r.Figures["terms"] = len(holder)
	r.Figures["contested_terms"] = len(contested)
	unjudged := unjudgedText(untermed)
	if len(pairs) == 0 {
		r.Valid = True
		named := ""
		if len(holder) > 0 {
			named = ": " + termHolders(holder)
		}
		r.Explanation = fmt.Sprintf("no two nodes claimed leadership in the same term (%s in %s%s)%s",
			plural(termedClaims, "claim"), plural(len(holder), "term"), named, unjudged)
		return r
	}
	var list violationList
	for _, p := range pairs {
		list.add(Interval{From: p.a.from, To: p.b.from})
	}
	list.finish(&r, func(i int) Violation { return explainTermPair(pairs[i].a, pairs[i].b) })
	first := r.Violations[0]
	r.Valid = False
	r.Nodes, r.Interval, r.Evidence, r.Explanation = first.Nodes, &first.Interval, first.Evidence, first.Explanation
	if n := len(contested); n > 1 {
		r.Explanation += fmt.Sprintf("; %d terms had more than one claimant in all", n)
	}
	r.Explanation += unjudged
	return r
}

// explainTermPair is a term's first two claimants as a violation: a
// claimed it first, b then. Its interval runs from a's claim to b's.
func explainTermPair(a, b *termClaim) Violation {
	v := Violation{Nodes: []string{a.node, b.node}, Interval: Interval{From: a.from, To: b.from}}
	v.Evidence = []history.Event{*a.begin, *b.begin}
	standing := fmt.Sprintf("while %s's claim still stood", a.node)
	if a.to <= b.from {
		standing = fmt.Sprintf("after %s's claim had ended", a.node)
		if a.end != nil {
			standing += " when " + claimEnd(a)
			v.Evidence = append(v.Evidence, *a.end)
		}
	}
	sortEvents(v.Evidence)
	v.Explanation = fmt.Sprintf("%s and %s both claimed leadership in term %d: %s claimed it at %s%s, and %s claimed it at %s%s, %s",
		a.node, b.node, *a.term, a.node, fmtTime(a.from), restartContext(&a.claim), b.node, fmtTime(b.from), restartContext(&b.claim), standing)
	return v
}

// restartContext says, in parentheses, that a claimant had been restarted
// under the same id: a fresh process that may have lost what its term was.
func restartContext(c *claim) string {
	if c.restart == nil || c.start == nil {
		return ""
	}
	return fmt.Sprintf(" (restarted under the same id at %s after it %s at %s)",
		fmtTime(c.start.Time), downWord(c.restart), fmtTime(c.restart.Time))
}

// maxNamedTerms bounds the terms an explanation names.
const maxNamedTerms = 8

// termHolders names each term and its leader, in term order: "term 2 n1,
// term 3 n2", the first few and how many more.
func termHolders(holder map[int64]*termClaim) string {
	terms := make([]int64, 0, len(holder))
	for t := range holder {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	var parts []string
	for i, t := range terms {
		if i == maxNamedTerms {
			parts = append(parts, fmt.Sprintf("and %d more", len(terms)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("term %d %s", t, holder[t].node))
	}
	return strings.Join(parts, ", ")
}
