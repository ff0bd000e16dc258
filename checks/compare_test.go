package checks

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// randomRun makes a small history of up to four nodes with everything the
// checks read: process events, leader beliefs (often agreeing), elect
// requests, nemesis events, messages with deliveries, drops, duplicates and
// corruptions, rejections and payload reports, and an end that is a stop of
// every node, a bare end event, or nothing (a killed run). Time mostly
// creeps by a millisecond or two and sometimes jumps, so that the bounds
// (a few tens of milliseconds) and the integrity grace (100ms) both pass
// and fail.
func randomRun(rng *rand.Rand) *hb {
	nodes := []string{"n1", "n2", "n3", "n4"}[:2+rng.IntN(3)]
	pick := func() string { return nodes[rng.IntN(len(nodes))] }
	b := hist(nodes...)
	switch rng.IntN(4) {
	case 0:
		b.elects("min")
	case 1:
		b.elects("")
	}
	b.termination(int64(5 + rng.IntN(60)))
	if rng.IntN(3) > 0 {
		b.stabilisation(int64(5 + rng.IntN(60)))
	}
	if rng.IntN(3) == 0 {
		b.gst(int64(1 + rng.IntN(60)))
	}
	b.bound(int64(rng.IntN(8)))
	b.checksums(rng.IntN(2) == 0)
	if rng.IntN(2) == 0 {
		b.staleBound(int64(1 + rng.IntN(40)))
	}
	// Terms: none in a third of the histories, on every leader report in
	// another third, on some in the rest. A claim mostly begins a new term,
	// sometimes takes the current one again (a same-term violation when
	// another node took it) and sometimes an older one (a stale leader).
	termMode := rng.IntN(3)
	cur := int64(0)
	term := func(claim bool) *int64 {
		if termMode == 0 || (termMode == 2 && rng.IntN(3) == 0) {
			return nil
		}
		v := cur
		switch x := rng.IntN(10); {
		case claim && x < 5:
			cur++
			v = cur
		case x >= 8:
			v = max(0, cur-1-int64(rng.IntN(2)))
		}
		return &v
	}
	for _, n := range nodes {
		if rng.IntN(6) > 0 {
			b.start(n, 0)
		}
	}
	t := int64(0)
	next := int64(1)
	var sent []int64          // every message sent
	copies := map[int64]int{} // copies in flight
	var flying []int64        // messages with copies in flight (may hold stale ids)
	var corrupted []int64
	inFlight := func() (int64, bool) {
		for len(flying) > 0 {
			i := rng.IntN(len(flying))
			id := flying[i]
			if copies[id] > 0 {
				return id, true
			}
			flying = append(flying[:i], flying[i+1:]...)
		}
		return 0, false
	}
	for range 1 + rng.IntN(45) {
		if rng.IntN(8) == 0 {
			t += int64(15 + rng.IntN(120))
		} else {
			t += int64(rng.IntN(3))
		}
		n := pick()
		switch x := rng.IntN(100); {
		case x < 16:
			v := n
			switch rng.IntN(4) {
			case 0:
				v = ""
			case 1:
				v = pick()
			}
			b.leaderTerm(n, v, term(v == n), t)
		case x < 24:
			b.agree(pick(), t, nodes...)
		case x < 28:
			b.start(n, t)
		case x < 31:
			b.crash(n, t)
		case x < 32:
			b.exit(n, t)
		case x < 35:
			b.pause(n, t)
		case x < 38:
			b.resume(n, t)
		case x < 41:
			b.nemesis("partition", []string{history.PhaseStart, history.PhaseEnd}[rng.IntN(2)], t, n)
		case x < 45:
			b.elect(n, t)
		case x < 60:
			id := next
			next++
			b.send(id, n, pick(), []string{"election", "elected", "ping"}[rng.IntN(3)], t)
			sent = append(sent, id)
			copies[id] = 1
			flying = append(flying, id)
		case x < 73:
			if id, ok := inFlight(); ok {
				copies[id]--
				b.deliver(id, t)
			}
		case x < 77:
			if id, ok := inFlight(); ok {
				copies[id]--
				b.drop(id, "loss", t)
			}
		case x < 79:
			if id, ok := inFlight(); ok {
				copies[id]++
				b.dup(id, t)
			}
		case x < 86:
			// A corrupted copy: its corrupt event, then its delivery, as the
			// recorder writes them.
			if id, ok := inFlight(); ok {
				b.corrupt(id, t, `{"type":"x"}`)
				corrupted = append(corrupted, id)
				copies[id]--
				b.deliver(id, t)
			}
		case x < 94:
			id := int64(0)
			switch rng.IntN(3) {
			case 0:
				if len(corrupted) > 0 {
					id = corrupted[rng.IntN(len(corrupted))]
					n = b.msgs[id].Dest
				}
			case 1:
				if len(sent) > 0 {
					id = sent[rng.IntN(len(sent))]
				}
			}
			b.rejected(n, id, t)
		case x < 96:
			b.report(n, reportPayload, []string{payloadIntact, payloadCorrupt}[rng.IntN(2)], t)
		default:
			b.leaderTerm(n, n, term(true), t)
		}
	}
	switch rng.IntN(4) {
	case 0: // killed
	case 1:
		b.end(t + int64(rng.IntN(3)))
	default:
		t += int64(rng.IntN(200))
		b.stops(t, nodes...)
		b.endCounts(t, map[string]int64{"messages.sent": int64(len(sent))})
	}
	return b
}

// comparison is a fast check against its naive reference.
type comparison struct {
	check string
	// compare returns how the fast result r and the naive checker (with
	// the planted bug when bug is true) disagree on h, or "".
	compare func(h *history.History, r Result, bug bool) string
	// skip reports histories the comparison does not apply to.
	skip func(h *history.History) bool
}

var comparisons = []comparison{
	{check: "agreement", compare: func(h *history.History, r Result, bug bool) string {
		ok, leaders := naiveAgreement(h, bug)
		if (r.Valid == True) != ok || r.Figures["leaders"] != leaders {
			return fmt.Sprintf("got %v with %v leaders, naive says %v with %d", r.Valid, r.Figures["leaders"], ok, leaders)
		}
		return ""
	}},
	{check: "validity", compare: func(h *history.History, r Result, bug bool) string {
		v, wrong := naiveValidity(h, bug)
		got, _ := r.Figures["wrong_believers"].(int)
		if r.Valid != v || got != wrong {
			return fmt.Sprintf("got %v with %d wrong believers, naive says %v with %d", r.Valid, got, v, wrong)
		}
		return ""
	}},
	{check: "termination", compare: func(h *history.History, r Result, bug bool) string {
		v, without := naiveTermination(h, bug)
		got, _ := r.Figures["without_leader"].(int)
		if r.Valid != v || got != without {
			return fmt.Sprintf("got %v with %d without a leader, naive says %v with %d", r.Valid, got, v, without)
		}
		return ""
	}},
	{check: "eventual-leadership", compare: func(h *history.History, r Result, bug bool) string {
		v, leader, at := naiveOmega(h, bug)
		gotLeader, _ := r.Figures["leader"].(string)
		gotAt, ok := r.Figures["stabilised_ns"].(int64)
		if !ok {
			gotAt = -1
		}
		if r.Valid != v || gotLeader != leader || gotAt != at {
			return fmt.Sprintf("got %v, leader %q stable from %d; naive says %v, leader %q stable from %d", r.Valid, gotLeader, gotAt, v, leader, at)
		}
		return ""
	}},
	{
		check: "complexity",
		compare: func(h *history.History, r Result, bug bool) string {
			list, outside := naiveComplexity(h, bug)
			fast := electionsOf(h)
			if v := naiveComplexityVerdict(h, list); r.Valid != v {
				return fmt.Sprintf("got %v, naive says %v", r.Valid, v)
			}
			if fast.outsideTotal != outside {
				return fmt.Sprintf("outside elections: got %d, naive says %d", fast.outsideTotal, outside)
			}
			if len(fast.list) != len(list) {
				return fmt.Sprintf("got %d elections, naive says %d", len(fast.list), len(list))
			}
			for i, e := range fast.list {
				n := list[i]
				got := fmt.Sprintf("%d-%d total %d %v settled=%v cut=%v causes=%d", e.from, e.to, e.total, e.byType, e.settled, e.cut != nil, len(e.causes))
				want := fmt.Sprintf("%d-%d total %d %v settled=%v cut=%v causes=%d", n.from, n.to, n.total, n.byType, n.settled, n.cut, n.causes)
				if got != want {
					return fmt.Sprintf("election %d: got %s, naive says %s", i+1, got, want)
				}
			}
			return ""
		},
		// Without message events the check judges the end event's
		// counters, which the naive checker does not model.
		skip: func(h *history.History) bool {
			for _, e := range h.Events[:naiveStop(h)] {
				if e.Kind == history.KindMsg && e.What == history.MsgSend {
					return false
				}
			}
			return true
		},
	},
	{check: "one-leader-per-term", compare: func(h *history.History, r Result, bug bool) string {
		n := naiveOneLeaderPerTerm(h, bug)
		untermed, _ := r.Figures["claims_without_term"].(int)
		got := fmt.Sprintf("%v: %v claims, %d without a term", r.Valid, r.Figures["claims"], untermed)
		want := fmt.Sprintf("%v: %d claims, %d without a term", n.valid, n.claims, n.untermed)
		if n.valid != Unknown {
			got += fmt.Sprintf(", %v terms, %v contested", r.Figures["terms"], r.Figures["contested_terms"])
			want += fmt.Sprintf(", %d terms, %d contested", n.terms, n.contested)
		}
		if n.valid == False {
			got += fmt.Sprintf(", first %v %v", r.Nodes, r.Interval)
			want += fmt.Sprintf(", first %v %v", n.firstNodes, &Interval{From: n.firstFrom, To: n.firstTo})
		}
		// Every contested term is a violation of its own, its first two
		// claimants named.
		got += fmt.Sprintf(", %d violations listed of %d", len(r.Violations), r.ViolationCount)
		want += fmt.Sprintf(", %d violations listed of %d", n.contested, n.contested)
		for _, v := range r.Violations {
			term := v.Evidence[0].Term
			for _, e := range v.Evidence {
				if e.Node == v.Nodes[1] && e.Term != nil {
					term = e.Term
				}
			}
			if c := n.contestedBy[*term]; len(c) < 2 || !slices.Equal(v.Nodes, c[:2]) {
				got += fmt.Sprintf(", term %d's %v", *term, v.Nodes)
				want += fmt.Sprintf(", term %d's %v", *term, c)
			}
		}
		if got != want {
			return fmt.Sprintf("got %s; naive says %s", got, want)
		}
		return ""
	}},
	{check: "stale-leader", compare: func(h *history.History, r Result, bug bool) string {
		n := naiveStaleLeader(h, bug)
		if r.Valid != n.valid {
			return fmt.Sprintf("got %v (%s), naive says %v", r.Valid, r.Explanation, n.valid)
		}
		if n.valid == Unknown {
			return ""
		}
		over, _ := r.Figures["over_bound"].(int)
		got := fmt.Sprintf("longest %v, %v stale, %d over", r.Figures["longest_ns"], r.Figures["stale_claims"], over)
		want := fmt.Sprintf("longest %d, %d stale, %d over", n.longest, n.stale, n.over)
		if got != want {
			return fmt.Sprintf("got %s; naive says %s", got, want)
		}
		if n.longest == 0 {
			return ""
		}
		// The claim reported must be one whose window is the longest, over
		// the same span.
		key := fmt.Sprintf("%s@%d", r.Nodes[0], r.Evidence[0].Time)
		for _, e := range r.Evidence {
			if e.Node == r.Nodes[0] && e.Kind == history.KindReport && e.Value == e.Node {
				key = fmt.Sprintf("%s@%d", e.Node, e.Time)
				break
			}
		}
		over = 0
		for _, w := range n.windows {
			if h.Meta.StaleLeader > 0 && w > h.Meta.StaleLeader {
				over++
			}
		}
		if len(r.Violations) != over || r.ViolationCount != over || (over > 0) != (r.Valid == False) {
			return fmt.Sprintf("got %d violations listed of %d, naive says %d windows past the bound", len(r.Violations), r.ViolationCount, over)
		}
		if n.windows[key] != n.longest || r.Interval == nil || n.firsts[key] != r.Interval.From || n.lasts[key] != r.Interval.To {
			return fmt.Sprintf("the claim reported (%s, %v) is not a longest one by the naive checker: its window %d from %d to %d", key, r.Interval, n.windows[key], n.firsts[key], n.lasts[key])
		}
		return ""
	}},
	{check: "integrity", compare: func(h *history.History, r Result, bug bool) string {
		n := naiveIntegrity(h, bug)
		got := nintegrity{}
		for k, p := range map[string]*int{
			"corrupted": &got.corrupted, "deliveries": &got.deliveries, "rejected": &got.rejected, "accepted": &got.accepted,
			"undecided": &got.undecided, "undelivered": &got.undelivered, "unexplained_rejections": &got.unexplained,
		} {
			*p, _ = r.Figures[k].(int)
		}
		want := True
		switch {
		case n.accepted > 0:
			want = False
		case n.undecided > 0:
			want = Unknown
		}
		if r.Valid != want || got != n {
			return fmt.Sprintf("got %v %+v, naive says %v %+v", r.Valid, got, want, n)
		}
		return ""
	}},
}

// TestChecksAgainstNaive compares every check with its naive reference on
// random histories, and shows that the comparison would catch each planted
// bug: on enough histories the buggy reference disagrees with the check.
// Every verdict must also occur often enough to matter.
func TestChecksAgainstNaive(t *testing.T) {
	const seed, runs = 3, 4000
	for _, c := range comparisons {
		t.Run(c.check, func(t *testing.T) {
			check, ok := Lookup(c.check)
			if !ok {
				t.Fatalf("no check %q", c.check)
			}
			rng := rand.New(rand.NewPCG(seed, 0))
			verdicts := map[Validity]int{}
			caught, judged := 0, 0
			for i := range runs {
				b := randomRun(rng)
				h := b.h()
				if naiveUnjudgeable(h) || (c.skip != nil && c.skip(h)) {
					continue
				}
				judged++
				r := check.Run(h)
				// The same history read from its file keeps its messages
				// compactly; the check must judge it the same.
				if diff := sameResult(r, check.Run(readBack(t, b))); diff != "" {
					t.Fatalf("seed %d, history %d: in memory and read back, %s\n%s", seed, i, diff, b.jsonl())
				}
				if diff := c.compare(h, r, false); diff != "" {
					t.Fatalf("seed %d, history %d: %s\n%s", seed, i, diff, b.jsonl())
				}
				if r.Valid == False && len(r.Evidence) == 0 {
					t.Fatalf("seed %d, history %d: false without evidence: %s\n%s", seed, i, r.Explanation, b.jsonl())
				}
				if c.compare(h, r, true) != "" {
					caught++
				}
				verdicts[r.Valid]++
			}
			if caught < judged/100 {
				t.Errorf("the planted bug shows on only %d of %d histories: the random histories do not exercise it", caught, judged)
			}
			for _, v := range []Validity{True, False} {
				if verdicts[v] < judged/50 {
					t.Errorf("only %d of %d histories are %v", verdicts[v], judged, v)
				}
			}
			t.Logf("%d histories: %d true, %d false, %d unknown; the planted bug shows on %d", judged, verdicts[True], verdicts[False], verdicts[Unknown], caught)
		})
	}
}

// FuzzChecks runs every check against its naive reference on any history
// the fuzzer finds.
func FuzzChecks(f *testing.F) {
	rng := rand.New(rand.NewPCG(4, 0))
	for range 20 {
		f.Add(randomRun(rng).jsonl())
	}
	f.Fuzz(func(t *testing.T, text string) {
		compact, err := history.Read(strings.NewReader(text))
		if err != nil {
			return
		}
		// The naive references read every event from Events; the checks
		// judge the history as read, its messages kept apart.
		h := compact.Expanded()
		if hasBackwards(h) || len(h.Events) > 120 || naiveUnjudgeable(h) || !coherentMessages(h) {
			return
		}
		for _, c := range comparisons {
			if c.skip != nil && c.skip(h) {
				continue
			}
			check, _ := Lookup(c.check)
			r := check.Run(compact)
			if diff := sameResult(r, check.Run(h)); diff != "" {
				t.Fatalf("%s: compact and expanded, %s", c.check, diff)
			}
			if diff := c.compare(h, r, false); diff != "" {
				t.Fatalf("%s: %s", c.check, diff)
			}
		}
	})
}

// coherentMessages reports whether every message id is sent once, before
// anything else happens to it, and never delivered, dropped or duplicated
// when no copy is in flight: the histories a recorder writes.
func coherentMessages(h *history.History) bool {
	copies := map[int64]int{}
	sent := map[int64]bool{}
	for _, e := range h.Events {
		if e.Kind != history.KindMsg {
			continue
		}
		switch e.What {
		case history.MsgSend:
			if sent[e.Msg] {
				return false
			}
			sent[e.Msg] = true
			copies[e.Msg] = 1
		case history.MsgDuplicate, history.MsgDeliver, history.MsgDrop:
			if copies[e.Msg] <= 0 {
				return false
			}
			if e.What == history.MsgDuplicate {
				copies[e.Msg]++
			} else {
				copies[e.Msg]--
			}
		case history.MsgCorrupt:
			if !sent[e.Msg] {
				return false
			}
		}
	}
	return true
}

func hasBackwards(h *history.History) bool {
	_, _, ok := backwards(h)
	return ok
}

// readBack is b's history as Read gives it: from its lines, messages kept
// compactly.
func readBack(t *testing.T, b *hb) *history.History {
	t.Helper()
	h, err := history.Read(strings.NewReader(b.jsonl()))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// sameResult says how two results differ, as JSON, or "" if they do not.
func sameResult(a, b Result) string {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		return fmt.Sprintf("results differ:\n%s\n%s", ja, jb)
	}
	return ""
}
