package checks

import (
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// threeOverlaps is a history in which n1 leads throughout and n2 claims
// leadership three times, each claim overlapping n1's for a different
// length: 100ms, 300ms (the longest) and 50ms.
func threeOverlaps() *hb {
	return hist("n1", "n2", "n3").starts(0, "n1", "n2", "n3").
		leader("n1", "n1", 10).
		leader("n2", "n2", 100).leader("n2", "n1", 200).
		leader("n2", "n2", 400).leader("n2", "n1", 700).
		leader("n2", "n2", 900).crash("n2", 950).
		end(1000)
}

func TestTwoLeadersListsEveryOverlap(t *testing.T) {
	r := twoLeaders(threeOverlaps().h())
	if r.Valid != False {
		t.Fatalf("valid: got %v, want false", r.Valid)
	}
	want := []Interval{{ms(100), ms(200)}, {ms(400), ms(700)}, {ms(900), ms(950)}}
	if len(r.Violations) != len(want) {
		t.Fatalf("violations: got %d, want %d: %+v", len(r.Violations), len(want), r.Violations)
	}
	for i, v := range r.Violations {
		if v.Interval != want[i] {
			t.Errorf("violation %d: interval got %v, want %v", i, v.Interval, want[i])
		}
		if strings.Join(v.Nodes, ",") != "n1,n2" {
			t.Errorf("violation %d: nodes got %v, want n1,n2", i, v.Nodes)
		}
		// The evidence is both claims and the event that ended the overlap.
		if len(v.Evidence) != 3 || v.Evidence[1].Time != want[i].From || v.Evidence[2].Time != want[i].To {
			t.Errorf("violation %d: evidence got %+v, want n1's claim, n2's claim at %d and its end at %d", i, v.Evidence, want[i].From, want[i].To)
		}
		if !strings.Contains(v.Explanation, fmtSpan(want[i].From, want[i].To, "")) {
			t.Errorf("violation %d: explanation %q does not say its span", i, v.Explanation)
		}
	}
	if r.ViolationCount != 3 || r.ViolationTime != ms(450) {
		t.Errorf("count and time: got %d and %d, want 3 and %d", r.ViolationCount, r.ViolationTime, ms(450))
	}
	if got := r.Longest(); got == nil || got.Interval != want[1] {
		t.Errorf("longest: got %+v, want %v", got, want[1])
	}
	if r.First().Interval != *r.Interval || r.Explanation == r.First().Explanation {
		t.Errorf("the result's own fields are not the first violation's with the whole history's count: %v, %q", r.Interval, r.Explanation)
	}
	if !strings.Contains(r.Explanation, "; 3 pairs of claims overlap in all, for 450ms") {
		t.Errorf("explanation %q does not count them and give their time", r.Explanation)
	}
}

// Past MaxViolations the list keeps the longest in its last place.
func TestViolationListKeepsTheLongest(t *testing.T) {
	var l violationList
	for i := range MaxViolations + 10 {
		length := int64(1)
		if i == MaxViolations+5 {
			length = 50
		}
		l.add(Interval{From: int64(i) * 100, To: int64(i)*100 + length})
	}
	got := l.listed()
	if len(got) != MaxViolations || got[0] != 0 || got[MaxViolations-1] != MaxViolations+5 {
		t.Errorf("listed: %d positions, first %d, last %d; want %d, 0 and %d", len(got), got[0], got[len(got)-1], MaxViolations, MaxViolations+5)
	}
	if u := unionLength([]Interval{{0, 10}, {5, 20}, {30, 40}, {35, 36}}); u != 30 {
		t.Errorf("union: got %d, want 30", u)
	}
}

func TestOneLeaderPerTermListsEveryTerm(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").
		claim("n1", 1, 10).claim("n2", 1, 20).
		claim("n1", 2, 30).claim("n2", 2, 40).
		claim("n2", 3, 50).end(100).h()
	r := oneLeaderPerTerm(h)
	if r.Valid != False || len(r.Violations) != 2 || r.ViolationCount != 2 {
		t.Fatalf("got %v with %d violations (count %d), want false with 2", r.Valid, len(r.Violations), r.ViolationCount)
	}
	for i, want := range []Interval{{ms(10), ms(20)}, {ms(30), ms(40)}} {
		if v := r.Violations[i]; v.Interval != want || !strings.Contains(v.Explanation, "term "+string(rune('1'+i))) {
			t.Errorf("violation %d: got %v %q, want %v in term %d", i, v.Interval, v.Explanation, want, i+1)
		}
	}
}

func TestStaleLeaderListsWindowsPastTheBound(t *testing.T) {
	h := hist("n1", "n2", "n3").staleBound(20).starts(0, "n1", "n2", "n3").
		claim("n1", 1, 10).claim("n2", 2, 20).leader("n1", "n2", 60). // 40ms stale
		claim("n3", 3, 100).leader("n2", "n3", 110).                  // 10ms, within the bound
		end(200).h()
	r := staleLeader(h)
	if r.Valid != False || len(r.Violations) != 1 || r.Violations[0].Interval != (Interval{ms(20), ms(60)}) {
		t.Fatalf("got %v with %+v, want false with one window from 20ms to 60ms", r.Valid, r.Violations)
	}
}

func TestMutexCSListsEveryOverlap(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").
		report("n1", history.ReportCS, csEnter, 10).report("n2", history.ReportCS, csEnter, 20).report("n1", history.ReportCS, csExit, 30).
		report("n2", history.ReportCS, csExit, 40).
		report("n1", history.ReportCS, csEnter, 50).report("n2", history.ReportCS, csEnter, 55).end(100).h()
	r := mutexCS(h)
	if r.Valid != False || len(r.Violations) != 2 || r.ViolationTime != ms(10+45) {
		t.Fatalf("got %v with %+v (time %d), want false with 2 over 55ms", r.Valid, r.Violations, r.ViolationTime)
	}
}

// A claim whose term came after the overlap began is named with that
// term, the one one-leader-per-term gives it, never as giving no term.
func TestTwoLeadersNamesATermThatCameLater(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").
		claim("n1", 1, 10).
		leader("n2", "n2", 100).claim("n2", 1, 150).
		leader("n1", "n2", 300).end(400).h()
	r := twoLeaders(h)
	if r.Valid != False {
		t.Fatalf("valid: got %v", r.Valid)
	}
	if strings.Contains(r.Explanation, "n2 gave no term and") || !strings.Contains(r.Explanation, "n2 gave no term until 0.150s, then term 1") {
		t.Errorf("explanation %q does not name n2's term 1", r.Explanation)
	}
	if !strings.Contains(r.Explanation, "one-leader-per-term forbids") {
		t.Errorf("explanation %q does not say both claimed term 1", r.Explanation)
	}
	o := oneLeaderPerTerm(h)
	if o.Valid != False || !strings.Contains(o.Explanation, "term 1") {
		t.Errorf("one-leader-per-term: got %v %q, want a violation in term 1", o.Valid, o.Explanation)
	}
	// A term given only after the overlap ended is named too.
	h = hist("n1", "n2").starts(0, "n1", "n2").
		claim("n1", 1, 10).leader("n2", "n2", 100).leader("n1", "n2", 200).claim("n2", 2, 250).end(400).h()
	if r := twoLeaders(h); !strings.Contains(r.Explanation, "n2 gave no term until 0.250s, after the overlap, then term 2") {
		t.Errorf("explanation %q does not name n2's later term 2", r.Explanation)
	}
}
