package bully

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/nodetest"
)

// quiet disables probing, so that only election traffic is counted.
var quiet = map[string]any{"probe_every": "1h"}

func cluster(t *testing.T, ids []int, params map[string]any) *nodetest.Network {
	t.Helper()
	net, err := nodetest.New(Spec, len(ids), ids, params)
	if err != nil {
		t.Fatal(err)
	}
	net.Start()
	return net
}

func ascending(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i + 1
	}
	return ids
}

func checkAllTrust(t *testing.T, net *nodetest.Network, want string) {
	t.Helper()
	for node, got := range net.Leaders() {
		if got != want {
			t.Errorf("%s trusts %q, want %q", node, got, want)
		}
	}
}

// electionMessages counts election, answer and coordinator messages.
func electionMessages(sent map[string]int) int {
	return sent["election"] + sent["answer"] + sent["coordinator"]
}

// claimants lists the nodes that ever reported themselves leader.
func claimants(net *nodetest.Network) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range net.Reports {
		if r.What == "leader" && r.Value == r.Node && !seen[r.Node] {
			seen[r.Node] = true
			out = append(out, r.Node)
		}
	}
	return out
}

// Every process begins with an election: the highest id wins and is the
// only one ever to claim leadership.
func TestStartElectsTheHighest(t *testing.T) {
	for _, ids := range [][]int{{3, 9, 1, 7, 5}, ascending(8), {2, 1}, {4}} {
		net := cluster(t, ids, nil)
		net.RunFor(time.Second)
		best := 0
		for i, id := range ids {
			if id > ids[best] {
				best = i
			}
		}
		want := fmt.Sprintf("n%d", best+1)
		checkAllTrust(t, net, want)
		if got := claimants(net); len(got) != 1 || got[0] != want {
			t.Errorf("ids %v: claimants %v, want only %s", ids, got, want)
		}
	}
}

// The lowest id detects the coordinator's crash (it is asked to elect):
// every process starts an election, each answers every lower one, and the
// second highest announces: exactly n²−n−1 messages, the worst case.
func TestLowestDetectingCostsTheWorstCase(t *testing.T) {
	for n := 3; n <= 12; n++ {
		net := cluster(t, ascending(n), quiet)
		net.RunFor(time.Second)
		top, second := fmt.Sprintf("n%d", n), fmt.Sprintf("n%d", n-1)
		checkAllTrust(t, net, top)

		before := electionMessages(net.Sent)
		net.Crash(top)
		net.Request("n1", "elect")
		net.RunFor(time.Second)
		checkAllTrust(t, net, second)
		if got, want := electionMessages(net.Sent)-before, WorstCase(n); got != want {
			t.Errorf("n=%d: %d messages, want n²−n−1 = %d", n, got, want)
		}
		if got, bound := electionMessages(net.Sent)-before, Bound(n, 1); got > bound {
			t.Errorf("n=%d: %d messages, over the bound %d", n, got, bound)
		}
	}
}

// The best case: the second highest detects, declares itself after T and
// tells the n−2 lower processes (plus its election to the dead one).
func TestSecondHighestDetectingIsCheap(t *testing.T) {
	n := 6
	net := cluster(t, ascending(n), quiet)
	net.RunFor(time.Second)
	before := electionMessages(net.Sent)
	net.Crash("n6")
	net.Request("n5", "elect")
	net.RunFor(time.Second)
	checkAllTrust(t, net, "n5")
	if got, want := electionMessages(net.Sent)-before, (n-2)+1; got != want {
		t.Errorf("%d messages, want n−2 coordinator and 1 election = %d", got, want)
	}
}

// Probes find a crashed coordinator within a probe interval plus T; the
// detectors first drop their belief, then the highest live id is elected.
func TestProbesDetectACrashedCoordinator(t *testing.T) {
	net := cluster(t, []int{3, 9, 1, 7, 5}, nil)
	net.RunFor(500 * time.Millisecond)
	checkAllTrust(t, net, "n2")
	crashAt := net.Now()
	net.Crash("n2")
	net.RunFor(time.Second)
	checkAllTrust(t, net, "n4") // id 7
	dropped := 0
	for _, r := range net.Reports {
		if r.At > crashAt && r.What == "leader" && r.Value == "" {
			dropped++
		}
	}
	if dropped == 0 {
		t.Error("no process reported losing its leader after the crash")
	}
	// The new coordinator was declared within two probe intervals and
	// two Ts (detection, then its own election) of the crash.
	p, _ := ParseParams(nodes.NewParams(nil))
	for _, r := range net.Reports {
		if r.At > crashAt && r.What == "leader" && r.Node == "n4" && r.Value == "n4" {
			if d := r.At - crashAt; d > p.ProbeEvery+3*p.T() {
				t.Errorf("n4 took over %v after the crash, want within %v", d, p.ProbeEvery+3*p.T())
			}
		}
	}
}

// The coordinator-elect crashes before announcing: the processes it
// answered wait T′, start again, and the next highest wins.
func TestCoordinatorElectCrashingMeansASecondElection(t *testing.T) {
	net := cluster(t, ascending(5), quiet)
	net.RunFor(time.Second)
	net.Crash("n5")
	net.Request("n1", "elect")
	net.RunFor(5 * time.Millisecond) // n4 has answered and is waiting T for n5
	net.Crash("n4")
	firstRound := net.Sent["election"]
	net.RunFor(time.Second)
	checkAllTrust(t, net, "n3")
	if net.Sent["election"] == firstRound {
		t.Error("no second election after the coordinator-elect crashed")
	}
}

// A restarted process begins with an election: the highest id takes over
// again from the live coordinator that replaced it (the bully).
func TestRestartedHighestTakesOver(t *testing.T) {
	net := cluster(t, ascending(5), nil)
	net.RunFor(500 * time.Millisecond)
	net.Crash("n5")
	net.RunFor(time.Second)
	checkAllTrust(t, net, "n4")
	if err := net.Restart("n5"); err != nil {
		t.Fatal(err)
	}
	net.RunFor(time.Second)
	checkAllTrust(t, net, "n5")
}

// A coordinator message from a lower id makes a higher process record it,
// then start an election, which it wins.
func TestLowerCoordinatorIsBullied(t *testing.T) {
	net := cluster(t, ascending(4), quiet)
	net.RunFor(time.Second)
	net.Crash("n4")
	net.Request("n3", "elect") // n3 wins and tells n1, n2
	net.RunFor(time.Second)
	checkAllTrust(t, net, "n3")
	if err := net.Restart("n4"); err != nil {
		t.Fatal(err)
	}
	net.RunFor(time.Second)
	checkAllTrust(t, net, "n4")
}

func TestParams(t *testing.T) {
	p, err := ParseParams(nodes.NewParams(map[string]any{"t_trans": "20ms", "t_process": "10ms"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.T(), 50*time.Millisecond; got != want {
		t.Errorf("T = %v, want 2·20ms + 10ms = %v", got, want)
	}
	if got, want := p.TPrime, 110*time.Millisecond; got != want {
		t.Errorf("default T′ = %v, want 2T + Tprocess = %v", got, want)
	}
	for _, tt := range []struct {
		params map[string]any
		key    string
	}{
		{map[string]any{"t_tarns": "1ms"}, "t_tarns"},
		{map[string]any{"t_trans": "soon"}, "t_trans"},
		{map[string]any{"probe_every": "0s"}, "probe_every"},
		{map[string]any{"t_prime": 5}, "t_prime"},
	} {
		_, err := Spec.New(nodes.NewParams(tt.params))
		if err == nil || !strings.HasPrefix(err.Error(), "params."+tt.key+":") {
			t.Errorf("params %v: error %v, want one naming params.%s", tt.params, err, tt.key)
		}
	}
}

func TestBounds(t *testing.T) {
	for _, tt := range []struct{ n, worst, bound int }{{3, 5, 12}, {5, 19, 40}, {10, 89, 180}} {
		if got := WorstCase(tt.n); got != tt.worst {
			t.Errorf("WorstCase(%d) = %d, want %d", tt.n, got, tt.worst)
		}
		if got := Bound(tt.n, 1); got != tt.bound {
			t.Errorf("Bound(%d) = %d, want %d", tt.n, got, tt.bound)
		}
	}
}

// wrapped is a machine that runs bully inside it, as New allows: it hands
// bully an Env that copies the leader reports into its own belief.
type wrapped struct {
	*Machine
	seen []string
}

type seeingEnv struct {
	nodes.Env
	w *wrapped
}

func (e seeingEnv) Report(r nodes.Report) {
	e.Env.Report(r)
	if r.What == "leader" {
		e.w.seen = append(e.w.seen, r.Value)
	}
}

func (w *wrapped) Start(env nodes.Env) { w.Machine.Start(seeingEnv{env, w}) }

// New builds a process from parsed parameters that another machine can
// run inside its own, seeing every leader report bully makes; the
// parameters it was given are the ones it uses.
func TestNewRunsInsideAnotherMachine(t *testing.T) {
	var ws []*wrapped
	spec := Spec
	spec.New = func(p *nodes.Params) (nodes.Machine, error) {
		params, err := ParseParams(p)
		if err != nil {
			return nil, err
		}
		w := &wrapped{Machine: New(params)}
		ws = append(ws, w)
		return w, nil
	}
	params := map[string]any{"t_trans": "100ms"}
	net, err := nodetest.New(spec, 4, nil, params)
	if err != nil {
		t.Fatal(err)
	}
	net.Start()
	net.RunFor(100 * time.Millisecond)
	net.Crash("n4")
	crashAt := net.Now()
	net.RunFor(2 * time.Second)
	checkAllTrust(t, net, "n3")
	for i, w := range ws {
		node := fmt.Sprintf("n%d", i+1)
		var want []string
		for _, r := range net.Reports {
			if r.Node == node && r.What == "leader" {
				want = append(want, r.Value)
			}
		}
		if strings.Join(w.seen, ",") != strings.Join(want, ",") {
			t.Errorf("%s: the wrapper saw leaders %q, the network %q", node, w.seen, want)
		}
	}
	// With Ttrans = 100ms (T = 205ms, not the default 25ms) the probe
	// reply and n3's own election each take T: n3 takes over between 2T
	// and a probe interval plus 3T after the crash.
	p, _ := ParseParams(nodes.NewParams(params))
	took := time.Duration(-1)
	for _, r := range net.Reports {
		if r.At > crashAt && r.Node == "n3" && r.What == "leader" && r.Value == "n3" {
			took = r.At - crashAt
			break
		}
	}
	if took < 2*p.T() || took > p.ProbeEvery+3*p.T() {
		t.Errorf("n3 took over %v after the crash, want between %v and %v", took, 2*p.T(), p.ProbeEvery+3*p.T())
	}
}
