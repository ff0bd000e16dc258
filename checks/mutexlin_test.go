package checks

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// lockOK records a whole operation that returned ok.
func (b *hb) lockOK(process, f, node, owner string, from, to int64) *hb {
	return b.call(process, f, node, owner, from).ret(process, history.OpOK, f, to)
}

func TestMutexLinearizableHandMade(t *testing.T) {
	n2 := []string{"n1", "n2"}
	tests := []struct {
		name  string
		h     *history.History
		want  Validity
		words string // part of the explanation
	}{
		{"one after the other", hist(n2...).starts(0, n2...).
			lockOK("c1", fAcquire, "n1", "c1", 0, 10).lockOK("c1", fRelease, "n1", "c1", 20, 30).
			lockOK("c2", fAcquire, "n2", "c2", 35, 40).lockOK("c2", fRelease, "n2", "c2", 45, 50).end(60).h(), True, "linearizable"},
		{"a waiting acquire granted after the release", hist(n2...).starts(0, n2...).
			lockOK("c1", fAcquire, "n1", "c1", 0, 10).call("c2", fAcquire, "n2", "c2", 12).
			lockOK("c1", fRelease, "n1", "c1", 20, 30).ret("c2", history.OpOK, fAcquire, 31).end(60).h(), True, "linearizable"},
		{"overlapping windows may go either way", hist(n2...).starts(0, n2...).
			call("c1", fAcquire, "n1", "c1", 0).call("c2", fAcquire, "n2", "c2", 1).
			ret("c2", history.OpOK, fAcquire, 5).lockOK("c2", fRelease, "n2", "c2", 6, 7).ret("c1", history.OpOK, fAcquire, 8).end(60).h(), True, "linearizable"},
		{"granted twice", hist(n2...).starts(0, n2...).
			lockOK("c1", fAcquire, "n1", "c1", 0, 10).lockOK("c2", fAcquire, "n2", "c2", 20, 30).end(60).h(), False, "leaves the lock held by c1 (acquired through n1, invoked at 0.000s), and c2's acquire(c2) at n2, invoked at 0.020s and ok at 0.030s, cannot come after it: an acquire succeeds only when the lock is free"},
		{"released by another owner", hist(n2...).starts(0, n2...).
			lockOK("c1", fAcquire, "n1", "c1", 0, 10).lockOK("c2", fRelease, "n2", "c2", 20, 30).end(60).h(), False, "leaves the lock held by c1 (acquired through n1, invoked at 0.000s), and c2's release(c2) at n2, invoked at 0.020s and ok at 0.030s, cannot come after it: only the holder can release the lock"},
		{"released when free", hist(n2...).starts(0, n2...).
			lockOK("c1", fRelease, "n1", "c1", 0, 10).end(60).h(), False, "leaves the lock free"},
		{"a failed acquire did not happen", hist(n2...).starts(0, n2...).
			lockOK("c1", fAcquire, "n1", "c1", 0, 10).call("c2", fAcquire, "n2", "c2", 20).ret("c2", history.OpFail, fAcquire, 30).end(60).h(), True, "1 failed"},
		{"a timed-out acquire may not have happened", hist(n2...).starts(0, n2...).
			call("c1", fAcquire, "n1", "c1", 0).ret("c1", history.OpInfo, fAcquire, 100).
			lockOK("c2", fAcquire, "n2", "c2", 110, 120).end(200).h(), True, "1 timed out"},
		{"an acquire left open by a killed run may not have happened", hist(n2...).starts(0, n2...).
			call("c1", fAcquire, "n1", "c1", 0).lockOK("c2", fAcquire, "n2", "c2", 110, 120).h(), True, "1 timed out"},
		{"a timed-out release may have happened", hist(n2...).starts(0, n2...).
			lockOK("c1", fAcquire, "n1", "c1", 0, 10).call("c1", fRelease, "n1", "c1", 20).ret("c1", history.OpInfo, fRelease, 120).
			lockOK("c2", fAcquire, "n2", "c2", 130, 140).end(200).h(), True, "linearizable"},
		{"nothing to judge", hist(n2...).starts(0, n2...).end(60).h(), Unknown, "nothing to judge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "mutex-linearizable", tt.h)
			if r.Valid != tt.want || !strings.Contains(r.Explanation, tt.words) {
				t.Errorf("got %v (%s), want %v with %q", r.Valid, r.Explanation, tt.want, tt.words)
			}
			if (r.Valid == False) != (len(r.Files) == 1) {
				t.Errorf("%d files for a %v verdict, want the visualisation exactly when false", len(r.Files), r.Valid)
			}
			if r.Valid == False && len(r.Evidence) < 2 {
				t.Errorf("evidence %v: want at least the operation that cannot take effect", indexes(r.Evidence))
			}
		})
	}
}

// The evidence of a double grant is the second acquire and the first.
func TestMutexLinearizableEvidence(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").
		lockOK("c1", fAcquire, "n1", "c1", 0, 10).  // events 3, 4
		lockOK("c2", fAcquire, "n2", "c2", 20, 30). // events 5, 6
		end(60).h()
	r := judge(t, "mutex-linearizable", h)
	if got := fmt.Sprint(indexes(r.Evidence)); got != "[3 4 5 6]" {
		t.Errorf("evidence %s, want [3 4 5 6]", got)
	}
	if got := fmt.Sprint(r.Nodes); got != "[n2 n1]" {
		t.Errorf("nodes %s, want [n2 n1]", got)
	}
	f := r.Files[0]
	if f.Name != VisualisationFile || !strings.Contains(string(f.Data), "<html") {
		t.Errorf("file %q does not look like porcupine's page", f.Name)
	}
	if !strings.Contains(r.Explanation, VisualisationFile) {
		t.Errorf("explanation %q does not name the visualisation", r.Explanation)
	}
}

// A timed-out operation may or may not have taken effect. The first
// history is linearizable only if c1's timed-out acquire took effect: the
// client, continuing as process c3, released the lock for owner c1, and
// the node said ok. The second is linearizable neither way: if c1's
// acquire took effect before c2's, c2 could not have acquired; after it,
// c1 could not have; and if it never took effect, c1's release could not
// have succeeded.
func TestInfoOperations(t *testing.T) {
	onlyIfApplied := func(typ string) *history.History {
		return hist("n1", "n2").starts(0, "n1", "n2").
			call("c1", fAcquire, "n1", "c1", 0).ret("c1", typ, fAcquire, 100).
			lockOK("c3", fRelease, "n1", "c1", 110, 120).
			lockOK("c2", fAcquire, "n2", "c2", 130, 140).end(200).h()
	}
	if r := judge(t, "mutex-linearizable", onlyIfApplied(history.OpInfo)); r.Valid != True {
		t.Errorf("linearizable if the timed-out acquire took effect: got %v (%s)", r.Valid, r.Explanation)
	}
	// The same history with the acquire failed (surely not applied) is not
	// linearizable: the difference is the info.
	if r := judge(t, "mutex-linearizable", onlyIfApplied(history.OpFail)); r.Valid != False {
		t.Errorf("with the acquire failed instead: got %v (%s), want false", r.Valid, r.Explanation)
	}
	neither := hist("n1", "n2").starts(0, "n1", "n2").
		call("c1", fAcquire, "n1", "c1", 0).
		lockOK("c2", fAcquire, "n2", "c2", 10, 20).
		ret("c1", history.OpInfo, fAcquire, 100).
		lockOK("c3", fRelease, "n1", "c1", 110, 120).end(200).h()
	if r := judge(t, "mutex-linearizable", neither); r.Valid != False {
		t.Errorf("linearizable neither way: got %v (%s), want false", r.Valid, r.Explanation)
	}
}

// naiveLinearizable tries every order of the operations that respects real
// time (a before b whenever a returned before b was invoked), and for each
// timed-out operation both whether it took effect and where.
func naiveLinearizable(h *history.History) bool {
	type nop struct {
		f, owner  string
		call, ret int64
		known     bool
	}
	var ops []nop
	for _, o := range lockOps(h) {
		n := nop{f: o.f, owner: o.owner, call: h.Events[o.invoke].Time, ret: 1 << 62}
		switch o.outcome(h) {
		case history.OpFail:
			continue
		case history.OpOK:
			n.ret, n.known = h.Events[o.done].Time, true
		}
		ops = append(ops, n)
	}
	used := make([]bool, len(ops))
	var try func(holder string, done int) bool
	try = func(holder string, done int) bool {
		if done == len(ops) {
			return true
		}
		for i, o := range ops {
			if used[i] {
				continue
			}
			// o may go next only if no unused operation returned before it
			// was invoked.
			ok := true
			for j, p := range ops {
				if !used[j] && j != i && p.ret < o.call {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			used[i] = true
			next, legal := holder, false
			switch o.f {
			case fAcquire:
				next, legal = o.owner, holder == ""
			case fRelease:
				next, legal = "", holder == o.owner
			}
			if legal && try(next, done+1) {
				used[i] = false
				return true
			}
			if !o.known && try(holder, done+1) {
				used[i] = false
				return true
			}
			used[i] = false
		}
		return false
	}
	return try("", 0)
}

// randomLockHistory runs a lock with a few clients and perturbs it: some
// operations happen although they should not, some are reported with the
// wrong outcome. Each operation gets its own process.
func randomLockHistory(rng *rand.Rand, n int) *history.History {
	owners := []string{"a", "b", "c"}
	holder := ""
	var evs []lockEvent
	for k := 0; k < n; k++ {
		p := int64(10 * (k + 1))
		owner := owners[rng.IntN(len(owners))]
		f := fAcquire
		if holder != "" && rng.IntN(3) > 0 {
			f, owner = fRelease, holder
		}
		if rng.IntN(6) == 0 {
			owner = owners[rng.IntN(len(owners))] // a release or acquire that may be wrong
		}
		if next, legal := lockStep(holder, lockInput{f: f, owner: owner}); legal || rng.IntN(4) == 0 {
			holder = next
		}
		typ := history.OpOK
		switch rng.IntN(10) {
		case 0, 1:
			typ = history.OpInfo
		case 2:
			typ = history.OpFail
		}
		process := fmt.Sprintf("p%d", k)
		call, ret := p-rng.Int64N(25), p+rng.Int64N(25)
		evs = append(evs, lockEvent{t: max(call, 1), process: process, typ: history.OpInvoke, f: f, node: "n1", owner: owner})
		if typ != history.OpInfo || rng.IntN(2) == 0 {
			evs = append(evs, lockEvent{t: ret, process: process, typ: typ, f: f})
		}
	}
	return lockHistory([]string{"n1"}, evs)
}

// Porcupine and the naive search agree on random small histories.
func TestMutexLinearizableAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	verdicts := map[bool]int{}
	for i := 0; i < 600; i++ {
		h := randomLockHistory(rng, 1+rng.IntN(7))
		want := naiveLinearizable(h)
		r := judge(t, "mutex-linearizable", h)
		if r.Figures["operations"] == 0 && r.Figures["left_out"] == 0 {
			if r.Valid != Unknown {
				t.Fatalf("history %d has only failed operations: got %v, want unknown", i, r.Valid)
			}
			continue
		}
		verdicts[want]++
		if (r.Valid == True) != want || r.Valid == Unknown {
			t.Fatalf("history %d: porcupine says %v (%s), the naive search %v\n%s", i, r.Valid, r.Explanation, want, dump(h))
		}
	}
	if verdicts[true] < 100 || verdicts[false] < 100 {
		t.Errorf("the random histories are too one-sided: %v", verdicts)
	}
}

func dump(h *history.History) string {
	var b strings.Builder
	for _, e := range h.Events {
		if e.Kind == history.KindOp {
			fmt.Fprintf(&b, "  %4dms %s %s %s %s\n", e.Time/1e6, e.Process, e.Type, e.F, e.Value)
		}
	}
	return b.String()
}

// Many timed-out operations open to the end of the history, around a
// double grant: porcupine still decides, within its budget.
func BenchmarkMutexLinearizableManyInfos(b *testing.B) {
	bld := hist("n1", "n2").starts(0, "n1", "n2")
	const infos = 24
	for i := 0; i < infos; i++ {
		p := fmt.Sprintf("t%d", i)
		bld.call(p, fAcquire, "n1", p, int64(10+i))
	}
	for i := 0; i < infos; i++ {
		bld.ret(fmt.Sprintf("t%d", i), history.OpInfo, fAcquire, int64(200+i))
	}
	h := bld.lockOK("c1", fAcquire, "n1", "c1", 300, 310).lockOK("c2", fAcquire, "n2", "c2", 320, 330).end(400).h()
	c, _ := Lookup("mutex-linearizable")
	for b.Loop() {
		if r := c.Run(h); r.Valid != False {
			b.Fatalf("got %v (%s), want false", r.Valid, r.Explanation)
		}
	}
}

// Timed-out acquires that matter: every client's acquire timed out, and
// each later released the lock it had after all, one after the other; then
// a double grant. Porcupine must try the timed-out acquires in many
// orders.
func BenchmarkMutexLinearizableRelevantInfos(b *testing.B) {
	for _, k := range []int{4, 8, 10} {
		b.Run(fmt.Sprint(k), func(b *testing.B) {
			bld := hist("n1", "n2").starts(0, "n1", "n2")
			for i := 0; i < k; i++ {
				p := fmt.Sprintf("t%d", i)
				bld.call(p, fAcquire, "n1", p, int64(10+i))
			}
			for i := 0; i < k; i++ {
				bld.ret(fmt.Sprintf("t%d", i), history.OpInfo, fAcquire, int64(100+i))
			}
			for i := 0; i < k; i++ {
				p := fmt.Sprintf("t%d", i)
				bld.lockOK("r"+p, fRelease, "n1", p, int64(200+10*i), int64(205+10*i))
			}
			h := bld.lockOK("c1", fAcquire, "n1", "c1", 1000, 1010).lockOK("c2", fAcquire, "n2", "c2", 1020, 1030).end(2000).h()
			c, _ := Lookup("mutex-linearizable")
			for b.Loop() {
				if r := c.Run(h); r.Valid != False {
					b.Fatalf("got %v (%s), want false", r.Valid, r.Explanation)
				}
			}
		})
	}
}

// A real server's grants carry fencing tokens and a lease; a holder whose
// release found its lease expired says so. The evidence of two holders
// names both tokens, the holder's lease, and the expiry its release found,
// and holds that release; a grant without a token adds nothing.
func TestMutexLinearizableEvidenceOfAnExpiredLease(t *testing.T) {
	tok := func(n int64) *int64 { return &n }
	build := func(withTokens bool) *history.History {
		b := hist("n1", "n2").starts(0, "n1", "n2").
			call("c1", fAcquire, "n1", "c1", 0)
		okEvent := func(process string, at int64, token int64, value string) history.Event {
			e := history.Event{Time: ms(at), Kind: history.KindOp, Process: process, Type: history.OpOK, F: fAcquire, Value: value}
			if withTokens {
				e.Token = tok(token)
			}
			return e
		}
		b.add(okEvent("c1", 10, 2, "lease 51617 ttl 2s")).
			call("c2", fAcquire, "n2", "c2", 20).
			add(okEvent("c2", 30, 4, "lease 51618 ttl 2s")).
			call("c1", fRelease, "n1", "c1", 40).
			add(history.Event{Time: ms(50), Kind: history.KindOp, Process: "c1", Type: history.OpOK, F: fRelease, Value: "lease 51617 had expired before the release"})
		return b.end(60).h()
	}
	r := judge(t, "mutex-linearizable", build(true))
	if r.Valid != False {
		t.Fatalf("verdict %v, want false: %s", r.Valid, r.Explanation)
	}
	for _, want := range []string{"invoked at 0.000s; token 2, lease 51617 ttl 2s)", "ok at 0.030s (token 4, lease 51618 ttl 2s)", "c1's release of it at 0.050s: lease 51617 had expired before the release"} {
		if !strings.Contains(r.Explanation, want) {
			t.Errorf("explanation %q lacks %q", r.Explanation, want)
		}
	}
	if got := fmt.Sprint(indexes(r.Evidence)); got != "[3 4 5 6 7 8]" {
		t.Errorf("evidence %s, want [3 4 5 6 7 8] (both grants and the release)", got)
	}
	r = judge(t, "mutex-linearizable", build(false))
	if strings.Contains(r.Explanation, "token") {
		t.Errorf("grants without tokens: explanation %q names a token", r.Explanation)
	}
}
