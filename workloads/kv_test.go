package workloads

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes/wire"
)

// fakeService runs a workload on a virtual clock against a perfect
// service: serve answers each request's body 1ms later; an operation that
// timeOut picks is answered with info, fakeTimeout later.
type fakeService struct {
	w       Workload
	now     time.Duration
	seq     int
	timers  timerHeap
	serve   func(req map[string]any) (reply string)
	timeOut func(op Op) bool
	ops     []Op
	bodies  []string
	history []string // invocations and completions as the history records them
	open    map[string]bool
	errs    []string
}

func newService(w Workload, serve func(map[string]any) string) *fakeService {
	return &fakeService{w: w, serve: serve, open: map[string]bool{}, timeOut: func(Op) bool { return false }}
}

func (f *fakeService) After(d time.Duration, fn func()) {
	f.seq++
	heap.Push(&f.timers, timer{at: max(d, f.now), seq: f.seq, fn: fn})
}

func (f *fakeService) Invoke(op Op) {
	if f.open[op.Process] {
		f.errs = append(f.errs, fmt.Sprintf("%s invoked %s at %s while its last operation was open", op.Process, op.F, f.now))
	}
	f.open[op.Process] = true
	body := RequestBody(op, len(f.ops)+1)
	f.ops = append(f.ops, op)
	f.bodies = append(f.bodies, string(body))
	f.history = append(f.history, fmt.Sprintf("%s invoke %s %s", op.Process, op.F, op.Value))
	if f.timeOut(op) {
		f.After(f.now+fakeTimeout, func() { f.complete(op, "info", "timed out", nil) })
		return
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		f.errs = append(f.errs, fmt.Sprintf("request body %s: %v", body, err))
	}
	reply := []byte(f.serve(req))
	f.After(f.now+ms, func() {
		var head wire.ReplyHead
		_ = json.Unmarshal(reply, &head)
		typ, value := Outcome(head, reply, op.Result, op.Absent)
		f.complete(op, typ, value, reply)
	})
}

func (f *fakeService) complete(op Op, typ, value string, body []byte) {
	f.open[op.Process] = false
	f.history = append(f.history, fmt.Sprintf("%s %s %s %s", op.Process, typ, op.F, value))
	f.w.Complete(f, Completion{Process: op.Process, Node: op.Node, F: op.F, Type: typ, Value: value, Body: body, At: f.now})
}

func (f *fakeService) run(limit time.Duration) {
	f.w.Start(f)
	for f.timers.Len() > 0 && f.timers[0].at <= limit {
		t := heap.Pop(&f.timers).(timer)
		f.now = t.at
		t.fn()
	}
}

// kvStore serves lin-kv requests from one map, as Maelstrom's bodies say.
func kvStore() func(map[string]any) string {
	store := map[float64]float64{}
	return func(req map[string]any) string {
		id := req["msg_id"]
		k := req["key"].(float64)
		v, ok := store[k]
		switch req["type"] {
		case "read":
			if !ok {
				return fmt.Sprintf(`{"type":"error","in_reply_to":%v,"code":20}`, id)
			}
			return fmt.Sprintf(`{"type":"read_ok","in_reply_to":%v,"value":%v}`, id, v)
		case "write":
			store[k] = req["value"].(float64)
			return fmt.Sprintf(`{"type":"write_ok","in_reply_to":%v}`, id)
		case "cas":
			if !ok {
				return fmt.Sprintf(`{"type":"error","in_reply_to":%v,"code":20}`, id)
			}
			if v != req["from"].(float64) {
				return fmt.Sprintf(`{"type":"error","in_reply_to":%v,"code":22}`, id)
			}
			store[k] = req["to"].(float64)
			return fmt.Sprintf(`{"type":"cas_ok","in_reply_to":%v}`, id)
		}
		return `{"type":"error","code":10}`
	}
}

func TestKVClients(t *testing.T) {
	w := &KV{Clients: 4, Nodes: []string{"n1", "n2", "n3"}, Rate: 400, Keys: 3, Values: 5, Mix: Mix{Read: 2, Write: 1, Cas: 1},
		At: 10 * ms, Until: 800 * ms, Seed: 3}
	f := newService(w, kvStore())
	f.run(2 * time.Second)
	for _, e := range f.errs {
		t.Error(e)
	}
	count := map[string]int{}
	for i, op := range f.ops {
		count[op.F]++
		var req map[string]any
		_ = json.Unmarshal([]byte(f.bodies[i]), &req)
		k := int(req["key"].(float64))
		if k < 0 || k >= w.Keys {
			t.Errorf("%s: key %d out of [0, %d)", f.bodies[i], k, w.Keys)
		}
		var want string
		switch op.F {
		case FRead:
			want = fmt.Sprintf(`{"type":"read","msg_id":%d,"key":%d}`, i+1, k)
			if op.Value != fmt.Sprintf("[%d,null]", k) {
				t.Errorf("read value %s", op.Value)
			}
		case FWrite:
			v := int(req["value"].(float64))
			want = fmt.Sprintf(`{"type":"write","msg_id":%d,"key":%d,"value":%d}`, i+1, k, v)
			if op.Value != fmt.Sprintf("[%d,%d]", k, v) || v < 0 || v >= w.Values {
				t.Errorf("write value %s", op.Value)
			}
		case FCas:
			a, b := int(req["from"].(float64)), int(req["to"].(float64))
			want = fmt.Sprintf(`{"type":"cas","msg_id":%d,"key":%d,"from":%d,"to":%d}`, i+1, k, a, b)
			if op.Value != fmt.Sprintf("[%d,[%d,%d]]", k, a, b) {
				t.Errorf("cas value %s", op.Value)
			}
		}
		if f.bodies[i] != want {
			t.Errorf("body %s, want Maelstrom's %s", f.bodies[i], want)
		}
		if want := w.Nodes[(int(op.Process[1]-'0')-1)%3]; op.Node != want {
			t.Errorf("%s talks to %s, want %s", op.Process, op.Node, want)
		}
	}
	total := len(f.ops)
	if total < 150 {
		t.Fatalf("only %d operations in 790ms at 400/s", total)
	}
	if r := float64(count[FRead]) / float64(total); r < 0.4 || r > 0.6 {
		t.Errorf("reads are %.2f of the operations, want about 0.5 (mix 2:1:1): %v", r, count)
	}
	// Completions record Jepsen's form: a read its value, a write and a
	// cas their invocation's value.
	sawRead := false
	for _, line := range f.history {
		if strings.Contains(line, " ok read ") {
			sawRead = true
			if !strings.HasSuffix(line, "]") || strings.HasSuffix(line, ",null]") {
				t.Errorf("an ok read records %q", line)
			}
		}
	}
	if !sawRead {
		t.Error("no read returned ok")
	}
	// The same seed gives the same operations.
	again := newService(&KV{Clients: 4, Nodes: w.Nodes, Rate: 400, Keys: 3, Values: 5, Mix: w.Mix, At: 10 * ms, Until: 800 * ms, Seed: 3}, kvStore())
	again.run(2 * time.Second)
	if strings.Join(again.history, "\n") != strings.Join(f.history, "\n") {
		t.Error("the same seed gave another history")
	}
}

// A timed-out operation retires the process: the client goes on under
// c(i+Clients).
func TestKVInfoRetiresTheProcess(t *testing.T) {
	w := &KV{Clients: 2, Nodes: []string{"n1"}, Rate: 200, Keys: 1, Values: 5, Mix: Mix{Read: 1, Write: 1}, Until: 500 * ms, Seed: 1}
	f := newService(w, kvStore())
	timedOut := 0
	f.timeOut = func(op Op) bool {
		if op.Process == "c2" && timedOut == 0 {
			timedOut++
			return true
		}
		return false
	}
	f.run(2 * time.Second)
	for _, e := range f.errs {
		t.Error(e)
	}
	var after int
	for _, op := range f.ops {
		if op.Process == "c4" {
			after++
		}
		if (op.Process == "c2" || op.Process == "c4") && op.Client != "c2" {
			t.Errorf("%s's operation names client %q, want c2: a client outlives its processes", op.Process, op.Client)
		}
	}
	if timedOut != 1 || after == 0 {
		t.Errorf("%d timeouts; %d operations under c4, want c2 to go on as c4", timedOut, after)
	}
}

func TestKVReadValue(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"type":"read_ok","value":4}`, "4"},
		{`{"type":"read_ok","value":-12}`, "-12"},
		{`{"type":"read_ok","value":null}`, "null"},
		{`{"type":"read_ok"}`, "null"},
		{`{"type":"read_ok","value":"4"}`, `"\"4\""`},
		{`{"type":"read_ok","value":4.5}`, `"4.5"`},
		{`{"type":"read_ok","value":99999999999999999999}`, `"99999999999999999999"`},
		{`{"type":"read_ok","value":[1,2]}`, `"[1,2]"`},
		{`{"type":"read_ok","value":"` + strings.Repeat("x", 200) + `"}`, `"\"` + strings.Repeat("x", MaxReadText-1) + `…"`},
	}
	for _, tt := range tests {
		if got := KVReadValue([]byte(tt.body)); got != tt.want {
			t.Errorf("KVReadValue(%s) = %s, want %s", tt.body, got, tt.want)
		}
		if !json.Valid([]byte(KVValue(3, KVReadValue([]byte(tt.body))))) {
			t.Errorf("%s: the recorded value is not JSON", tt.body)
		}
	}
}

func TestEchoClients(t *testing.T) {
	w := &Echo{Clients: 3, Nodes: []string{"n1", "n2"}, Rate: 300, Until: 300 * ms, Seed: 2}
	f := newService(w, func(req map[string]any) string {
		b, _ := json.Marshal(map[string]any{"type": "echo_ok", "in_reply_to": req["msg_id"], "echo": req["echo"]})
		return string(b)
	})
	f.run(time.Second)
	for _, e := range f.errs {
		t.Error(e)
	}
	seen := map[string]bool{}
	for i, op := range f.ops {
		if want := fmt.Sprintf(`{"type":"echo","msg_id":%d,"echo":%q}`, i+1, op.Value); f.bodies[i] != want {
			t.Errorf("body %s, want %s", f.bodies[i], want)
		}
		if seen[op.Value] {
			t.Errorf("payload %q sent twice", op.Value)
		}
		seen[op.Value] = true
	}
	if len(f.ops) < 40 {
		t.Fatalf("only %d echoes", len(f.ops))
	}
	for _, line := range f.history {
		if strings.Contains(line, " ok echo ") && !strings.HasSuffix(line, " echo c"+line[1:2]+" #"+strings.Split(line, "#")[1]) {
			t.Errorf("completion %q does not echo its client's payload", line)
		}
	}
}

func TestEchoValue(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"echo":"hello"}`, "hello"},
		{`{"echo":5}`, "5"},
		{`{"echo":{"a":1}}`, `{"a":1}`},
		{`{"echo":null}`, ""},
		{`{}`, ""},
	}
	for _, tt := range tests {
		if got := EchoValue([]byte(tt.body)); got != tt.want {
			t.Errorf("EchoValue(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestRequestBody(t *testing.T) {
	if got, want := string(RequestBody(Op{F: "acquire", Value: "c1"}, 3)), `{"type":"acquire","msg_id":3,"value":"c1"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := string(RequestBody(Op{F: "elect"}, 1)), `{"type":"elect","msg_id":1}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("fields that are no object: no panic")
		}
	}()
	RequestBody(Op{F: "x", Fields: []int{1}}, 1)
}
