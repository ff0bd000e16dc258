package sim

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/scenario"
)

// gossipSet is a test machine serving Maelstrom's g-set: it acknowledges
// an add at once and tells every peer of it, once, with no answer and no
// anti-entropy, so an add acknowledged behind a partition never reaches
// the other side: the asynchronous replication that loses writes.
type gossipSet struct {
	env nodes.Env
	set map[int64]bool
}

type setGossip struct {
	Element int64 `json:"element"`
}

func (setGossip) Type() string { return "gossip" }

func (m *gossipSet) Start(env nodes.Env) { m.env, m.set = env, map[int64]bool{} }
func (m *gossipSet) Timeout(string)      {}
func (m *gossipSet) Receive(_ string, msg nodes.Msg) {
	if g, ok := msg.(setGossip); ok {
		m.set[g.Element] = true
	}
}
func (m *gossipSet) Request(r nodes.Request) {
	switch r.Op {
	case "add":
		var req struct {
			Element int64 `json:"element"`
		}
		if err := json.Unmarshal(r.Body, &req); err != nil {
			m.env.Fail(r, nodes.Error{Code: 12, Text: err.Error(), Definite: true})
			return
		}
		m.set[req.Element] = true
		for _, n := range m.env.Nodes() {
			if n != m.env.Self() {
				m.env.Send(n, setGossip{Element: req.Element})
			}
		}
		m.env.ReplyWith(r, nil)
	case "read":
		elems := []int64{}
		for e := range m.set {
			elems = append(elems, e)
		}
		slices.Sort(elems)
		m.env.ReplyWith(r, struct {
			Value []int64 `json:"value"`
		}{elems})
	default:
		m.env.Fail(r, nodes.Error{Code: 10, Text: "not supported", Definite: true})
	}
}

var gossipSetSpec = nodes.Spec{
	Name: "gossip-set", Codec: nodes.NewCodec(setGossip{}),
	New: func(p *nodes.Params) (nodes.Machine, error) { return &gossipSet{}, p.Unused() },
}

const setScenario = `name = "gossip-set"
nodes = 3
duration = "1s"
recovery = "500ms"

[workload]
kind = "set"
rate = 300
timeout = "100ms"
`

// The set workload runs in the simulator through the lifecycle every
// driver shares: adds, the heal, then the final reads, judged by
// lost-writes. Without faults nothing is lost; with n3 cut off, the adds
// it acknowledged meanwhile never reach n1, whose client is the one
// reader, and are counted lost, in a window inside the partition, at n3;
// with every client reading, they are in n3's final read only: present
// for some readers, missing for others, not lost: the replicas disagree,
// a finding of its own (lost-writes false, and it says so).
func TestSetWorkloadInTheSimulator(t *testing.T) {
	cut := `
[[faults]]
kind = "partition"
shape = "isolate"
target = "n3"
at = "300ms"
for = "400ms"
`
	for _, tt := range []struct {
		name, extra string
		want        checks.Validity
		lost        bool
		divergent   bool
	}{
		{"no fault", "", checks.True, false, false},
		{"n3 cut off, n1 reads", "final_reads = \"c1\"\n" + cut, checks.False, true, false},
		{"n3 cut off, every client reads", cut, checks.False, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := scenario.ParseMachine("set.toml", setScenario+tt.extra)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Simulate(sc, 3, Options{Spec: &gossipSetSpec})
			if err != nil {
				t.Fatal(err)
			}
			r, ok := out.Results.Checks["lost-writes"]
			if !ok {
				t.Fatalf("checks run: %v, want lost-writes among them", out.Results.Order)
			}
			if r.Valid != tt.want {
				t.Fatalf("lost-writes %v (%s), want %v", r.Valid, r.Explanation, tt.want)
			}
			t.Logf("%v: %s", r.Valid, r.Explanation)
			fig := func(k string) int { n, _ := r.Figures[k].(int); return n }
			if fig("acknowledged") < 100 || fig("final_reads") == 0 || fig("unjudged") != 0 {
				t.Fatalf("figures %v: want a hundred adds or more, final reads, every add judged", r.Figures)
			}
			if lost := fig("acknowledged_lost"); (lost > 0) != tt.lost {
				t.Errorf("%d lost (%s)", lost, r.Explanation)
			}
			if d := fig("acknowledged_divergent"); (d > 0) != tt.divergent {
				t.Errorf("%d divergent (%s)", d, r.Explanation)
			}
			if tt.divergent && !strings.HasPrefix(r.Explanation, "the replicas disagree: ") {
				t.Errorf("lost-writes says %q, want the replicas' disagreement first", r.Explanation)
			}
			if !tt.lost {
				return
			}
			if !slices.Equal(r.Nodes, []string{"n3"}) {
				t.Errorf("lost at %v, want n3 alone", r.Nodes)
			}
			if iv := r.Interval; iv == nil || iv.From < 300e6 || iv.To > 700e6 {
				t.Errorf("lost writes acknowledged in %+v, want within the partition (300ms to 700ms)", iv)
			}
			// The final read comes after the heal, 250ms into the recovery.
			for _, e := range r.Evidence {
				if e.F == "read" && e.Time < 1250e6 {
					t.Errorf("a final read at %dns, before 1.25s", e.Time)
				}
			}
		})
	}
}
