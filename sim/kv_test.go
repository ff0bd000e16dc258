package sim

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/workloads"
)

// localKV is a test machine serving lin-kv from its own map: one node of
// it is a linearizable store; several are not, since none tells the others
// of its writes.
type localKV struct {
	env   nodes.Env
	store map[int]int
}

func (m *localKV) Start(env nodes.Env)       { m.env, m.store = env, map[int]int{} }
func (m *localKV) Receive(string, nodes.Msg) {}
func (m *localKV) Timeout(string)            {}
func (m *localKV) Request(r nodes.Request) {
	var req struct {
		Key   int `json:"key"`
		Value int `json:"value"`
		From  int `json:"from"`
		To    int `json:"to"`
	}
	if err := json.Unmarshal(r.Body, &req); err != nil {
		m.env.Fail(r, nodes.Error{Code: 12, Text: err.Error(), Definite: true})
		return
	}
	v, ok := m.store[req.Key]
	switch {
	case r.Op == "write":
		m.store[req.Key] = req.Value
		m.env.ReplyWith(r, nil)
	case !ok:
		m.env.Fail(r, nodes.Error{Code: 20, Text: "no such key"})
	case r.Op == "read":
		m.env.ReplyWith(r, struct {
			Value int `json:"value"`
		}{v})
	case v != req.From:
		m.env.Fail(r, nodes.Error{Code: 22, Text: "from does not match"})
	default:
		m.store[req.Key] = req.To
		m.env.ReplyWith(r, nil)
	}
}

var localKVSpec = nodes.Spec{
	Name: "local-kv", Codec: nodes.NewCodec(),
	New: func(p *nodes.Params) (nodes.Machine, error) { return &localKV{}, p.Unused() },
}

// The lin-kv workload runs in the simulator as in a real run: its request
// bodies reach the machine and its answers' fields reach the history. One
// node is linearizable; two that share nothing are not.
func TestKVWorkloadInTheSimulator(t *testing.T) {
	for _, tt := range []struct {
		nodes []string
		want  checks.Validity
	}{
		{[]string{"n1"}, checks.True},
		{[]string{"n1", "n2"}, checks.False},
	} {
		w := &workloads.KV{Clients: 4, Nodes: tt.nodes, Rate: 500, Keys: 2, Values: 5, Mix: workloads.Mix{Read: 1, Write: 1, Cas: 1}, Until: 400 * time.Millisecond, Seed: 9}
		s, err := New(Config{Spec: localKVSpec, Nodes: tt.nodes, Seed: 9, Latency: time.Millisecond, Duration: 500 * time.Millisecond, Recovery: 100 * time.Millisecond, Workload: w})
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.Run()
		if err != nil {
			t.Fatal(err)
		}
		rs, _, err := checks.Run(h, []string{"kv-linearizable"})
		if err != nil {
			t.Fatal(err)
		}
		if r := rs[0]; r.Valid != tt.want || r.Figures["reads"].(int) < 20 {
			t.Errorf("%d nodes: got %v with %v reads (%s), want %v", len(tt.nodes), r.Valid, r.Figures["reads"], r.Explanation, tt.want)
		}
	}
}
