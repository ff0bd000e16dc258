package sim

import (
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

func TestParseStrategy(t *testing.T) {
	tests := []struct {
		in, want string
		depth    int
		bad      bool
	}{
		{in: "", want: "random"},
		{in: "random", want: "random"},
		{in: "pct", want: "pct", depth: 3},
		{in: "pct:5", want: "pct:5", depth: 5},
		{in: "pct:3", want: "pct", depth: 3},
		{in: "bias", want: "bias"},
		{in: "portfolio", want: "portfolio"},
		{in: "pct:0", bad: true},
		{in: "pct:x", bad: true},
		{in: "bias:2", bad: true},
		{in: "dfs", bad: true},
	}
	for _, tt := range tests {
		st, err := ParseStrategy(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("%q: no error, got %+v", tt.in, st)
			}
			continue
		}
		if err != nil || st.String() != tt.want || st.Depth != tt.depth {
			t.Errorf("%q: %+v (%s), %v; want %s, depth %d", tt.in, st, st, err, tt.want, tt.depth)
		}
	}
}

func TestPortfolioTakesTurns(t *testing.T) {
	p := Strategy{Name: Portfolio}
	want := []string{"pct", "bias", "random", "pct"} // seeds 1, 2, 3, 4
	for i, w := range want {
		if got := p.For(int64(i + 1)).String(); got != w {
			t.Errorf("seed %d runs %s, want %s", i+1, got, w)
		}
	}
	if got := p.For(-1).String(); got != "bias" {
		t.Errorf("seed -1 runs %s, want bias", got)
	}
}

// Under every strategy a seed gives one history, and the strategies that
// steer give other histories than uniform random choices; the zero
// strategy is Random.
func TestStrategiesDeterministic(t *testing.T) {
	sc, err := scenario.Load("../scenarios/sim/bully-replace-race.toml")
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{}
	for _, name := range []string{"", "random", "pct", "pct:2", "bias", "portfolio"} {
		st, err := ParseStrategy(name)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Twice(sc, 4, Options{Strategy: st})
		if err != nil {
			t.Fatal(err)
		}
		if out.Hash != out.Rehash {
			t.Errorf("%s: two runs of seed 4 gave %s and %s", st, out.Hash, out.Rehash)
		}
		hashes[name] = out.Hash
	}
	if hashes[""] != hashes["random"] {
		t.Error("the zero strategy is not Random")
	}
	for _, name := range []string{"pct", "pct:2", "bias"} {
		if hashes[name] == hashes["random"] {
			t.Errorf("%s gave the history of random choices", name)
		}
	}
	if hashes["portfolio"] != hashes["pct"] { // seed 4 is PCT's turn
		t.Errorf("portfolio at seed 4 did not run PCT")
	}
}

// Under PCT each message arrives after the bare latency or after all of
// the jitter (just under it), never in between, and the change points
// move some node from early to late.
func TestPCTDelays(t *testing.T) {
	src := floodScenario(4, "10ms", "500ms", "", "") + "\n[network]\nlatency = \"2ms\"\njitter = \"1ms\"\nfifo = false\n"
	sc, err := scenario.Parse("pct.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	lateFrom := map[string]map[bool]bool{}
	for seed := int64(1); seed <= 20; seed++ {
		out, err := Simulate(sc, seed, Options{Strategy: Strategy{Name: PCT, Depth: 3}})
		if err != nil {
			t.Fatal(err)
		}
		l := messages(out.History)
		for _, id := range l.ids {
			send := l.send[id]
			for _, d := range l.delivers[id] {
				delay := time.Duration(d.Time - send.Time)
				late := delay == 3*time.Millisecond-1
				if delay != 2*time.Millisecond && !late {
					t.Fatalf("seed %d: message %d took %s, want 2ms or just under 3ms", seed, id, delay)
				}
				key := send.Src + "@" + string(rune('0'+seed%10))
				if lateFrom[key] == nil {
					lateFrom[key] = map[bool]bool{}
				}
				lateFrom[key][late] = true
			}
		}
	}
	changed := 0
	for _, m := range lateFrom {
		if m[true] && m[false] {
			changed++
		}
	}
	if changed == 0 {
		t.Error("no node ever changed from early to late: no change point took effect")
	}
}

// Under Bias scheduled faults start when a node's belief changes (or at
// the end of their window, when none changes), which they hardly ever do
// under Random, and a fault that lasts keeps its length.
func TestBiasStartsFaultsAtBeliefs(t *testing.T) {
	sc, err := scenario.Parse("bias.toml", `algorithm = "bully"
nodes = 4
duration = "1s"
recovery = "300ms"
[params]
t_trans = "3ms"
t_process = "1ms"
probe_every = "20ms"
[network]
latency = "2ms"
jitter = "1ms"
[[faults]]
kind = "pause"
target = "leader"
at = "50ms"
every = "150ms"
for = "40ms"
random = true
`)
	if err != nil {
		t.Fatal(err)
	}
	atBelief := map[string]int{}
	for seed := int64(1); seed <= 20; seed++ {
		st := Strategy{Name: Bias}
		if seed > 10 {
			st = Strategy{Name: Random}
		}
		out, err := Simulate(sc, seed, Options{Strategy: st})
		if err != nil {
			t.Fatal(err)
		}
		starts := map[string]int64{}
		var lastBelief int64 = -1
		for _, e := range out.History.Events {
			switch {
			case beliefChange(&e):
				lastBelief = e.Time
			case e.Kind == history.KindNemesis && e.Phase == history.PhaseStart:
				starts[e.Name] = e.Time
				if e.Time == lastBelief {
					atBelief[st.Name]++
				}
			case e.Kind == history.KindNemesis && e.Phase == history.PhaseEnd && e.Time < int64(sc.Duration.D):
				if d := time.Duration(e.Time - starts[e.Name]); d != 40*time.Millisecond {
					t.Errorf("seed %d: %s lasted %s, want 40ms", seed, e.Name, d)
				}
			}
		}
	}
	if atBelief[Bias] < 10 || atBelief[Random] > 1 {
		t.Errorf("faults that started at a change of belief: %d under bias, %d under random", atBelief[Bias], atBelief[Random])
	}
}
