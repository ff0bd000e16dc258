package checks

import (
	"fmt"
	"math"
	"sort"

	"github.com/coupharness/coup/history"
)

// grant is an acquire that returned ok: the positions of its invocation
// and of its ok in the history.
type grant struct {
	op           *lockOp
	invoke, done int
}

// grants returns the acquires that returned ok, in invocation order.
func grants(h *history.History) []grant {
	var out []grant
	for _, o := range lockOps(h) {
		if o.f == fAcquire && o.outcome(h) == history.OpOK {
			out = append(out, grant{op: o, invoke: o.invoke, done: o.done})
		}
	}
	return out
}

// fairness counts, among grants in invocation order, the overtakes (pairs
// where the later request was granted first), the contended pairs (pairs
// where the later request was made while the earlier still waited, the
// only ones that could be reordered), and the grants overtaken at least
// once. It also returns the first overtaken grant and the grant that
// overtook it first. O(n log n).
func fairness(gs []grant) (overtakes, contended, overtaken int, victim, culprit int) {
	victim, culprit = -1, -1
	n := len(gs)
	invokes := make([]int, n)
	for i, g := range gs {
		invokes[i] = g.invoke
	}
	for i, g := range gs {
		// grants invoked after g and before g's grant
		k := sort.SearchInts(invokes, g.done)
		contended += max(k-i-1, 0)
	}
	// Grants overtaken: a later request with an earlier grant exists.
	minAfter, at := math.MaxInt, -1
	for i := n - 1; i >= 0; i-- {
		if minAfter < gs[i].done {
			overtaken++
			victim, culprit = i, at
		}
		if gs[i].done < minAfter {
			minAfter, at = gs[i].done, i
		}
	}
	dones := make([]int, n)
	for i, g := range gs {
		dones[i] = g.done
	}
	overtakes = inversions(dones)
	return overtakes, contended, overtaken, victim, culprit
}

// inversions counts the pairs i < j with a[i] > a[j], by merge sort. It
// sorts a.
func inversions(a []int) int {
	if len(a) < 2 {
		return 0
	}
	mid := len(a) / 2
	left := append([]int(nil), a[:mid]...)
	right := append([]int(nil), a[mid:]...)
	count := inversions(left) + inversions(right)
	i, j, k := 0, 0, 0
	for i < len(left) && j < len(right) {
		if right[j] < left[i] {
			a[k] = right[j]
			count += len(left) - i
			j++
		} else {
			a[k] = left[i]
			i++
		}
		k++
	}
	k += copy(a[k:], left[i:])
	copy(a[k:], right[j:])
	return count
}

// mutexFairness (EM3): how often a later request for the critical section
// was granted before an earlier one. It is a figure, not a judgement: the
// check is true whenever there are grants, unknown when there are none.
func mutexFairness(h *history.History) Result {
	gs := grants(h)
	r := Result{Figures: map[string]any{"grants": len(gs)}}
	if len(gs) == 0 {
		r.Valid = Unknown
		r.Explanation = "no acquire was granted, so the order of grants cannot be measured"
		return r
	}
	overtakes, contended, overtaken, victim, culprit := fairness(gs)
	r.Valid = True
	r.Figures["overtakes"] = overtakes
	r.Figures["contended_pairs"] = contended
	r.Figures["overtaken_grants"] = overtaken
	ratio := 0.0
	if contended > 0 {
		ratio = float64(overtakes) / float64(contended)
	}
	r.Figures["overtake_ratio"] = round2(ratio)
	if overtakes == 0 {
		r.Explanation = fmt.Sprintf("the %s followed the order of the requests (%d pairs of requests waited together)", plural(len(gs), "grant"), contended)
		return r
	}
	v, c := gs[victim], gs[culprit]
	ev, ec := &h.Events[v.invoke], &h.Events[c.invoke]
	r.Nodes = []string{v.op.node}
	if c.op.node != v.op.node {
		r.Nodes = append(r.Nodes, c.op.node)
	}
	r.Evidence = []history.Event{*ev, *ec, h.Events[c.done], h.Events[v.done]}
	sortEvents(r.Evidence)
	r.Explanation = fmt.Sprintf("%d of the %d pairs of requests that waited together were granted out of order (%.0f%%), and %s overtaken; the first: %s's acquire at %s, asked at %s, was granted at %s, after %s's, asked later at %s and granted at %s",
		overtakes, contended, 100*ratio, plural(overtaken, "grant")+" "+isAre(overtaken, "was", "were"),
		v.op.process, v.op.node, fmtTime(ev.Time), fmtTime(h.Events[v.done].Time),
		c.op.process, fmtTime(ec.Time), fmtTime(h.Events[c.done].Time))
	return r
}

// round2 rounds to two decimals, for figures.
func round2(x float64) float64 { return math.Round(x*100) / 100 }
