package checks

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestMutexCSHandMade(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	tests := []struct {
		name     string
		h        *history.History
		want     Validity
		words    string
		nodes    []string
		interval *Interval
	}{
		{"one after the other", hist(n3...).starts(0, n3...).
			cs("n1", csEnter, 10).cs("n1", csExit, 20).cs("n2", csEnter, 20).cs("n2", csExit, 30).end(100).h(),
			True, "2 entries", nil, nil},
		{"overlap", hist(n3...).starts(0, n3...).
			cs("n1", csEnter, 10).cs("n2", csEnter, 15).cs("n1", csExit, 20).end(100).h(),
			False, "n2 entered at 0.015s while n1, still live, had been inside since 0.010s", []string{"n1", "n2"}, &Interval{ms(15), ms(20)}},
		{"inside until the end", hist(n3...).starts(0, n3...).
			cs("n1", csEnter, 10).cs("n3", csEnter, 50).end(100).h(),
			False, "to the end of the history", []string{"n1", "n3"}, &Interval{ms(50), ms(100)}},
		{"a crash ends the stay", hist(n3...).starts(0, n3...).
			cs("n1", csEnter, 10).crash("n1", 15).cs("n2", csEnter, 16).end(100).h(),
			True, "2 entries", nil, nil},
		{"a paused node stays inside", hist(n3...).starts(0, n3...).
			cs("n1", csEnter, 10).pause("n1", 12).cs("n2", csEnter, 15).cs("n2", csExit, 18).end(100).h(),
			False, "still live (paused at 0.012s)", []string{"n1", "n2"}, &Interval{ms(15), ms(18)}},
		{"a restarted node starts outside", hist(n3...).starts(0, n3...).
			cs("n1", csEnter, 10).crash("n1", 12).start("n1", 14).cs("n2", csEnter, 15).end(100).h(),
			True, "2 entries", nil, nil},
		{"reports of a dead node are ignored", hist(n3...).starts(0, "n1", "n2").
			cs("n3", csEnter, 5).cs("n1", csEnter, 10).end(100).h(),
			True, "1 entry", nil, nil},
		{"a second enter changes nothing", hist(n3...).starts(0, n3...).
			cs("n1", csEnter, 10).cs("n1", csEnter, 12).cs("n1", csExit, 14).cs("n2", csEnter, 15).end(100).h(),
			True, "2 entries", nil, nil},
		{"no starts", hist(n3...).cs("n1", csEnter, 10).end(100).h(),
			Unknown, "no process start event", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "mutex-cs", tt.h)
			if r.Valid != tt.want || !strings.Contains(r.Explanation, tt.words) {
				t.Errorf("got %v (%s), want %v with %q", r.Valid, r.Explanation, tt.want, tt.words)
			}
			if !slices.Equal(r.Nodes, tt.nodes) {
				t.Errorf("nodes %v, want %v", r.Nodes, tt.nodes)
			}
			if (r.Interval == nil) != (tt.interval == nil) || (r.Interval != nil && *r.Interval != *tt.interval) {
				t.Errorf("interval %v, want %v", r.Interval, tt.interval)
			}
		})
	}
}

// naiveInside replays the first k events of h and returns the live nodes
// whose last cs report since they started is an entry.
func naiveInside(h *history.History, k int) int {
	live, inside := map[string]bool{}, map[string]bool{}
	for _, e := range h.Events[:k] {
		switch {
		case e.Kind == history.KindProcess && e.What == history.ProcStart:
			live[e.Node], inside[e.Node] = true, false
		case e.Kind == history.KindProcess && (e.What == history.ProcCrash || e.What == history.ProcExit || e.What == history.ProcStop):
			live[e.Node], inside[e.Node] = false, false
		case e.Kind == history.KindReport && e.What == history.ReportCS && live[e.Node]:
			inside[e.Node] = e.Value == csEnter
		}
	}
	n := 0
	for _, in := range inside {
		if in {
			n++
		}
	}
	return n
}

// naiveMutexCS samples the state between every two successive distinct
// times and reports the first time after which two nodes are inside.
func naiveMutexCS(h *history.History) (bool, int64) {
	for k := 1; k < len(h.Events); k++ {
		if h.Events[k].Time == h.Events[k-1].Time {
			continue
		}
		if naiveInside(h, k) >= 2 {
			return true, h.Events[k-1].Time
		}
	}
	return false, 0
}

func randomCSHistory(rng *rand.Rand) *history.History {
	nodes := []string{"n1", "n2", "n3"}
	b := hist(nodes...)
	if rng.IntN(10) > 0 {
		b.starts(0, nodes...)
	}
	t := int64(0)
	for i := 0; i < 4+rng.IntN(20); i++ {
		t += int64(rng.IntN(3))
		n := nodes[rng.IntN(len(nodes))]
		switch rng.IntN(10) {
		case 0:
			b.start(n, t)
		case 1:
			b.crash(n, t)
		case 2:
			b.pause(n, t)
		case 3:
			b.resume(n, t)
		case 4, 5, 6:
			b.cs(n, csEnter, t)
		default:
			b.cs(n, csExit, t)
		}
	}
	return b.end(t + int64(rng.IntN(3))).h()
}

// The sweep and the naive replay agree on random histories.
func TestMutexCSAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	seen := map[Validity]int{}
	for i := 0; i < 3000; i++ {
		h := randomCSHistory(rng)
		r := judge(t, "mutex-cs", h)
		seen[r.Valid]++
		if csWithoutStarts(h) != nil {
			if r.Valid != Unknown {
				t.Fatalf("history %d: no starts, got %v", i, r.Valid)
			}
			continue
		}
		invalid, from := naiveMutexCS(h)
		if (r.Valid == False) != invalid {
			t.Fatalf("history %d: got %v (%s), naive says invalid=%v\n%s", i, r.Valid, r.Explanation, invalid, dumpAll(h))
		}
		if invalid && r.Interval.From != from {
			t.Fatalf("history %d: overlap from %d, naive says %d\n%s", i, r.Interval.From, from, dumpAll(h))
		}
	}
	if seen[True] < 300 || seen[False] < 300 {
		t.Errorf("the random histories are too one-sided: %v", seen)
	}
}

func dumpAll(h *history.History) string {
	var b strings.Builder
	for _, e := range h.Events {
		fmt.Fprintf(&b, "  %d %4dms %s %s %s %s\n", e.Index, e.Time/1e6, e.Kind, e.Node, e.What, e.Value)
	}
	return b.String()
}
