package checks

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// The set workload's operations as the workload records them: an add's
// value is its element; a read's invocation has none, its ok the elements.

// sadd records a whole add of elem by p at node, ending typ ("" leaves it
// open).
func (b *hb) sadd(p, node string, elem int, typ string, from, to int64) *hb {
	b.add(history.Event{Time: ms(from), Kind: history.KindOp, Process: p, Type: history.OpInvoke, F: fAdd, Node: node, Value: strconv.Itoa(elem)})
	if typ == "" {
		return b
	}
	return b.add(history.Event{Time: ms(to), Kind: history.KindOp, Process: p, Type: typ, F: fAdd, Node: node, Value: strconv.Itoa(elem)})
}

// sread records a read of the whole set by p at node that returned elems.
func (b *hb) sread(p, node string, elems []int, from, to int64) *hb {
	v, _ := json.Marshal(elems)
	if elems == nil {
		v = []byte("[]")
	}
	b.add(history.Event{Time: ms(from), Kind: history.KindOp, Process: p, Type: history.OpInvoke, F: fRead, Node: node})
	return b.add(history.Event{Time: ms(to), Kind: history.KindOp, Process: p, Type: history.OpOK, F: fRead, Node: node, Value: string(v)})
}

// rawRead records a read of the whole set that returned value, as it is.
func (b *hb) rawRead(p, node, value string, from, to int64) *hb {
	b.add(history.Event{Time: ms(from), Kind: history.KindOp, Process: p, Type: history.OpInvoke, F: fRead, Node: node})
	return b.add(history.Event{Time: ms(to), Kind: history.KindOp, Process: p, Type: history.OpOK, F: fRead, Node: node, Value: value})
}

// kvw records a whole lin-kv write ending typ.
func (b *hb) kvw(p, node string, k, v int, typ string, from, to int64) *hb {
	b.call(p, fWrite, node, kvv(k, v), from)
	res := kvv(k, v)
	if typ != history.OpOK {
		res = "timed out"
	}
	return b.retv(p, typ, fWrite, res, to)
}

// cut cuts n3 off at 50ms, and heal heals it at 150ms; partition does
// both.
func (b *hb) cut() *hb {
	return b.add(history.Event{Time: ms(50), Kind: history.KindNemesis, What: "partition", Phase: history.PhaseStart, Nodes: []string{"n3"}, Name: "faults[0]#1", Detail: "isolate"})
}

func (b *hb) heal() *hb {
	return b.add(history.Event{Time: ms(150), Kind: history.KindNemesis, What: "partition", Phase: history.PhaseEnd, Nodes: []string{"n3"}, Name: "faults[0]#1"})
}

func (b *hb) partition() *hb { return b.cut().heal() }

func TestLostWritesHandMade(t *testing.T) {
	base := func() *hb {
		return hist("n1", "n2", "n3").starts(0, "n1", "n2", "n3").
			sadd("c1", "n1", 1, history.OpOK, 10, 12).
			sadd("c2", "n2", 2, history.OpOK, 20, 22)
	}
	for _, tt := range []struct {
		name    string
		h       *history.History
		want    Validity
		figures map[string]any // figures that must have these values
		says    []string       // the explanation must say each
	}{
		{
			name: "every add present",
			h:    base().partition().sread("c1", "n1", []int{1, 2}, 200, 210).sread("c2", "n2", []int{2, 1}, 211, 212).end(300).h(),
			want: True,
			figures: map[string]any{"final_reads": 2, "acknowledged": 2, "acknowledged_present": 2, "acknowledged_lost": 0,
				"unexpected": 0, "workload": "set"},
			says: []string{"no acknowledged add is lost", "acknowledged and lost 0, acknowledged and present 2"},
		},
		{
			name: "adds acknowledged by the cut-off node lost",
			h: base().cut().sadd("c3", "n3", 3, history.OpOK, 60, 62).sadd("c3", "n3", 4, history.OpOK, 70, 72).
				sadd("c1", "n1", 5, history.OpOK, 80, 82).heal().
				sread("c1", "n1", []int{1, 2, 5}, 200, 210).sread("c3", "n3", []int{1, 2, 5}, 211, 212).end(300).h(),
			want:    False,
			figures: map[string]any{"acknowledged_lost": 2, "acknowledged_present": 3, "lost_by_node": map[string]int{"n3": 2}},
			says: []string{"2 of 5 acknowledged adds are lost", "lost: 3, 4;", "acknowledged from 0.062s to 0.072s (10ms) by n3, while faults[0]#1 (partition n3: isolate)",
				"acknowledged and lost 2, acknowledged and present 3"},
		},
		{
			name: "timed-out and failed adds that took effect are recovered",
			h: base().sadd("c3", "n3", 3, history.OpInfo, 30, 40).sadd("c4", "n3", 4, history.OpFail, 41, 42).
				sadd("c5", "n3", 5, history.OpInfo, 43, 50).sadd("c6", "n1", 6, "", 51, 0).
				sread("c1", "n1", []int{1, 2, 3, 4, 6}, 200, 210).end(300).h(),
			want:    True,
			figures: map[string]any{"recovered": 3, "unacknowledged_present": 3, "failed_present": 1, "unacknowledged_absent": 1},
			says:    []string{"unacknowledged and present (recovered) 3 (1 of them after a definite failure), unacknowledged and absent 1"},
		},
		{
			name:    "an element nobody added",
			h:       base().sread("c1", "n1", []int{1, 2, 99}, 200, 210).end(300).h(),
			want:    False,
			figures: map[string]any{"unexpected": 1, "acknowledged_lost": 0},
			says:    []string{"c1's final read of the set at n1 read 99 that no add ever wrote"},
		},
		{
			name:    "an element that is not an integer",
			h:       base().rawRead("c1", "n1", `[1,2,"oops"]`, 200, 210).end(300).h(),
			want:    False,
			figures: map[string]any{"unexpected": 1},
			says:    []string{`read "oops" that no add ever wrote`},
		},
		{
			name:    "a read that is not a set",
			h:       base().rawRead("c1", "n1", `"oops"`, 200, 210).end(300).h(),
			want:    False,
			figures: map[string]any{"unexpected": 1, "acknowledged_lost": 2},
			says:    []string{"read but never written 1"},
		},
		{
			name:    "only reads before the heal",
			h:       base().sread("c1", "n1", []int{1, 2}, 30, 40).partition().end(300).h(),
			want:    Unknown,
			figures: map[string]any{"final_reads": 0},
			says:    []string{"no read of the whole set returned after the last nemesis event"},
		},
		{
			name: "reads before the last add",
			h: hist("n1").starts(0, "n1").sadd("c1", "n1", 1, history.OpOK, 10, 12).sread("c1", "n1", []int{1}, 13, 15).
				sadd("c2", "n1", 2, history.OpOK, 20, 22).end(300).h(),
			want:    Unknown,
			figures: map[string]any{"final_reads": 0},
		},
		{
			name:    "final reads that disagree",
			h:       base().sread("c1", "n1", []int{1, 2}, 200, 210).sread("c2", "n2", []int{1}, 211, 212).end(300).h(),
			want:    False,
			figures: map[string]any{"acknowledged_divergent": 1, "acknowledged_present": 1},
			says: []string{"the replicas disagree: 1 of 2 acknowledged adds is missing from some final reads and present in others (at n2, those reads lack them); " +
				"c2's add of 2 at n2, acknowledged at 0.022s, is in c1's final read of the set at n1 and missing from c2's final read of the set at n2"},
		},
		{
			name: "lost and divergent adds: the replicas' disagreement named too",
			h: base().sadd("c3", "n3", 3, history.OpOK, 30, 32).
				sread("c1", "n1", []int{1, 2}, 200, 210).sread("c2", "n2", []int{1}, 211, 212).end(300).h(),
			want:    False,
			figures: map[string]any{"acknowledged_divergent": 1, "acknowledged_lost": 1, "acknowledged_present": 1},
			says:    []string{"1 of 3 acknowledged adds is lost", "and the replicas disagree: 1 more acknowledged add is missing from some final reads and present in others"},
		},
		{
			name: "lin-kv: a key's final reads disagree",
			h: hist("n1", "n2").starts(0, "n1", "n2").kvw("c1", "n1", 0, 5, history.OpOK, 10, 12).
				read("c2", "n1", 0, "5", 200, 210).read("c3", "n2", 0, "null", 211, 220).end(300).h(),
			want:    False,
			figures: map[string]any{"acknowledged_divergent": 1, "workload": "lin-kv"},
			says:    []string{"the replicas disagree: 1 of 1 acknowledged write is missing from some final reads and present in others (at n2, those reads lack them)", "c1's write of 5 to key 0 at n1"},
		},
		{
			name: "an add acknowledged after the final read began is not judged",
			h: hist("n1").starts(0, "n1").sadd("c1", "n1", 1, history.OpOK, 10, 12).sadd("c2", "n1", 2, "", 20, 0).
				sread("c1", "n1", []int{1}, 25, 26).retv("c2", history.OpOK, fAdd, "2", 30).end(300).h(),
			want:    True,
			figures: map[string]any{"unjudged": 1, "acknowledged_present": 1},
			says:    []string{"acknowledged after the final reads began 1"},
		},
		{
			name: "every add acknowledged after the final read began",
			h: hist("n1").starts(0, "n1").sadd("c2", "n1", 2, "", 20, 0).
				sread("c1", "n1", nil, 25, 26).retv("c2", history.OpOK, fAdd, "2", 30).end(300).h(),
			want: Unknown,
			says: []string{"none can be judged"},
		},
		{
			name:    "no add acknowledged",
			h:       hist("n1").starts(0, "n1").sadd("c1", "n1", 1, history.OpFail, 10, 12).sread("c1", "n1", nil, 25, 26).end(300).h(),
			want:    Unknown,
			figures: map[string]any{"unacknowledged_absent": 1},
		},
		{
			name: "an add that is not an integer",
			h: hist("n1").starts(0, "n1").add(history.Event{Time: ms(1), Kind: history.KindOp, Process: "c1", Type: history.OpInvoke, F: fAdd, Node: "n1", Value: "x"}).
				end(300).h(),
			want: Unknown,
			says: []string{"not in the set workload's form"},
		},
		{
			name: "a read of the set that is not JSON",
			h:    base().rawRead("c1", "n1", `[1,2`, 200, 210).end(300).h(),
			want: Unknown,
		},
		{
			name: "no writes at all",
			h:    hist("n1").starts(0, "n1").end(300).h(),
			want: Unknown,
		},
		{
			name: "two windows of loss",
			h: hist("n1", "n2").starts(0, "n1", "n2").sadd("c1", "n1", 1, history.OpOK, 10, 100).sadd("c1", "n1", 2, history.OpOK, 2000, 3000).
				sadd("c2", "n2", 3, history.OpOK, 3100, 3200).sread("c2", "n2", []int{3}, 4000, 4010).end(5000).h(),
			want:    False,
			figures: map[string]any{"acknowledged_lost": 2},
			says:    []string{"acknowledged in 2 windows: 1 at 0.100s by n1; 1 at 3.000s by n1"},
		},
		// lin-kv: a write's value, in the final reads of its key.
		{
			name:    "lin-kv: the last write of a key lost",
			h:       hist("n1").starts(0, "n1").kvw("c1", "n1", 0, 5, history.OpOK, 10, 12).kvw("c1", "n1", 0, 7, history.OpOK, 20, 22).read("c2", "n1", 0, "5", 200, 210).end(300).h(),
			want:    False,
			figures: map[string]any{"acknowledged_lost": 1, "acknowledged_present": 1, "workload": "lin-kv", "acknowledged_overwritten": 0},
			says:    []string{"1 of 2 acknowledged writes is lost", "lost: key 0 = 7;"},
		},
		{
			name:    "lin-kv: a key emptied",
			h:       hist("n1").starts(0, "n1").kvw("c1", "n1", 0, 5, history.OpOK, 10, 12).read("c2", "n1", 0, "null", 200, 210).end(300).h(),
			want:    False,
			figures: map[string]any{"acknowledged_lost": 1},
		},
		{
			name: "lin-kv: overwritten by a later write",
			h: hist("n1").starts(0, "n1").kvw("c1", "n1", 0, 5, history.OpOK, 10, 12).kvw("c1", "n1", 0, 7, history.OpOK, 20, 22).
				kvw("c1", "n1", 1, 3, history.OpOK, 23, 24).read("c2", "n1", 0, "7", 200, 210).read("c2", "n1", 1, "3", 211, 212).end(300).h(),
			want:    True,
			figures: map[string]any{"acknowledged_overwritten": 1, "acknowledged_present": 2},
		},
		{
			name: "lin-kv: concurrent writes may come in either order",
			h: hist("n1").starts(0, "n1").call("c1", fWrite, "n1", kvv(0, 5), 10).call("c2", fWrite, "n1", kvv(0, 7), 15).
				retv("c2", history.OpOK, fWrite, kvv(0, 7), 25).retv("c1", history.OpOK, fWrite, kvv(0, 5), 30).
				read("c3", "n1", 0, "5", 200, 210).end(300).h(),
			want:    True,
			figures: map[string]any{"acknowledged_overwritten": 1, "acknowledged_present": 1},
		},
		{
			name: "lin-kv: a timed-out write may have overwritten it, and did",
			h: hist("n1").starts(0, "n1").call("c2", fWrite, "n1", kvv(0, 7), 5).kvw("c1", "n1", 0, 5, history.OpOK, 10, 12).
				retv("c2", history.OpInfo, fWrite, "timed out", 100).read("c3", "n1", 0, "7", 200, 210).end(300).h(),
			want:    True,
			figures: map[string]any{"acknowledged_overwritten": 1, "recovered": 1},
		},
		{
			name: "lin-kv: a value nobody wrote",
			h: hist("n1").starts(0, "n1").kvw("c1", "n1", 0, 5, history.OpOK, 10, 12).kvw("c1", "n1", 1, 3, history.OpFail, 20, 22).
				read("c2", "n1", 0, "5", 200, 210).read("c2", "n1", 1, "9", 211, 212).end(300).h(),
			want:    False,
			figures: map[string]any{"unexpected": 1, "acknowledged_lost": 0},
			says:    []string{"c2's final read of key 1 at n1 read 9 that no write ever wrote"},
		},
		{
			name:    "lin-kv: a cas's to is what it wrote",
			h:       hist("n1").starts(0, "n1").kvw("c1", "n1", 0, 5, history.OpOK, 10, 12).cas("c1", "n1", 0, 5, 6, 20, 22).read("c2", "n1", 0, "6", 200, 210).end(300).h(),
			want:    True,
			figures: map[string]any{"acknowledged_present": 1, "acknowledged_overwritten": 1},
		},
		{
			name:    "lin-kv: no final read of the key",
			h:       hist("n1").starts(0, "n1").kvw("c1", "n1", 0, 5, history.OpOK, 10, 12).read("c2", "n1", 1, "null", 200, 210).end(300).h(),
			want:    Unknown,
			figures: map[string]any{"unjudged": 1},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "lost-writes", tt.h)
			if r.Valid != tt.want {
				t.Fatalf("got %v (%s), want %v", r.Valid, r.Explanation, tt.want)
			}
			got, _ := json.Marshal(r.Figures)
			var figs map[string]any
			_ = json.Unmarshal(got, &figs)
			for k, v := range tt.figures {
				want, _ := json.Marshal(v)
				have, _ := json.Marshal(figs[k])
				if string(have) != string(want) {
					t.Errorf("figure %s = %s, want %s (figures %s)", k, have, want, got)
				}
			}
			for _, s := range tt.says {
				if !strings.Contains(r.Explanation, s) {
					t.Errorf("explanation %q does not say %q", r.Explanation, s)
				}
			}
		})
	}
}

// The evidence of a lost add is the add and the first final read after
// it; the figures name it, and the windows say when and where.
func TestLostWritesEvidence(t *testing.T) {
	h := hist("n1", "n2", "n3").starts(0, "n1", "n2", "n3").cut().
		sadd("c3", "n3", 7, history.OpOK, 60, 62). // events 5, 6
		heal().
		sread("c1", "n1", []int{}, 200, 210). // 8, 9
		sread("c2", "n2", []int{}, 220, 230).end(300).h()
	r := judge(t, "lost-writes", h)
	if r.Valid != False {
		t.Fatalf("got %v (%s), want false", r.Valid, r.Explanation)
	}
	if got, want := indexes(r.Evidence), []int64{5, 6, 8, 9}; !slices.Equal(got, want) {
		t.Errorf("evidence %v, want %v", got, want)
	}
	if !slices.Equal(r.Nodes, []string{"n3"}) {
		t.Errorf("nodes %v, want [n3]", r.Nodes)
	}
	if r.Interval == nil || r.Interval.From != ms(62) || r.Interval.To != ms(62) {
		t.Errorf("interval %+v, want the acknowledgement at 62ms", r.Interval)
	}
	lost := r.Figures["lost"].([]lostNamed)
	if len(lost) != 1 || lost[0].Value != 7 || lost[0].Process != "c3" || lost[0].Node != "n3" || lost[0].Key != nil {
		t.Errorf("lost %+v, want c3's 7 at n3", lost)
	}
	ws := r.Figures["lost_windows"].([]lostWindow)
	if len(ws) != 1 || ws[0].Lost != 1 || ws[0].Nodes != "n3" || ws[0].Faults != "faults[0]#1 (partition n3: isolate)" {
		t.Errorf("windows %+v", ws)
	}
}

// A lost write is the member's that served it, when the history says
// which (a real server's answer), not the one its client was bound to.
func TestLostWritesNameTheServingMember(t *testing.T) {
	b := hist("n1", "n2", "n3").starts(0, "n1", "n2", "n3").sadd("c1", "n1", 1, history.OpOK, 10, 12)
	b.events[len(b.events)-1].Served = "n3"
	r := judge(t, "lost-writes", b.sread("c2", "n2", nil, 200, 210).end(300).h())
	if r.Valid != False || !slices.Equal(r.Nodes, []string{"n3"}) || !strings.Contains(r.Explanation, "by n3") {
		t.Errorf("got %v at %v (%s), want the write lost at n3, which served it", r.Valid, r.Nodes, r.Explanation)
	}
}

// At most MaxLostNamed lost writes are named; the count counts them all.
func TestLostWritesNamesTheFirst20(t *testing.T) {
	b := hist("n1").starts(0, "n1")
	for i := range 30 {
		b.sadd("c1", "n1", i, history.OpOK, int64(10+2*i), int64(11+2*i))
	}
	r := judge(t, "lost-writes", b.sread("c2", "n1", nil, 200, 210).end(300).h())
	if r.Valid != False || r.Figures["acknowledged_lost"] != 30 {
		t.Fatalf("got %v with %v lost (%s), want false with 30", r.Valid, r.Figures["acknowledged_lost"], r.Explanation)
	}
	if n := len(r.Figures["lost"].([]lostNamed)); n != MaxLostNamed {
		t.Errorf("%d named, want %d", n, MaxLostNamed)
	}
	if !strings.Contains(r.Explanation, "18, 19 and 10 more;") {
		t.Errorf("explanation %q does not end the list with the count of the rest", r.Explanation)
	}
}

// naiveLostWrites is a reference that shares no code with the check: it
// pairs operations by scanning forward for the process's next operation
// event and asks each question by scanning the whole history again. With
// bug, it judges an acknowledged write by every final read, even one that
// began before the write was acknowledged.
func naiveLostWrites(h *history.History, bug bool) (Validity, map[string]int) {
	ev := h.Events
	type op struct {
		i, j int // invocation and completion (-1: none)
	}
	var adds, reads []op
	isSet := false
	for _, e := range ev {
		if e.Kind == history.KindOp && e.F == fAdd {
			isSet = true
		}
	}
	for i, e := range ev {
		if e.Kind != history.KindOp || e.Type != history.OpInvoke {
			continue
		}
		o := op{i, -1}
		for j := i + 1; j < len(ev); j++ {
			if ev[j].Kind == history.KindOp && ev[j].Process == e.Process {
				if ev[j].Type != history.OpInvoke {
					o.j = j
				}
				break
			}
		}
		switch {
		case isSet && e.F == fAdd, !isSet && (e.F == fWrite || e.F == fCas):
			adds = append(adds, o)
		case e.F == fRead && o.j >= 0 && ev[o.j].Type == history.OpOK:
			reads = append(reads, o)
		}
	}
	// key and value written by a write, read by a read (set: key 0).
	kvOf := func(value string) (int64, string) {
		var pair []json.RawMessage
		_ = json.Unmarshal([]byte(value), &pair)
		k, _ := strconv.ParseInt(string(pair[0]), 10, 64)
		return k, string(pair[1])
	}
	wrote := func(o op) (int64, int64) {
		e := ev[o.i]
		if isSet {
			v, _ := strconv.ParseInt(e.Value, 10, 64)
			return 0, v
		}
		k, v := kvOf(e.Value)
		if e.F == fCas {
			var ft []int64
			_ = json.Unmarshal([]byte(v), &ft)
			return k, ft[1]
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		return k, n
	}
	readKey := func(o op) int64 {
		if isSet {
			return 0
		}
		k, _ := kvOf(ev[o.i].Value)
		return k
	}
	has := func(o op, v int64) bool {
		if isSet {
			var elems []any
			_ = json.Unmarshal([]byte(ev[o.j].Value), &elems)
			for _, x := range elems {
				if f, ok := x.(float64); ok && int64(f) == v {
					return true
				}
			}
			return false
		}
		_, got := kvOf(ev[o.j].Value)
		return got == strconv.FormatInt(v, 10)
	}
	if len(adds) == 0 {
		return Unknown, map[string]int{}
	}
	cutoff := -1
	for i, e := range ev {
		if e.Kind == history.KindNemesis || (e.Kind == history.KindOp && e.Type == history.OpInvoke && slices.ContainsFunc(adds, func(o op) bool { return o.i == i })) {
			cutoff = i
		}
	}
	var final []op
	for _, r := range reads {
		if r.i > cutoff {
			final = append(final, r)
		}
	}
	outcome := func(o op) string {
		if o.j < 0 {
			return ""
		}
		return ev[o.j].Type
	}
	n := map[string]int{"final_reads": len(final)}
	for _, w := range adds {
		k, v := wrote(w)
		if outcome(w) != history.OpOK {
			if outcome(w) == history.OpFail {
				n["failed"]++
			}
			seen := false
			for _, r := range final {
				seen = seen || (readKey(r) == k && has(r, v))
			}
			ackedSame := slices.ContainsFunc(adds, func(x op) bool {
				xk, xv := wrote(x)
				return outcome(x) == history.OpOK && xk == k && xv == v
			})
			if seen && !ackedSame {
				n["recovered"]++
				if outcome(w) == history.OpFail {
					n["failed_present"]++
				}
			} else {
				n["unacknowledged_absent"]++
			}
			continue
		}
		n["acknowledged"]++
		judging, saw := 0, 0
		for _, r := range final {
			if readKey(r) == k && (r.i > w.j || bug) {
				judging++
				if has(r, v) {
					saw++
				}
			}
		}
		later := false // may another write of the key have come after it?
		for _, x := range adds {
			xk, _ := wrote(x)
			if x == w || xk != k || outcome(x) == history.OpFail {
				continue
			}
			if outcome(x) != history.OpOK || x.j > w.i {
				later = true
			}
		}
		switch {
		case judging == 0:
			n["unjudged"]++
		case saw == judging:
			n["acknowledged_present"]++
		case !isSet && later && saw > 0:
			n["acknowledged_present"]++
		case !isSet && later:
			n["acknowledged_overwritten"]++
		case saw == 0:
			n["acknowledged_lost"]++
		default:
			n["acknowledged_divergent"]++
		}
	}
	unexpected := map[string]bool{}
	for _, r := range final {
		k := readKey(r)
		var vals []string
		if isSet {
			var elems []json.RawMessage
			_ = json.Unmarshal([]byte(ev[r.j].Value), &elems)
			for _, x := range elems {
				vals = append(vals, string(x))
			}
		} else if _, v := kvOf(ev[r.j].Value); v != "null" {
			vals = []string{v}
		}
		for _, v := range vals {
			known := slices.ContainsFunc(adds, func(x op) bool {
				xk, xv := wrote(x)
				return xk == k && strconv.FormatInt(xv, 10) == v
			})
			if !known {
				unexpected[fmt.Sprint(k, " ", v)] = true
			}
		}
	}
	n["unexpected"] = len(unexpected)
	switch {
	case len(final) == 0:
		return Unknown, n
	case n["acknowledged_lost"] > 0 || n["unexpected"] > 0 || n["acknowledged_divergent"] > 0:
		return False, n
	case n["acknowledged"] == 0 || n["acknowledged"] == n["unjudged"]:
		return Unknown, n
	}
	return True, n
}

// randomWritesHistory is a small history of a set (or lin-kv) workload
// over a store that mostly keeps what it acknowledged: processes add (or
// write) one after another, a partition comes and goes, and final reads
// follow, some begun before the last writes were acknowledged. The store
// loses an acknowledged write now and then, takes in a timed-out or
// failed one, and a final read misses an element or reads one nobody
// wrote.
func randomWritesHistory(rng *rand.Rand, set bool) *history.History {
	b := hist("n1", "n2", "n3").starts(0, "n1", "n2", "n3")
	type ev struct {
		t     int64
		e     history.Event
		order int
	}
	var evs []ev
	put := func(t int64, e history.Event) {
		e.Time = ms(t)
		evs = append(evs, ev{t: t, e: e, order: len(evs)})
	}
	keys := 1 + rng.IntN(2)
	store := map[int64]map[int64]bool{} // key -> what it holds (set: its elements; kv: one value)
	hold := func(k, v int64) {
		if store[k] == nil || !set {
			store[k] = map[int64]bool{}
		}
		store[k][v] = true
	}
	procs := 1 + rng.IntN(3)
	last := int64(0)
	elem := int64(0)
	for p := range procs {
		process := fmt.Sprintf("c%d", p+1)
		node := fmt.Sprintf("n%d", 1+rng.IntN(3))
		t := int64(1 + rng.IntN(10))
		for range rng.IntN(5) {
			k := int64(rng.IntN(keys))
			v := elem
			elem++
			if !set {
				v = int64(rng.IntN(4))
			}
			f, inv, res := fAdd, strconv.FormatInt(v, 10), strconv.FormatInt(v, 10)
			if set {
				k = 0
			} else if rng.IntN(4) == 0 {
				f = fCas
				inv = fmt.Sprintf("[%d,[%d,%d]]", k, rng.IntN(4), v)
				res = inv
			} else {
				f, inv, res = fWrite, kvv(int(k), int(v)), kvv(int(k), int(v))
			}
			typ := history.OpOK
			switch rng.IntN(8) {
			case 0:
				typ, res = history.OpInfo, "timed out"
			case 1:
				typ, res = history.OpFail, "failed"
			}
			took := typ == history.OpOK && rng.IntN(6) > 0 || typ == history.OpInfo && rng.IntN(2) == 0 || typ == history.OpFail && rng.IntN(10) == 0
			if took {
				hold(k, v)
			}
			call, ret := t, t+int64(1+rng.IntN(60))
			put(call, history.Event{Kind: history.KindOp, Process: process, Type: history.OpInvoke, F: f, Node: node, Value: inv})
			if rng.IntN(12) > 0 {
				put(ret, history.Event{Kind: history.KindOp, Process: process, Type: typ, F: f, Node: node, Value: res})
			}
			last = max(last, call)
			t = ret + int64(rng.IntN(5))
		}
	}
	if rng.IntN(3) > 0 {
		at := int64(rng.IntN(int(last) + 20))
		put(at, history.Event{Kind: history.KindNemesis, What: "partition", Phase: history.PhaseStart, Nodes: []string{"n3"}, Name: "faults[0]#1"})
		put(at+int64(rng.IntN(40)), history.Event{Kind: history.KindNemesis, What: "partition", Phase: history.PhaseEnd, Nodes: []string{"n3"}, Name: "faults[0]#1"})
	}
	// Final reads, from just after the last invocation (before some
	// answers) to well after everything.
	for r := range rng.IntN(4) {
		process := fmt.Sprintf("r%d", r+1)
		node := fmt.Sprintf("n%d", 1+rng.IntN(3))
		at := last + int64(rng.IntN(80))
		for k := range keys {
			if set && k > 0 {
				break
			}
			held := store[int64(k)]
			var got []int64
			for v := range held {
				if rng.IntN(10) > 0 {
					got = append(got, v)
				}
			}
			if rng.IntN(12) == 0 {
				got = append(got, 100+int64(rng.IntN(3)))
			}
			slices.Sort(got)
			var inv, res string
			if set {
				j, _ := json.Marshal(got)
				if got == nil {
					j = []byte("[]")
				}
				res = string(j)
			} else {
				inv = kvr(k)
				switch {
				case len(got) == 0:
					res = fmt.Sprintf("[%d,null]", k)
				default:
					res = kvv(k, int(got[rng.IntN(len(got))]))
				}
			}
			put(at, history.Event{Kind: history.KindOp, Process: process, Type: history.OpInvoke, F: fRead, Node: node, Value: inv})
			put(at+1, history.Event{Kind: history.KindOp, Process: process, Type: history.OpOK, F: fRead, Node: node, Value: res})
			at += 2
		}
	}
	slices.SortStableFunc(evs, func(x, y ev) int {
		if x.t != y.t {
			return int(x.t - y.t)
		}
		return x.order - y.order
	})
	end := int64(0)
	for _, e := range evs {
		b.add(e.e)
		end = e.t
	}
	return b.end(end + 10).h()
}

// The check and its naive reference agree on random histories of both
// workloads, figures included; the planted bug must show, so that the
// histories are known to have final reads that begin before some
// acknowledgements.
func TestLostWritesAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	verdicts := map[Validity]int{}
	figures := map[string]int{}
	caught := 0
	for i := range 3000 {
		set := i%2 == 0
		h := randomWritesHistory(rng, set)
		want, n := naiveLostWrites(h, false)
		r := judge(t, "lost-writes", h)
		if r.Valid != want {
			t.Fatalf("history %d: the check says %v (%s), the naive reference %v (%v)\n%s", i, r.Valid, r.Explanation, want, n, dump(h))
		}
		verdicts[want]++
		for _, k := range []string{"final_reads", "acknowledged", "acknowledged_lost", "acknowledged_present", "acknowledged_divergent",
			"acknowledged_overwritten", "unjudged", "recovered", "failed_present", "unacknowledged_absent", "unexpected"} {
			got, _ := r.Figures[k].(int)
			if got != n[k] {
				t.Fatalf("history %d: figure %s = %d, the naive reference %d (%s)\n%s", i, k, got, n[k], r.Explanation, dump(h))
			}
			if got > 0 {
				figures[k]++
			}
		}
		if bugged, _ := naiveLostWrites(h, true); bugged != want {
			caught++
		}
	}
	if verdicts[True] < 300 || verdicts[False] < 300 || verdicts[Unknown] < 100 {
		t.Errorf("the random histories are too one-sided: %v", verdicts)
	}
	for k, n := range figures {
		if n < 30 && k != "acknowledged_overwritten" {
			t.Errorf("figure %s was above 0 in only %d histories", k, n)
		}
	}
	if caught < 30 {
		t.Errorf("the planted bug changed only %d verdicts: the histories do not exercise the rule", caught)
	}
	t.Logf("verdicts %v; figures above 0 %v; the planted bug changed %d verdicts", verdicts, figures, caught)
}
