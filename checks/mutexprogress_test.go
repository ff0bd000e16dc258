package checks

import (
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestMutexProgressHandMade(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	base := func() *hb { return hist(n3...).progress(100).starts(0, n3...) }
	tests := []struct {
		name  string
		h     *history.History
		want  Validity
		words string
		nodes []string
		fig   map[string]any
	}{
		{"every acquire granted in time", base().
			call("c1", fAcquire, "n1", "c1", 10).call("c2", fAcquire, "n2", "c2", 15).ret("c1", history.OpOK, fAcquire, 20).
			lockOK("c1", fRelease, "n1", "c1", 30, 31).ret("c2", history.OpOK, fAcquire, 40).end(300).h(),
			True, "every one of the 2 acquires invoked after the start of the history was granted within 100ms", nil,
			map[string]any{"judged": 2, "granted": 2}},
		{"an acquire after a crash times out", base().
			nemesis("crash", history.PhaseStart, 50, "n3").crash("n3", 50).
			call("c1", fAcquire, "n1", "c1", 60).ret("c1", history.OpInfo, fAcquire, 160).end(300).h(),
			False, "the first, c1's acquire at n1 invoked at 0.060s, was timed out at 0.160s", []string{"n1"},
			map[string]any{"judged": 1, "not_granted": 1}},
		{"granted, but too late", base().
			lockOK("c1", fAcquire, "n1", "c1", 10, 150).end(300).h(),
			False, "granted only at 0.150s, 140ms after it was asked", []string{"n1"}, nil},
		{"refused", base().
			call("c1", fAcquire, "n1", "c1", 10).ret("c1", history.OpFail, fAcquire, 20).end(300).h(),
			False, "was refused at 0.020s", []string{"n1"}, nil},
		{"never answered", base().
			call("c1", fAcquire, "n1", "c1", 10).end(300).h(),
			False, "was no answer before the history ended", []string{"n1"}, nil},
		{"acquires before the last fault are not judged", base().
			call("c1", fAcquire, "n1", "c1", 10).nemesis("crash", history.PhaseStart, 50, "n3").crash("n3", 50).
			lockOK("c2", fAcquire, "n2", "c2", 60, 70).end(300).h(),
			True, "every one of the 1 acquire", nil, map[string]any{"judged": 1}},
		{"acquires at a crashed node are not judged", base().
			nemesis("crash", history.PhaseStart, 50, "n3").crash("n3", 50).
			call("c3", fAcquire, "n3", "c3", 60).lockOK("c2", fAcquire, "n2", "c2", 60, 70).end(300).h(),
			True, "granted within 100ms", nil, map[string]any{"judged": 1, "at_unavailable_nodes": 1}},
		{"acquires at a paused node are not judged", base().
			nemesis("pause", history.PhaseStart, 50, "n3").pause("n3", 50).
			call("c3", fAcquire, "n3", "c3", 60).lockOK("c2", fAcquire, "n2", "c2", 60, 70).end(300).h(),
			True, "granted within 100ms", nil, map[string]any{"judged": 1, "at_unavailable_nodes": 1}},
		{"too close to the end to judge", base().
			call("c1", fAcquire, "n1", "c1", 250).end(300).h(),
			Unknown, "no acquire could be judged", nil, nil},
		{"the shutdown ends the observation", base().
			call("c1", fAcquire, "n1", "c1", 250).ret("c1", history.OpInfo, fAcquire, 340).
			stop("n1", 340).stop("n2", 341).stop("n3", 342).end(500).h(),
			Unknown, "before the history's end at 0.340s", nil, nil},
		{"the default bound is a second", hist(n3...).starts(0, n3...).
			lockOK("c1", fAcquire, "n1", "c1", 10, 900).end(2000).h(),
			True, "within 1s", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "mutex-progress", tt.h)
			if r.Valid != tt.want || !strings.Contains(r.Explanation, tt.words) {
				t.Errorf("got %v (%s), want %v with %q", r.Valid, r.Explanation, tt.want, tt.words)
			}
			if !slices.Equal(r.Nodes, tt.nodes) {
				t.Errorf("nodes %v, want %v", r.Nodes, tt.nodes)
			}
			for k, v := range tt.fig {
				if r.Figures[k] != v {
					t.Errorf("figure %s = %v, want %v", k, r.Figures[k], v)
				}
			}
		})
	}
}
