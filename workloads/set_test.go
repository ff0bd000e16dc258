package workloads

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// gset serves Maelstrom's g-set from one set; fail, when not nil, may
// turn a request into an error code instead.
func gset(fail func(req map[string]any) int) func(map[string]any) string {
	var set []float64
	return func(req map[string]any) string {
		id := req["msg_id"]
		if fail != nil {
			if code := fail(req); code != 0 {
				return fmt.Sprintf(`{"type":"error","in_reply_to":%v,"code":%d,"text":"no"}`, id, code)
			}
		}
		switch req["type"] {
		case "add":
			set = append(set, req["element"].(float64))
			return fmt.Sprintf(`{"type":"add_ok","in_reply_to":%v}`, id)
		case "read":
			b, _ := json.Marshal(map[string]any{"type": "read_ok", "in_reply_to": id, "value": set})
			return string(b)
		}
		return `{"type":"error","code":10}`
	}
}

// history lines of f for operation fn.
func (f *fakeService) lines(fn string) []string {
	var out []string
	for _, l := range f.history {
		if strings.Fields(l)[2] == fn {
			out = append(out, l)
		}
	}
	return out
}

func TestSetClients(t *testing.T) {
	w := &Set{Clients: 3, Nodes: []string{"n1", "n2"}, Rate: 300, At: 10 * ms, Until: 300 * ms, Seed: 4, Final: Final{At: 500 * ms}}
	f := newService(w, gset(nil))
	f.run(2 * time.Second)
	for _, e := range f.errs {
		t.Error(e)
	}
	var adds []int
	reads := map[string]int{}
	for i, op := range f.ops {
		switch op.F {
		case FAdd:
			if want := fmt.Sprintf(`{"type":"add","msg_id":%d,"element":%s}`, i+1, op.Value); f.bodies[i] != want {
				t.Errorf("body %s, want g-set's %s", f.bodies[i], want)
			}
			var e int
			fmt.Sscan(op.Value, &e)
			adds = append(adds, e)
		case FRead:
			if want := fmt.Sprintf(`{"type":"read","msg_id":%d}`, i+1); f.bodies[i] != want {
				t.Errorf("body %s, want g-set's %s", f.bodies[i], want)
			}
			if op.Value != "" {
				t.Errorf("a read's invocation records %q, want nothing", op.Value)
			}
			reads[op.Client]++
		default:
			t.Errorf("operation %s", op.F)
		}
	}
	if len(adds) < 40 {
		t.Fatalf("only %d adds", len(adds))
	}
	slices.Sort(adds)
	for i, e := range adds {
		if e != i {
			t.Fatalf("the adds' elements, sorted, have %d at %d: they are 0, 1, 2, …, each once", e, i)
		}
	}
	if want := map[string]int{"c1": 1, "c2": 1, "c3": 1}; !mapsEqual(reads, want) {
		t.Errorf("final reads by client %v, want one each %v", reads, want)
	}
	// Every read comes after the final reads' time and records every
	// element in order.
	all := make([]string, len(adds))
	for i := range adds {
		all[i] = fmt.Sprint(i)
	}
	want := "[" + strings.Join(all, ",") + "]"
	for _, l := range f.lines(FRead) {
		if strings.Contains(l, " ok ") && !strings.HasSuffix(l, " "+want) {
			t.Errorf("a final read records %q, want %s", l, want)
		}
	}
	for i, op := range f.ops {
		if op.F == FRead && i < len(adds) {
			t.Errorf("a read before the last add (operation %d)", i)
		}
	}
	again := newService(&Set{Clients: 3, Nodes: w.Nodes, Rate: 300, At: 10 * ms, Until: 300 * ms, Seed: 4, Final: Final{At: 500 * ms}}, gset(nil))
	again.run(2 * time.Second)
	if strings.Join(again.history, "\n") != strings.Join(f.history, "\n") {
		t.Error("the same seed gave another history")
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A final read that fails is invoked again FinalRetry later, and one that
// times out again under the client's next process, until one returns ok;
// then the reader stops. Only the reader named reads.
func TestFinalReadsRetry(t *testing.T) {
	w := &Set{Clients: 2, Nodes: []string{"n1"}, Rate: 100, Until: 100 * ms, Seed: 1, Final: Final{At: 200 * ms, Readers: []string{"c2"}}}
	refusals := 0
	f := newService(w, gset(func(req map[string]any) int {
		if req["type"] == "read" && refusals < 2 {
			refusals++
			return 11
		}
		return 0
	}))
	timedOut := false
	f.timeOut = func(op Op) bool {
		if op.F == FRead && refusals == 2 && !timedOut {
			timedOut = true
			return true
		}
		return false
	}
	f.run(2 * time.Second)
	for _, e := range f.errs {
		t.Error(e)
	}
	var got []string
	for _, l := range f.lines(FRead) {
		fs := strings.Fields(l)
		got = append(got, fs[0]+" "+fs[1])
	}
	want := []string{"c2 invoke", "c2 fail", "c2 invoke", "c2 fail", "c2 invoke", "c2 info", "c4 invoke", "c4 ok"}
	if !slices.Equal(got, want) {
		t.Errorf("final reads %q, want %q", got, want)
	}
}

// The final reads' times: each reader reads at Final.At, or, when its add
// is in flight then, as soon as it ends; a failed read is read again
// FinalRetry after its answer.
func TestFinalReadsTimes(t *testing.T) {
	w := &Set{Clients: 2, Nodes: []string{"n1"}, Rate: 100, Until: 190 * ms, Seed: 1, Final: Final{At: 200 * ms}}
	type read struct {
		process string
		at      time.Duration
	}
	var reads []read
	failed := false
	serve := gset(func(req map[string]any) int {
		if req["type"] == "read" && !failed {
			failed = true
			return 11
		}
		return 0
	})
	f := newService(w, nil)
	f.serve = func(req map[string]any) string { return serve(req) }
	// c1's adds after 100ms time out fakeTimeout after their invocation:
	// the last is in flight at Final.At.
	var lastAdd time.Duration
	f.timeOut = func(op Op) bool {
		if op.F == FRead {
			reads = append(reads, read{op.Process, f.now})
		}
		if op.F == FAdd && op.Client == "c1" && f.now > 100*ms {
			lastAdd = f.now
			return true
		}
		return false
	}
	f.run(2 * time.Second)
	for _, e := range f.errs {
		t.Error(e)
	}
	if lastAdd == 0 {
		t.Fatal("c1 invoked no add after 100ms: the seed no longer tests a reader busy at Final.At")
	}
	want := []read{{"c2", w.Final.At}, {"c3", lastAdd + fakeTimeout}, {"c2", w.Final.At + ms + FinalRetry}}
	if !slices.Equal(reads, want) {
		t.Errorf("reads %v, want %v: c2 at Final.At, c1 (now c3) when its add timed out, c2 again FinalRetry after its failure", reads, want)
	}
}

// The lin-kv workload's final reads read every key written or compared,
// in order, and record a key with no value (error 20) as an ok read of
// nothing.
func TestKVFinalReads(t *testing.T) {
	w := &KV{Clients: 2, Nodes: []string{"n1"}, Rate: 200, Keys: 5, Values: 5, Mix: Mix{Read: 1, Cas: 1}, Until: 100 * ms, Seed: 2,
		Final: Final{At: 200 * ms, Readers: []string{"c1"}}}
	f := newService(w, kvStore())
	f.run(2 * time.Second)
	for _, e := range f.errs {
		t.Error(e)
	}
	compared := map[string]bool{}
	var finals []string
	for _, op := range f.ops {
		var fields struct{ Key int }
		b, _ := json.Marshal(op.Fields)
		_ = json.Unmarshal(b, &fields)
		switch {
		case op.F == FCas:
			compared[fmt.Sprint(fields.Key)] = true
		case op.Absent != "":
			if op.Client != "c1" {
				t.Errorf("%s made a final read; only c1 reads", op.Client)
			}
			finals = append(finals, fmt.Sprint(fields.Key))
		}
	}
	want := slices.Sorted(func(yield func(string) bool) {
		for k := range compared {
			if !yield(k) {
				return
			}
		}
	})
	if len(want) < 2 || !slices.Equal(finals, want) {
		t.Errorf("final reads of keys %v, want each key compared once, in order: %v", finals, want)
	}
	// Only cas, and every key empty: every cas fails with 20, and every
	// final read records no value, ok.
	oks := 0
	for _, l := range f.lines(FRead) {
		if strings.Contains(l, " ok read [") {
			if !strings.HasSuffix(l, ",null]") {
				t.Errorf("a read of an empty store records %q", l)
			}
			oks++
		}
	}
	if oks != len(finals) {
		t.Errorf("%d final reads ok, want %d (error 20 is a read of no value)", oks, len(finals))
	}
	for _, l := range f.history {
		if strings.Contains(l, " ok read ") && !strings.Contains(l, "c1") {
			t.Errorf("a read that is not final recorded error 20 as ok: %q", l)
		}
	}
}

func TestSetReadValue(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"type":"read_ok","value":[3,1,2]}`, "[1,2,3]"},
		{`{"type":"read_ok","value":[]}`, "[]"},
		{`{"type":"read_ok","value":[1,"x",2.5,{"a":1}]}`, `[1,"x","2.5","{\"a\":1}"]`},
		{`{"type":"read_ok","value":null}`, `"null"`},
		{`{"type":"read_ok"}`, `"null"`},
		{`{"type":"read_ok","value":"1,2"}`, `"\"1,2\""`},
		{`not json`, `"not json"`},
	}
	for _, tt := range tests {
		got := SetReadValue([]byte(tt.body))
		if got != tt.want {
			t.Errorf("SetReadValue(%s) = %s, want %s", tt.body, got, tt.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: the recorded value %s is not JSON", tt.body, got)
		}
	}
}
