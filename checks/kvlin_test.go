package checks

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// retv records the completion of process's operation f with a value.
func (b *hb) retv(process, typ, f, value string, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindOp, Process: process, Type: typ, F: f, Value: value})
}

// The lin-kv operations as the workload records them.
func kvr(k int) string       { return fmt.Sprintf("[%d,null]", k) }
func kvv(k, v int) string    { return fmt.Sprintf("[%d,%d]", k, v) }
func kvc(k, a, b int) string { return fmt.Sprintf("[%d,[%d,%d]]", k, a, b) }

// write, read and cas record whole operations that returned ok.
func (b *hb) write(p, node string, k, v int, from, to int64) *hb {
	return b.call(p, fWrite, node, kvv(k, v), from).retv(p, history.OpOK, fWrite, kvv(k, v), to)
}
func (b *hb) read(p, node string, k int, v string, from, to int64) *hb {
	return b.call(p, fRead, node, kvr(k), from).retv(p, history.OpOK, fRead, fmt.Sprintf("[%d,%s]", k, v), to)
}
func (b *hb) cas(p, node string, k, x, y int, from, to int64) *hb {
	return b.call(p, fCas, node, kvc(k, x, y), from).retv(p, history.OpOK, fCas, kvc(k, x, y), to)
}

func TestKVLinearizableHandMade(t *testing.T) {
	n2 := []string{"n1", "n2"}
	base := func() *hb { return hist(n2...).starts(0, n2...) }
	tests := []struct {
		name  string
		h     *history.History
		want  Validity
		words string
	}{
		{"write then read", base().write("c1", "n1", 1, 3, 0, 10).read("c2", "n2", 1, "3", 20, 30).end(60).h(), True, "2 operations on 1 key are linearizable"},
		{"a read of nothing before any write", base().read("c2", "n2", 1, "null", 0, 5).write("c1", "n1", 1, 3, 10, 20).end(60).h(), True, "linearizable"},
		{"a stale read", base().write("c1", "n1", 1, 3, 0, 10).write("c1", "n1", 1, 4, 20, 30).read("c2", "n2", 1, "3", 40, 50).end(60).h(), False,
			"on key 1: the longest order porcupine can fit takes 2 of its 3 operations and leaves it holding 4 (c1's write of 4 to key 1 at n1, invoked at 0.020s), and c2's read of key 1 at n2, invoked at 0.040s and ok at 0.050s, returned 3: it cannot come after that"},
		{"a read of nothing after a write", base().write("c1", "n1", 1, 3, 0, 10).read("c2", "n2", 1, "null", 20, 30).end(60).h(), False, "returned nothing (no such key)"},
		{"concurrent write and read may go either way", base().
			call("c1", fWrite, "n1", kvv(1, 3), 0).read("c2", "n2", 1, "3", 1, 5).retv("c1", history.OpOK, fWrite, kvv(1, 3), 8).end(60).h(), True, "linearizable"},
		{"keys are independent", base().write("c1", "n1", 1, 3, 0, 10).write("c1", "n1", 2, 4, 20, 30).read("c2", "n2", 1, "3", 40, 50).read("c2", "n2", 2, "4", 60, 70).end(80).h(), True, "on 2 keys"},
		{"a cas from the value", base().write("c1", "n1", 0, 1, 0, 10).cas("c2", "n2", 0, 1, 2, 20, 30).read("c1", "n1", 0, "2", 40, 50).end(60).h(), True, "linearizable"},
		{"a cas from another value", base().write("c1", "n1", 0, 1, 0, 10).cas("c2", "n2", 0, 3, 2, 20, 30).end(60).h(), False, "a cas succeeds only when the key holds its from"},
		{"a failed cas did not happen", base().write("c1", "n1", 0, 1, 0, 10).
			call("c2", fCas, "n2", kvc(0, 1, 2), 20).retv("c2", history.OpFail, fCas, "precondition failed", 30).read("c1", "n1", 0, "1", 40, 50).end(60).h(), True, "1 failed"},
		{"a value that is not an integer", base().write("c1", "n1", 0, 1, 0, 10).read("c2", "n2", 0, `"\"1\""`, 20, 30).end(60).h(), False, `returned "\"1\""`},
		{"nothing to judge", base().end(60).h(), Unknown, "nothing to judge"},
		{"a value not in the workload's form", base().call("c1", fWrite, "n1", "[1]", 0).end(60).h(), Unknown, "not in the lin-kv workload's form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "kv-linearizable", tt.h)
			if r.Valid != tt.want || !strings.Contains(r.Explanation, tt.words) {
				t.Errorf("got %v (%s), want %v with %q", r.Valid, r.Explanation, tt.want, tt.words)
			}
			if (r.Valid == False) != (len(r.Files) == 1) {
				t.Errorf("%d files for a %v verdict, want the visualisation exactly when false", len(r.Files), r.Valid)
			}
			if r.Valid == False && len(r.Evidence) < 2 {
				t.Errorf("evidence %v: want at least the operation that cannot come next", indexes(r.Evidence))
			}
		})
	}
}

// The evidence of a stale read is the write that set the value and the
// read; the visualisation shows the leaders and the nemesis.
func TestKVLinearizableEvidence(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2"). // events 1, 2
							leaderIn("n1", "n1", 1, 0).                                                                                                       // 3
							write("c1", "n1", 1, 3, 0, 10).                                                                                                   // 4, 5
							add(history.Event{Time: ms(15), Kind: history.KindNemesis, What: "partition", Phase: history.PhaseStart, Nodes: []string{"n1"}}). // 6
							write("c1", "n2", 1, 4, 20, 30).                                                                                                  // 7, 8
							read("c2", "n1", 1, "3", 40, 50).                                                                                                 // 9, 10
							end(60).h()
	r := judge(t, "kv-linearizable", h)
	if got := fmt.Sprint(indexes(r.Evidence)); got != "[7 8 9 10]" {
		t.Errorf("evidence %s, want [7 8 9 10]", got)
	}
	if got := fmt.Sprint(r.Nodes); got != "[n1 n2]" {
		t.Errorf("nodes %s, want [n1 n2] (the read's node first)", got)
	}
	if len(r.Files) != 1 {
		t.Fatalf("%d files, want the visualisation", len(r.Files))
	}
	f := r.Files[0]
	page := string(f.Data)
	if f.Name != KVVisualisationFile || !strings.Contains(page, "<html") {
		t.Errorf("file %q does not look like porcupine's page", f.Name)
	}
	for _, want := range []string{"leader (term 1)", "partition start"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	if !strings.Contains(r.Explanation, KVVisualisationFile) {
		t.Errorf("explanation %q does not name the visualisation", r.Explanation)
	}
}

// A timed-out write may or may not have taken effect: a later read may
// see it, and a later read may not; but once one read has seen it, a
// later one cannot miss it.
func TestKVInfoBothWays(t *testing.T) {
	// c2's write of 2 ends as typ at 1s; reads adds what happens meanwhile.
	timedOut := func(typ string, reads func(b *hb) *hb) *history.History {
		b := hist("n1", "n2").starts(0, "n1", "n2").
			write("c1", "n1", 0, 1, 0, 10).
			call("c2", fWrite, "n2", kvv(0, 2), 20)
		return reads(b).retv("c2", typ, fWrite, "timed out", 1000).end(2000).h()
	}
	seen := func(b *hb) *hb { return b.read("c1", "n1", 0, "2", 30, 40) }
	notSeen := func(b *hb) *hb { return b.read("c1", "n1", 0, "1", 30, 40) }
	tests := []struct {
		name string
		h    *history.History
		want Validity
	}{
		{"seen", timedOut(history.OpInfo, seen), True},
		{"not seen", timedOut(history.OpInfo, notSeen), True},
		{"seen, then not seen", timedOut(history.OpInfo, func(b *hb) *hb { return seen(b).read("c1", "n1", 0, "1", 50, 60) }), False},
		{"not seen, then seen", timedOut(history.OpInfo, func(b *hb) *hb { return notSeen(b).read("c1", "n1", 0, "2", 50, 60) }), True},
		{"seen, though it failed", timedOut(history.OpFail, seen), False},
		{"not seen, and it failed", timedOut(history.OpFail, notSeen), True},
		{"left open by a killed run, seen", hist("n1").starts(0, "n1").write("c1", "n1", 0, 1, 0, 10).
			call("c2", fWrite, "n1", kvv(0, 2), 20).read("c1", "n1", 0, "2", 30, 40).h(), True},
		{"a timed-out cas seen", hist("n1").starts(0, "n1").write("c1", "n1", 0, 1, 0, 10).
			call("c2", fCas, "n1", kvc(0, 1, 5), 20).read("c1", "n1", 0, "5", 30, 40).retv("c2", history.OpInfo, fCas, "timed out", 1000).end(2000).h(), True},
		{"a timed-out cas that could not apply seen", hist("n1").starts(0, "n1").write("c1", "n1", 0, 1, 0, 10).
			call("c2", fCas, "n1", kvc(0, 3, 5), 20).read("c1", "n1", 0, "5", 30, 40).retv("c2", history.OpInfo, fCas, "timed out", 1000).end(2000).h(), False},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "kv-linearizable", tt.h)
			if r.Valid != tt.want {
				t.Errorf("got %v (%s), want %v", r.Valid, r.Explanation, tt.want)
			}
			if want := naiveKV(tt.h); (r.Valid == True) != want {
				t.Errorf("the naive search says %v", want)
			}
		})
	}
}

// naiveKV tries every order of the operations that respects real time,
// and for each timed-out write or cas both whether it took effect and
// where, on one store holding every key. It parses the history's values
// itself.
func naiveKV(h *history.History) bool {
	type nop struct {
		f         string
		key       int64
		arg, to   int64
		read      string // an ok read's value, as recorded
		call, ret int64
		known     bool
	}
	var ops []nop
	open := map[string]int{}
	for _, e := range h.Events {
		if e.Kind != history.KindOp || (e.F != fRead && e.F != fWrite && e.F != fCas) {
			continue
		}
		if e.Type == history.OpInvoke {
			var v []json.RawMessage
			if json.Unmarshal([]byte(e.Value), &v) != nil || len(v) != 2 {
				v = []json.RawMessage{nil, nil} // not judged: kvOps refuses it
			}
			o := nop{f: e.F, call: e.Time, ret: 1 << 62}
			_ = json.Unmarshal(v[0], &o.key)
			switch e.F {
			case fWrite:
				_ = json.Unmarshal(v[1], &o.arg)
			case fCas:
				var ft [2]int64
				_ = json.Unmarshal(v[1], &ft)
				o.arg, o.to = ft[0], ft[1]
			}
			open[e.Process] = len(ops)
			ops = append(ops, o)
			continue
		}
		i, ok := open[e.Process]
		if !ok || ops[i].f != e.F {
			continue
		}
		delete(open, e.Process)
		switch e.Type {
		case history.OpOK:
			ops[i].ret, ops[i].known = e.Time, true
			if e.F == fRead {
				var v []json.RawMessage
				if json.Unmarshal([]byte(e.Value), &v) == nil && len(v) == 2 {
					ops[i].read = string(v[1])
				}
			}
		case history.OpFail:
			ops[i].f = "" // never happened
		}
	}
	var kept []nop
	for _, o := range ops {
		if o.f != "" && (o.known || o.f != fRead) {
			kept = append(kept, o)
		}
	}
	ops = kept
	store := map[int64]int64{}
	used := make([]bool, len(ops))
	var try func(done int) bool
	try = func(done int) bool {
		if done == len(ops) {
			return true
		}
		for i, o := range ops {
			if used[i] {
				continue
			}
			first := true
			for j, p := range ops {
				if !used[j] && j != i && p.ret < o.call {
					first = false
					break
				}
			}
			if !first {
				continue
			}
			used[i] = true
			old, had := store[o.key]
			legal := false
			switch o.f {
			case fWrite:
				store[o.key], legal = o.arg, true
			case fCas:
				if had && old == o.arg {
					store[o.key], legal = o.to, true
				}
			case fRead:
				legal = (o.read == "null" && !had) || (had && o.read == fmt.Sprint(old))
			}
			if legal && try(done+1) {
				return true
			}
			if had {
				store[o.key] = old
			} else {
				delete(store, o.key)
			}
			if !o.known && try(done+1) {
				return true
			}
			used[i] = false
		}
		return false
	}
	return try(0)
}

// randomKVHistory runs a store of two keys with a few clients and
// perturbs it: some reads return a stale or wrong value, some writes are
// lost, some operations are reported with the wrong outcome. Each
// operation gets its own process, and operations overlap.
func randomKVHistory(rng *rand.Rand, n int) *history.History {
	b := hist("n1").starts(0, "n1")
	store := map[int]int{}
	type ev struct {
		t              int64
		process, f, tp string
		value          string
	}
	var evs []ev
	for k := range n {
		p := int64(10 * (k + 1))
		key := rng.IntN(2)
		process := fmt.Sprintf("p%d", k)
		var f, inv, res string
		switch rng.IntN(3) {
		case 0:
			f, inv = fRead, kvr(key)
			v, ok := store[key]
			res = kvv(key, v)
			if !ok {
				res = fmt.Sprintf("[%d,null]", key)
			}
			if rng.IntN(6) == 0 {
				res = kvv(key, rng.IntN(3))
			}
		case 1:
			v := rng.IntN(3)
			f, inv, res = fWrite, kvv(key, v), kvv(key, v)
			if rng.IntN(8) > 0 {
				store[key] = v
			}
		default:
			a, c := rng.IntN(3), rng.IntN(3)
			f, inv, res = fCas, kvc(key, a, c), kvc(key, a, c)
			if v, ok := store[key]; (ok && v == a) || rng.IntN(8) == 0 {
				store[key] = c
			}
		}
		typ := history.OpOK
		switch rng.IntN(10) {
		case 0, 1:
			typ, res = history.OpInfo, "timed out"
		case 2:
			typ, res = history.OpFail, "failed"
		}
		call, ret := max(p-rng.Int64N(25), 1), p+rng.Int64N(25)
		evs = append(evs, ev{t: call, process: process, f: f, tp: history.OpInvoke, value: inv})
		if typ != history.OpInfo || rng.IntN(2) == 0 {
			evs = append(evs, ev{t: ret, process: process, f: f, tp: typ, value: res})
		}
	}
	for i := 1; i < len(evs); i++ { // in time order, stably
		for j := i; j > 0 && evs[j].t < evs[j-1].t; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
	for _, e := range evs {
		b.add(history.Event{Time: ms(e.t), Kind: history.KindOp, Process: e.process, Type: e.tp, F: e.f, Node: "n1", Value: e.value})
	}
	return b.end(evs[len(evs)-1].t + 10).h()
}

// Porcupine, with the operations the check leaves out, and the naive
// search agree on random small histories.
func TestKVLinearizableAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	verdicts := map[bool]int{}
	leftOut := 0
	for i := range 800 {
		h := randomKVHistory(rng, 1+rng.IntN(7))
		want := naiveKV(h)
		r := judge(t, "kv-linearizable", h)
		if r.Valid == Unknown {
			if r.Figures["operations"] != 0 {
				t.Fatalf("history %d: unknown with operations to judge (%s)\n%s", i, r.Explanation, dump(h))
			}
			continue
		}
		leftOut += r.Figures["left_out"].(int)
		verdicts[want]++
		if (r.Valid == True) != want {
			t.Fatalf("history %d: porcupine says %v (%s), the naive search %v\n%s", i, r.Valid, r.Explanation, want, dump(h))
		}
	}
	if verdicts[true] < 150 || verdicts[false] < 150 {
		t.Errorf("the random histories are too one-sided: %v", verdicts)
	}
	if leftOut < 50 {
		t.Errorf("only %d timed-out operations were left out: the random histories do not exercise kvRelevant", leftOut)
	}
	t.Logf("%v; %d timed-out operations left out", verdicts, leftOut)
}

// FuzzKVLinearizable judges any small history the fuzzer finds, and
// compares the verdict with the naive search's when every lin-kv value is
// in the workload's form.
func FuzzKVLinearizable(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20 {
		h := randomKVHistory(rng, 1+rng.IntN(6))
		var sb strings.Builder
		for _, e := range h.Events {
			line, _ := json.Marshal(e)
			sb.Write(line)
			sb.WriteByte('\n')
		}
		f.Add(sb.String())
	}
	f.Fuzz(func(t *testing.T, text string) {
		h, err := history.Read(strings.NewReader(text))
		if err != nil {
			return
		}
		h = h.Expanded()
		ops, bad, _ := kvOps(h)
		if len(ops) > 8 || hasBackwards(h) {
			return
		}
		c, _ := Lookup("kv-linearizable")
		r := c.Run(h)
		if r.Valid != True && r.Explanation == "" {
			t.Fatalf("%v without an explanation", r.Valid)
		}
		if bad != nil || r.Valid == Unknown || naiveUnjudgeable(h) {
			return
		}
		if want := naiveKV(h); (r.Valid == True) != want {
			t.Fatalf("porcupine says %v (%s), the naive search %v", r.Valid, r.Explanation, want)
		}
	})
}

// Timed-out writes open to the end of the history, each seen by a later
// read (so that none can be left out), then a stale read: porcupine must
// try the timed-out writes in many orders before it can say false. The
// cost grows fast with their number, which is why kvRelevant leaves out
// every timed-out write it can.
func BenchmarkKVLinearizableRelevantInfos(b *testing.B) {
	for _, k := range []int{4, 8, 12} {
		b.Run(fmt.Sprint(k), func(b *testing.B) {
			bld := hist("n1", "n2").starts(0, "n1", "n2").write("c1", "n1", 0, 1, 0, 5)
			for i := range k {
				bld.call(fmt.Sprintf("t%d", i), fWrite, "n1", kvv(0, 10+i), int64(10+i))
			}
			for i := range k {
				bld.retv(fmt.Sprintf("t%d", i), history.OpInfo, fWrite, "timed out", int64(200+i))
			}
			for i := range k { // the values read in an order of their own
				bld.read("r", "n2", 0, fmt.Sprint(10+(i*7)%k), int64(300+10*i), int64(305+10*i))
			}
			h := bld.write("c1", "n1", 0, 7, 600, 610).read("c2", "n2", 0, "1", 620, 630).end(700).h()
			c, _ := Lookup("kv-linearizable")
			for b.Loop() {
				if r := c.Run(h); r.Valid != False {
					b.Fatalf("got %v (%s), want false", r.Valid, r.Explanation)
				}
			}
		})
	}
}

// Timed-out writes that cannot matter (nothing reads their values) around
// a stale read: the check leaves them out and decides at once.
func BenchmarkKVLinearizableIrrelevantInfos(b *testing.B) {
	bld := hist("n1", "n2").starts(0, "n1", "n2").write("c1", "n1", 0, 1, 0, 5)
	const infos = 100
	for i := range infos {
		bld.call(fmt.Sprintf("t%d", i), fWrite, "n1", kvv(0, 10+i), int64(10+i))
	}
	for i := range infos {
		bld.retv(fmt.Sprintf("t%d", i), history.OpInfo, fWrite, "timed out", int64(200+i))
	}
	h := bld.write("c1", "n1", 0, 7, 400, 410).read("c2", "n2", 0, "1", 420, 430).end(700).h()
	c, _ := Lookup("kv-linearizable")
	for b.Loop() {
		if r := c.Run(h); r.Valid != False {
			b.Fatalf("got %v (%s), want false", r.Valid, r.Explanation)
		}
	}
}
