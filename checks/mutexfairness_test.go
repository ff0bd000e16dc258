package checks

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestMutexFairnessHandMade(t *testing.T) {
	n2 := []string{"n1", "n2"}
	tests := []struct {
		name  string
		h     *history.History
		want  Validity
		words string
		fig   map[string]any
	}{
		{"first come, first served", hist(n2...).starts(0, n2...).
			call("a", fAcquire, "n1", "a", 10).call("b", fAcquire, "n2", "b", 11).call("c", fAcquire, "n1", "c", 12).
			ret("a", history.OpOK, fAcquire, 13).ret("b", history.OpOK, fAcquire, 20).ret("c", history.OpOK, fAcquire, 30).end(100).h(),
			True, "the 3 grants followed the order of the requests (3 pairs of requests waited together)",
			map[string]any{"grants": 3, "overtakes": 0, "contended_pairs": 3, "overtaken_grants": 0, "overtake_ratio": 0.0}},
		{"one overtake", hist(n2...).starts(0, n2...).
			call("a", fAcquire, "n1", "a", 10).call("b", fAcquire, "n2", "b", 11).call("c", fAcquire, "n1", "c", 12).
			ret("a", history.OpOK, fAcquire, 13).ret("c", history.OpOK, fAcquire, 20).ret("b", history.OpOK, fAcquire, 30).end(100).h(),
			True, "b's acquire at n2, asked at 0.011s, was granted at 0.030s, after c's, asked later at 0.012s and granted at 0.020s",
			map[string]any{"overtakes": 1, "contended_pairs": 3, "overtaken_grants": 1, "overtake_ratio": 0.33}},
		{"requests that never waited together", hist(n2...).starts(0, n2...).
			lockOK("a", fAcquire, "n1", "a", 10, 11).lockOK("b", fAcquire, "n2", "b", 20, 21).end(100).h(),
			True, "0 pairs", map[string]any{"contended_pairs": 0, "overtakes": 0}},
		{"timed-out and failed acquires are not grants", hist(n2...).starts(0, n2...).
			call("a", fAcquire, "n1", "a", 10).ret("a", history.OpInfo, fAcquire, 20).
			call("b", fAcquire, "n1", "b", 30).ret("b", history.OpFail, fAcquire, 40).end(100).h(),
			Unknown, "no acquire was granted", map[string]any{"grants": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "mutex-fairness", tt.h)
			if r.Valid != tt.want || !strings.Contains(r.Explanation, tt.words) {
				t.Errorf("got %v (%s), want %v with %q", r.Valid, r.Explanation, tt.want, tt.words)
			}
			for k, v := range tt.fig {
				if r.Figures[k] != v {
					t.Errorf("figure %s = %v, want %v", k, r.Figures[k], v)
				}
			}
		})
	}
}

// naiveFairness looks at every pair of grants.
func naiveFairness(gs []grant) (overtakes, contended, overtaken int) {
	for i, a := range gs {
		was := false
		for j, b := range gs {
			if j == i || b.invoke < a.invoke {
				continue
			}
			if b.invoke < a.done {
				contended++
			}
			if b.done < a.done {
				overtakes++
				was = true
			}
		}
		if was {
			overtaken++
		}
	}
	return overtakes, contended, overtaken
}

func TestMutexFairnessAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 2000; i++ {
		var evs []lockEvent
		for k := 0; k < rng.IntN(12); k++ {
			p := fmt.Sprintf("p%d", k)
			call := int64(1 + rng.IntN(50))
			evs = append(evs, lockEvent{t: call, process: p, typ: history.OpInvoke, f: fAcquire, node: "n1", owner: p})
			typ := history.OpOK
			if rng.IntN(5) == 0 {
				typ = history.OpInfo
			}
			evs = append(evs, lockEvent{t: call + 1 + int64(rng.IntN(30)), process: p, typ: typ, f: fAcquire})
		}
		h := lockHistory([]string{"n1"}, evs)
		gs := grants(h)
		o, c, v := naiveFairness(gs)
		fo, fc, fv, _, _ := fairness(gs)
		if o != fo || c != fc || v != fv {
			t.Fatalf("history %d: fast says overtakes %d, contended %d, overtaken %d; naive %d, %d, %d", i, fo, fc, fv, o, c, v)
		}
	}
}
