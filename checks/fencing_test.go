package checks

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/coupharness/coup/history"
)

// granted records an acquire's ok with a fencing token.
func (b *hb) granted(process string, token int64, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindOp, Process: process, Type: history.OpOK, F: fAcquire, Token: &token})
}

func TestFencing(t *testing.T) {
	tests := []struct {
		name string
		h    *history.History
		want Validity
	}{
		{"increasing tokens, one holder at a time", hist("n1", "n2").
			call("c1", fAcquire, "n1", "c1", 10).granted("c1", 10, 11).call("c1", fRelease, "n1", "c1", 20).ret("c1", history.OpOK, fRelease, 21).
			call("c2", fAcquire, "n2", "c2", 22).granted("c2", 12, 23).end(100).h(), True},
		// A holder paused past its lease: c2 is granted while c1 still
		// holds, with a higher token, so a fenced resource refuses c1.
		{"increasing tokens, two holders at once", hist("n1", "n2").
			call("c1", fAcquire, "n1", "c1", 10).granted("c1", 10, 11).
			call("c2", fAcquire, "n2", "c2", 12).granted("c2", 12, 30).
			call("c1", fRelease, "n1", "c1", 40).ret("c1", history.OpOK, fRelease, 41).end(100).h(), True},
		{"a token that goes backwards", hist("n1", "n2").
			call("c1", fAcquire, "n1", "c1", 10).granted("c1", 12, 11).call("c1", fRelease, "n1", "c1", 20).ret("c1", history.OpOK, fRelease, 21).
			call("c2", fAcquire, "n2", "c2", 22).granted("c2", 10, 23).end(100).h(), False},
		// Acquires that overlap may have been granted in either order.
		{"overlapping acquires, tokens out of order", hist("n1", "n2").
			call("c1", fAcquire, "n1", "c1", 10).call("c2", fAcquire, "n2", "c2", 11).
			granted("c2", 12, 20).granted("c1", 10, 21).end(100).h(), True},
		{"the same token twice", hist("n1", "n2").
			call("c1", fAcquire, "n1", "c1", 10).call("c2", fAcquire, "n2", "c2", 11).
			granted("c1", 12, 20).granted("c2", 12, 21).end(100).h(), False},
		{"no tokens", hist("n1").
			call("c1", fAcquire, "n1", "c1", 10).ret("c1", history.OpOK, fAcquire, 11).end(100).h(), Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "fencing", tt.h)
			if r.Valid != tt.want {
				t.Errorf("got %s (%s), want %s", r.Valid, r.Explanation, tt.want)
			}
			if r.Valid == False && len(r.Evidence) != 4 {
				t.Errorf("evidence %v, want both grants' invocations and oks", r.Evidence)
			}
		})
	}
}

// naiveFencing compares every pair of grants.
func naiveFencing(h *history.History) Validity {
	gs, _ := grantsOf(h)
	if len(gs) == 0 {
		return Unknown
	}
	for _, a := range gs {
		for _, b := range gs {
			if a == b {
				continue
			}
			if a.token == b.token || (a.done.Index < b.invoke.Index && b.token < a.token) {
				return False
			}
		}
	}
	return True
}

// The sweep agrees with every pair compared, on random lock histories:
// clients acquiring at random, tokens mostly increasing, now and then one
// reused or lowered.
func TestFencingAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	counts := map[Validity]int{}
	for round := range 2000 {
		b := hist("n1", "n2", "n3")
		procs := []string{"c1", "c2", "c3", "c4"}
		open := map[string]bool{}
		token := int64(0)
		var tm int64
		for range 4 + rng.IntN(12) {
			tm++
			p := procs[rng.IntN(len(procs))]
			if !open[p] {
				b.call(p, fAcquire, "n1", p, tm)
				open[p] = true
				continue
			}
			open[p] = false
			token += int64(rng.IntN(3))
			if rng.IntN(20) == 0 {
				token -= int64(rng.IntN(3))
			}
			if rng.IntN(10) == 0 {
				b.ret(p, history.OpOK, fAcquire, tm) // no token
				continue
			}
			b.granted(p, token, tm)
		}
		h := b.end(tm + 1).h()
		got, want := fencing(h).Valid, naiveFencing(h)
		if got != want {
			t.Fatalf("round %d: sweep %s, naive %s", round, got, want)
		}
		counts[got]++
	}
	if counts[True] == 0 || counts[False] == 0 || counts[Unknown] == 0 {
		t.Errorf("the random histories did not cover every verdict: %v", counts)
	}
}

// A hold's step carries its grant's fencing token, for the report's lock
// lanes; a grant without one has none.
func TestLockLanesCarryTokens(t *testing.T) {
	h := hist("n1", "n2").
		call("c1", fAcquire, "n1", "c1", 10).granted("c1", 7, 11).
		call("c2", fAcquire, "n2", "c2", 12).ret("c2", history.OpOK, fAcquire, 13).end(100).h()
	l := BuildLockLanes(h)
	tokens := map[string]string{}
	for _, ln := range l.Lanes {
		for _, s := range ln.Steps {
			if s.What != StepHold {
				continue
			}
			tokens[ln.Process] = "none"
			if s.Token != nil {
				tokens[ln.Process] = fmt.Sprint(*s.Token)
			}
		}
	}
	if tokens["c1"] != "7" || tokens["c2"] != "none" {
		t.Errorf("hold tokens %v, want c1 7 and c2 none", tokens)
	}
}
