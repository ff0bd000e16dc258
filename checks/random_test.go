package checks

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// The naive two-leaders checker below shares no code with the fast one: it
// replays the history from the beginning for every question it asks.

// nstate is a node's state in the naive replay.
type nstate struct {
	live   bool
	leader string
}

// naiveReplay returns every node's state after the first k events of h.
func naiveReplay(h *history.History, k int) map[string]nstate {
	st := map[string]nstate{}
	for _, e := range h.Events[:k] {
		if e.Node == "" {
			continue
		}
		switch {
		case e.Kind == history.KindProcess && e.What == history.ProcStart:
			st[e.Node] = nstate{live: true}
		case e.Kind == history.KindProcess && (e.What == history.ProcCrash || e.What == history.ProcExit || e.What == history.ProcStop):
			st[e.Node] = nstate{}
		case e.Kind == history.KindReport && e.What == history.ReportLeader && st[e.Node].live:
			st[e.Node] = nstate{live: true, leader: e.Value}
		}
	}
	return st
}

func naiveClaims(st map[string]nstate, node string) bool {
	s := st[node]
	return s.live && s.leader == node
}

func naiveClaimers(st map[string]nstate) int {
	n := 0
	for node := range st {
		if naiveClaims(st, node) {
			n++
		}
	}
	return n
}

// naiveTwoLeaders samples the state between every two successive distinct
// times of h and reports the first span in which two nodes claim. With
// eachEvent it instead looks at the state after every single event, which
// wrongly counts claims that only touch: the check of the checker.
func naiveTwoLeaders(h *history.History, eachEvent bool) (bool, int64) {
	n := len(h.Events)
	for k := 1; k <= n; k++ {
		t := h.Events[k-1].Time
		if !eachEvent && k < n && h.Events[k].Time == t {
			continue // not the last event at this time
		}
		if !eachEvent && k == n {
			break // no time follows the last event
		}
		if naiveClaimers(naiveReplay(h, k)) >= 2 {
			return true, t
		}
	}
	return false, 0
}

type nclaim struct {
	node     string
	from, to int64
}

// naiveClaimList finds every claim by asking, event by event, who claims
// before and after it, and then scanning forward for the claim's end.
func naiveClaimList(h *history.History) []nclaim {
	var out []nclaim
	for k := 1; k <= len(h.Events); k++ {
		node := h.Events[k-1].Node
		if naiveClaims(naiveReplay(h, k-1), node) || !naiveClaims(naiveReplay(h, k), node) {
			continue
		}
		c := nclaim{node: node, from: h.Events[k-1].Time, to: h.End()}
		for m := k + 1; m <= len(h.Events); m++ {
			if !naiveClaims(naiveReplay(h, m), node) {
				c.to = h.Events[m-1].Time
				break
			}
		}
		out = append(out, c)
	}
	return out
}

// naiveOverlaps checks every pair of claims. The first overlap is the one
// whose later claim began first, paired with the earliest claim it overlaps.
func naiveOverlaps(claims []nclaim) (count int, first *Interval, nodes []string) {
	for j := range claims {
		for i := range j {
			a, b := claims[i], claims[j]
			if max(a.from, b.from) >= min(a.to, b.to) {
				continue
			}
			count++
			if first == nil {
				first = &Interval{From: b.from, To: min(a.to, b.to)}
				nodes = []string{a.node, b.node}
			}
		}
	}
	return count, first, nodes
}

// naiveOverlapList is every overlapping pair of claims, in the order of
// the later claim and then of the earlier, with its interval and nodes.
func naiveOverlapList(claims []nclaim) (ivs []Interval, nodes [][]string) {
	for j := range claims {
		for i := range j {
			a, b := claims[i], claims[j]
			if max(a.from, b.from) >= min(a.to, b.to) {
				continue
			}
			ivs = append(ivs, Interval{From: b.from, To: min(a.to, b.to)})
			nodes = append(nodes, []string{a.node, b.node})
		}
	}
	return ivs, nodes
}

// naiveTwoLeaderTime samples the state between every two successive
// distinct times and adds up the spans in which two nodes claim.
func naiveTwoLeaderTime(h *history.History) int64 {
	var total int64
	for k := 1; k < len(h.Events); k++ {
		t, next := h.Events[k-1].Time, h.Events[k].Time
		if next > t && naiveClaimers(naiveReplay(h, k)) >= 2 {
			total += next - t
		}
	}
	if n := len(h.Events); n > 0 && naiveClaimers(naiveReplay(h, n)) >= 2 {
		total += h.End() - h.Events[n-1].Time
	}
	return total
}

// compareViolations compares a result's violations with the naive list.
func compareViolations(r Result, ivs []Interval, nodes [][]string, total int64) string {
	if r.ViolationCount != len(ivs) || r.ViolationTime != total {
		return fmt.Sprintf("violations: got %d over %d, want %d over %d", r.ViolationCount, r.ViolationTime, len(ivs), total)
	}
	if len(r.Violations) != min(len(ivs), MaxViolations) {
		return fmt.Sprintf("listed: got %d, want %d", len(r.Violations), len(ivs))
	}
	for i, v := range r.Violations {
		if v.Interval != ivs[i] || !slices.Equal(v.Nodes, nodes[i]) || len(v.Evidence) < 2 || v.Explanation == "" {
			return fmt.Sprintf("violation %d: got %v %v with %d events of evidence, want %v %v", i, v.Interval, v.Nodes, len(v.Evidence), ivs[i], nodes[i])
		}
	}
	return ""
}

// compareTwoLeaders returns a description of how the fast check and the
// naive one disagree on h, or "" if they agree.
func compareTwoLeaders(h *history.History) string {
	c, _ := Lookup("two-leaders")
	r := c.Run(h)
	invalid, from := naiveTwoLeaders(h, false)
	count, first, nodes := naiveOverlaps(naiveClaimList(h))
	if unstarted(h) != nil {
		// Nobody started, so nobody is live: the check refuses to judge.
		if r.Valid != Unknown || invalid || count > 0 {
			return fmt.Sprintf("a history without starts: got %v, naive invalid=%v with %d overlaps; want unknown, false and 0", r.Valid, invalid, count)
		}
		return ""
	}
	switch {
	case invalid != (count > 0):
		return fmt.Sprintf("the two naive checkers disagree: sampling says %v, pairs say %d overlaps", invalid, count)
	case (r.Valid == False) != invalid:
		return fmt.Sprintf("verdict: got %v (%s), want invalid=%v", r.Valid, r.Explanation, invalid)
	case r.Figures["overlaps"] != count:
		return fmt.Sprintf("overlaps: got %v, want %d", r.Figures["overlaps"], count)
	}
	ivs, pairs := naiveOverlapList(naiveClaimList(h))
	if diff := compareViolations(r, ivs, pairs, naiveTwoLeaderTime(h)); diff != "" {
		return diff
	}
	switch {
	case !invalid:
		return ""
	case first.From != from:
		return fmt.Sprintf("naive first overlaps disagree: sampling says %d, pairs say %d", from, first.From)
	case r.Interval == nil || *r.Interval != *first:
		return fmt.Sprintf("interval: got %v, want %v", r.Interval, first)
	case !slices.Equal(r.Nodes, nodes):
		return fmt.Sprintf("nodes: got %v, want %v", r.Nodes, nodes)
	}
	return ""
}

// randomHistory makes a small history of up to four nodes in which many
// events share a time, so that claims often touch.
func randomHistory(rng *rand.Rand) *hb {
	nodes := []string{"n1", "n2", "n3", "n4"}[:2+rng.IntN(3)]
	b := hist(nodes...)
	t := int64(0)
	for range 1 + rng.IntN(30) {
		t += int64(rng.IntN(3))
		n := nodes[rng.IntN(len(nodes))]
		switch x := rng.IntN(20); {
		case x < 9:
			v := n // half the reports are claims
			switch rng.IntN(4) {
			case 0:
				v = ""
			case 1:
				v = nodes[rng.IntN(len(nodes))]
			}
			b.leader(n, v, t)
		case x < 12:
			b.start(n, t)
		case x < 13:
			b.crash(n, t)
		case x < 14:
			b.exit(n, t)
		case x < 15:
			b.stop(n, t)
		case x < 17:
			b.pause(n, t)
		case x < 19:
			b.resume(n, t)
		default:
			b.nemesis("partition", history.PhaseStart, t, n)
		}
	}
	if rng.IntN(4) > 0 {
		b.end(t + int64(rng.IntN(3)))
	}
	return b
}

func TestTwoLeadersAgainstNaive(t *testing.T) {
	const seed, runs = 1, 5000
	rng := rand.New(rand.NewPCG(seed, 0))
	var invalid, valid, touching, multi int
	for i := range runs {
		b := randomHistory(rng)
		h := b.h()
		if diff := compareTwoLeaders(h); diff != "" {
			t.Fatalf("seed %d, history %d: %s\n%s", seed, i, diff, b.jsonl())
		}
		strict, _ := naiveTwoLeaders(h, false)
		loose, _ := naiveTwoLeaders(h, true)
		switch {
		case strict:
			invalid++
		case loose:
			touching++ // valid only because touching claims do not overlap
		default:
			valid++
		}
		if count, _, _ := naiveOverlaps(naiveClaimList(h)); count > 1 {
			multi++
		}
		// Every check must judge every history without breaking its contract.
		for _, c := range All() {
			judge(t, c.Name, h)
		}
	}
	// The comparison can only fail if the histories exercise the cases: some
	// invalid, some valid, some with several overlaps, and some that a
	// checker which counted touching claims as overlapping would get wrong.
	for _, c := range []struct {
		what string
		n    int
	}{{"invalid", invalid}, {"valid", valid}, {"touching", touching}, {"several overlaps", multi}} {
		if c.n < runs/100 {
			t.Errorf("only %d of %d random histories are %s", c.n, runs, c.what)
		}
	}
	t.Logf("%d invalid, %d valid, %d valid but touching, %d with several overlaps", invalid, valid, touching, multi)
}

func FuzzTwoLeaders(f *testing.F) {
	rng := rand.New(rand.NewPCG(2, 0))
	for range 20 {
		f.Add(randomHistory(rng).jsonl())
	}
	f.Fuzz(func(t *testing.T, text string) {
		h, err := history.Read(strings.NewReader(text))
		if err != nil || hasBackwards(h) || len(h.Events) > 200 {
			return
		}
		if diff := compareTwoLeaders(h); diff != "" {
			t.Fatalf("%s", diff)
		}
		for _, c := range All() {
			r := c.Run(h)
			if r.Valid != True && r.Explanation == "" {
				t.Fatalf("%s: %v without an explanation", c.Name, r.Valid)
			}
		}
	})
}
