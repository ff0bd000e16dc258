package servers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes/wire"
	"github.com/coupharness/coup/workloads"
)

// gateway is a stand-in for etcd's JSON gateway over one map: range, put
// and the compare-value transaction the client sends, with the answers'
// shapes as etcd 3.4 gives them. status, when set, is the answer to every
// request instead.
type gateway struct {
	mu     sync.Mutex
	kv     map[string]string
	status int
	ranges []map[string]any
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.status != 0 {
		w.WriteHeader(g.status)
		io.WriteString(w, `{"error":"etcdserver: request timed out","code":14,"message":"etcdserver: request timed out"}`)
		return
	}
	var in map[string]any
	json.NewDecoder(r.Body).Decode(&in)
	dec := func(v any) string { b, _ := base64.StdEncoding.DecodeString(v.(string)); return string(b) }
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	rangeOf := func(key string) map[string]any {
		if v, ok := g.kv[key]; ok {
			return map[string]any{"kvs": []any{map[string]any{"key": enc(key), "value": enc(v)}}, "count": "1"}
		}
		return map[string]any{}
	}
	var out map[string]any
	switch r.URL.Path {
	case "/v3/kv/range":
		g.ranges = append(g.ranges, in)
		out = rangeOf(dec(in["key"]))
		if end, ok := in["range_end"]; ok { // every key in [key, range_end), keys only
			var kvs []any
			for _, k := range slices.Sorted(maps.Keys(g.kv)) {
				if k >= dec(in["key"]) && k < dec(end) {
					kvs = append(kvs, map[string]any{"key": enc(k)})
				}
			}
			out = map[string]any{"kvs": kvs, "count": fmt.Sprint(len(kvs))}
		}
	case "/v3/kv/put":
		g.kv[dec(in["key"])] = dec(in["value"])
		out = map[string]any{}
	case "/v3/kv/txn":
		cmp := in["compare"].([]any)[0].(map[string]any)
		key := dec(cmp["key"])
		v, ok := g.kv[key]
		if ok && v == dec(cmp["value"]) {
			put := in["success"].([]any)[0].(map[string]any)["request_put"].(map[string]any)
			g.kv[key] = dec(put["value"])
			out = map[string]any{"succeeded": true, "responses": []any{map[string]any{"response_put": map[string]any{}}}}
		} else {
			out = map[string]any{"responses": []any{map[string]any{"response_range": rangeOf(key)}}}
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		return
	}
	// Every answer's header names the member that served it, its raft id
	// in decimal (8e9e05c52164694d in hexadecimal).
	out["header"] = map[string]any{"cluster_id": "14841639068965178418", "member_id": "10276657743932975437", "raft_term": "2"}
	json.NewEncoder(w).Encode(out)
}

func kvOp(f string, fields any) workloads.Op {
	return workloads.Op{Process: "c1", Node: "n1", F: f, Fields: fields}
}

// The etcd client answers as a Maelstrom node would, from what the
// gateway says: a missing key is error 20, a cas whose value differs
// error 22, both definite; reads are serializable when asked.
func TestEtcdKV(t *testing.T) {
	g := &gateway{kv: map[string]string{}}
	srv := httptest.NewServer(g)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	c := newEtcdKV(map[string]string{"n1": addr}, true)
	ctx := context.Background()
	type kvF struct {
		Key   int `json:"key"`
		Value int `json:"value,omitempty"`
		From  int `json:"from,omitempty"`
		To    int `json:"to,omitempty"`
	}
	steps := []struct {
		f      string
		fields kvF
		typ    string
		code   int
		value  string
	}{
		{"read", kvF{Key: 0}, "error", 20, ""},
		{"cas", kvF{Key: 0, From: 1, To: 2}, "error", 20, ""},
		{"write", kvF{Key: 0, Value: 1}, "write_ok", 0, ""},
		{"read", kvF{Key: 0}, "read_ok", 0, "1"},
		{"cas", kvF{Key: 0, From: 3, To: 4}, "error", 22, ""},
		{"cas", kvF{Key: 0, From: 1, To: 4}, "cas_ok", 0, ""},
		{"read", kvF{Key: 0}, "read_ok", 0, "4"},
	}
	for i, s := range steps {
		body, err := c.Do(ctx, "n1", kvOp(s.f, s.fields))
		if err != nil {
			t.Fatalf("step %d (%s): %v", i, s.f, err)
		}
		var head wire.ReplyHead
		var v struct {
			Value json.RawMessage `json:"value"`
		}
		json.Unmarshal(body, &head)
		json.Unmarshal(body, &v)
		if head.Type != s.typ || (s.code != 0 && (head.Code == nil || *head.Code != s.code)) || string(v.Value) != s.value {
			t.Errorf("step %d (%s %+v): got %s, want type %s code %d value %q", i, s.f, s.fields, body, s.typ, s.code, s.value)
		}
		var served struct {
			ServedBy string `json:"served_by"`
		}
		if json.Unmarshal(body, &served); served.ServedBy != "8e9e05c52164694d" {
			t.Errorf("step %d: served_by %q, want the header's member id in hexadecimal, 8e9e05c52164694d", i, served.ServedBy)
		}
		if typ, _ := workloads.Outcome(head, body, nil, ""); s.typ == "error" && typ != history.OpFail {
			t.Errorf("step %d: error %s recorded as %s, want fail", i, body, typ)
		}
	}
	if len(g.ranges) == 0 || g.ranges[0]["serializable"] != true {
		t.Errorf("reads asked %v, want serializable", g.ranges)
	}
}

// An error answer from etcd leaves the outcome unknown; a refused
// connection is definite.
func TestEtcdKVErrors(t *testing.T) {
	g := &gateway{kv: map[string]string{}, status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(g)
	defer srv.Close()
	c := newEtcdKV(map[string]string{"n1": strings.TrimPrefix(srv.URL, "http://")}, false)
	_, err := c.Do(context.Background(), "n1", kvOp("write", map[string]int{"key": 0, "value": 1}))
	if err == nil || errors.Is(err, errDefinite) || !strings.Contains(err.Error(), "request timed out") {
		t.Errorf("a 503: %v, want an indefinite error with etcd's message", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	c = newEtcdKV(map[string]string{"n1": closed}, false)
	if _, err := c.Do(context.Background(), "n1", kvOp("write", map[string]int{"key": 0, "value": 1})); !errors.Is(err, errDefinite) {
		t.Errorf("a refused connection: %v, want a definite error", err)
	}
}
