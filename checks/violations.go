package checks

import (
	"cmp"
	"slices"

	"github.com/coupharness/coup/history"
)

// Violation is one violation a check with intervals found: two claims of
// leadership that overlapped (two-leaders), two claimants of one term
// (one-leader-per-term), a stale-leader window past the bound, two nodes
// in the critical section at once (mutex-cs), two grants whose fencing
// tokens are out of order (fencing). A result's Nodes, Interval, Evidence
// and Explanation are its first violation's, said with what the whole
// history adds (how many more); each Violation says one alone.
type Violation struct {
	// Nodes are the nodes (or, for fencing, the clients) it is about.
	Nodes []string `json:"nodes"`
	// Interval is the span of history time it covers.
	Interval Interval `json:"interval"`
	// Explanation is one sentence about this violation alone.
	Explanation string `json:"explanation"`
	// Evidence is the smallest set of events that shows it, in history
	// order.
	Evidence []history.Event `json:"evidence"`
}

// MaxViolations bounds the violations a result lists: the first ones in
// the order they began, and the longest of all in place of the last when
// it is not among them. ViolationCount and ViolationTime still count
// every one.
const MaxViolations = 100

// Length is the length of the violation's interval.
func (v *Violation) Length() int64 { return v.Interval.To - v.Interval.From }

// First is the violation that began first (the one the result's own
// fields describe), or nil when the result lists none.
func (r *Result) First() *Violation {
	if len(r.Violations) == 0 {
		return nil
	}
	return &r.Violations[0]
}

// Longest is the longest violation listed (the earliest of the longest),
// or nil when the result lists none.
func (r *Result) Longest() *Violation {
	var best *Violation
	for i := range r.Violations {
		if v := &r.Violations[i]; best == nil || v.Length() > best.Length() {
			best = v
		}
	}
	return best
}

// violationList gathers a check's violations: every one is counted and
// its interval kept for the total time, while only those to be listed are
// explained (explaining costs a scan of the history each).
type violationList struct {
	count     int
	intervals []Interval
}

// add counts one violation over iv.
func (l *violationList) add(iv Interval) {
	l.count++
	l.intervals = append(l.intervals, iv)
}

// listed returns the positions, in the order added, of the violations to
// explain: the first MaxViolations, the last of them replaced by the
// longest (the earliest of the longest) when that comes later.
func (l *violationList) listed() []int {
	n := min(len(l.intervals), MaxViolations)
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	if len(l.intervals) <= MaxViolations {
		return out
	}
	long := 0
	for i, iv := range l.intervals {
		if iv.To-iv.From > l.intervals[long].To-l.intervals[long].From {
			long = i
		}
	}
	if long >= n {
		out[n-1] = long
	}
	return out
}

// finish sets the result's violations: those listed, explained by explain
// (given the position of each as added), with the count and the total
// time.
func (l *violationList) finish(r *Result, explain func(i int) Violation) {
	if l.count == 0 {
		return
	}
	for _, i := range l.listed() {
		r.Violations = append(r.Violations, explain(i))
	}
	r.ViolationCount = l.count
	r.ViolationTime = unionLength(l.intervals)
}

// unionLength is the time covered by at least one of the intervals.
func unionLength(ivs []Interval) int64 {
	s := slices.Clone(ivs)
	slices.SortFunc(s, func(a, b Interval) int { return cmp.Compare(a.From, b.From) })
	var total int64
	var cur *Interval
	for i := range s {
		iv := s[i]
		switch {
		case cur != nil && iv.From <= cur.To:
			cur.To = max(cur.To, iv.To)
		default:
			if cur != nil {
				total += cur.To - cur.From
			}
			cur = &iv
		}
	}
	if cur != nil {
		total += cur.To - cur.From
	}
	return total
}
