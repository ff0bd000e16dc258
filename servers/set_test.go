package servers

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes/wire"
	"github.com/coupharness/coup/workloads"
)

// An operation is the set's when it is an add with an element or a read
// with no key, whether the workload made it (its fields) or an adapter
// read it from a request's body.
func TestSetOpOf(t *testing.T) {
	tests := []struct {
		name    string
		op      workloads.Op
		f       string
		element int64
		ok      bool
	}{
		{"the workload's add", workloads.Op{F: "add", Fields: map[string]int64{"element": 12}}, "add", 12, true},
		{"the workload's read", workloads.SetReadOp(), "read", 0, true},
		{"an add from a body", workloads.Op{F: "add", Fields: json.RawMessage(`{"type":"add","msg_id":3,"element":7}`)}, "add", 7, true},
		{"a read from a body", workloads.Op{F: "read", Fields: json.RawMessage(`{"type":"read","msg_id":4}`)}, "read", 0, true},
		{"a read of a key", workloads.Op{F: "read", Fields: json.RawMessage(`{"type":"read","msg_id":4,"key":0}`)}, "", 0, false},
		{"an add without an element", workloads.Op{F: "add", Fields: json.RawMessage(`{"type":"add","msg_id":3}`)}, "", 0, false},
		{"a write", workloads.Op{F: "write", Fields: map[string]int{"key": 1, "value": 2}}, "", 0, false},
		{"a lock", workloads.Op{F: "acquire", Value: "c1"}, "", 0, false},
	}
	for _, tt := range tests {
		f, e, ok := setOpOf(tt.op)
		if f != tt.f || e != tt.element || ok != tt.ok {
			t.Errorf("%s: got %q %d %v, want %q %d %v", tt.name, f, e, ok, tt.f, tt.element, tt.ok)
		}
	}
}

// On etcd, an add is a put of a key of its own under coup-set/, and a
// read lists the prefix, keys only, in order of the elements; a key that
// is no element is read as its text. The kv's keys are not the set's.
func TestEtcdSet(t *testing.T) {
	g := &gateway{kv: map[string]string{"coup-kv/0": "1"}}
	srv := httptest.NewServer(g)
	defer srv.Close()
	c := newEtcdKV(map[string]string{"n1": strings.TrimPrefix(srv.URL, "http://")}, false)
	ctx := context.Background()
	read := func() string {
		t.Helper()
		body, err := c.Do(ctx, "n1", workloads.SetReadOp())
		if err != nil {
			t.Fatal(err)
		}
		var head wire.ReplyHead
		json.Unmarshal(body, &head)
		typ, value := workloads.Outcome(head, body, workloads.SetReadValue, "")
		if typ != history.OpOK {
			t.Fatalf("a read answered %s (%s)", typ, body)
		}
		return value
	}
	if got := read(); got != "[]" {
		t.Errorf("the empty set reads %s, want []", got)
	}
	for _, e := range []int64{10, 2, 33} {
		body, err := c.Do(ctx, "n1", workloads.Op{Process: "c1", F: "add", Fields: map[string]int64{"element": e}})
		if err != nil || !strings.Contains(string(body), `"add_ok"`) {
			t.Fatalf("add %d: %s, %v", e, body, err)
		}
	}
	if got, want := read(), "[2,10,33]"; got != want {
		t.Errorf("the set reads %s, want %s", got, want)
	}
	if g.kv["coup-set/10"] != "10" {
		t.Errorf("the store holds %v, want coup-set/10 = 10", g.kv)
	}
	g.kv["coup-set/x"] = "?"
	if got, want := read(), `[2,10,33,"x"]`; got != want {
		t.Errorf("with a stray key the set reads %s, want %s", got, want)
	}
	last := g.ranges[len(g.ranges)-1]
	if last["keys_only"] != true || last["range_end"] == nil {
		t.Errorf("the read asked %v, want a range over the prefix, keys only", last)
	}
}

// With a prefix (an episode's), the kv's keys and the set's are under
// it, and a read of the set sees only its own episode's elements.
func TestEtcdPrefix(t *testing.T) {
	g := &gateway{kv: map[string]string{"coup-set/7": "7", "e1-coup-set/8": "8"}}
	srv := httptest.NewServer(g)
	defer srv.Close()
	c := newEtcdKV(map[string]string{"n1": strings.TrimPrefix(srv.URL, "http://")}, false)
	c.prefix = "e2-"
	ctx := context.Background()
	if _, err := c.Do(ctx, "n1", workloads.Op{Process: "c1", F: "add", Fields: map[string]int64{"element": 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, "n1", workloads.Op{Process: "c1", F: workloads.FWrite, Fields: map[string]int{"key": 1, "value": 5}}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"e2-coup-set/3", "e2-coup-kv/1"} {
		if _, ok := g.kv[k]; !ok {
			t.Errorf("the store lacks %s: %v", k, g.kv)
		}
	}
	body, err := c.Do(ctx, "n1", workloads.SetReadOp())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"value":[3]`) {
		t.Errorf("the episode's set reads %s, want [3] alone", body)
	}
}
