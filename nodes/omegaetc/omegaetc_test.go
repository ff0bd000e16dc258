package omegaetc

import (
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/nodetest"
)

func cluster(t *testing.T, ids []int) *nodetest.Network {
	t.Helper()
	net, err := nodetest.New(Spec, len(ids), ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	net.Start()
	return net
}

func checkAllTrust(t *testing.T, net *nodetest.Network, want string) {
	t.Helper()
	for node, got := range net.Leaders() {
		if got != want {
			t.Errorf("%s trusts %q, want %q", node, got, want)
		}
	}
}

// lastChange is the time of the last leader report.
func lastChange(net *nodetest.Network) time.Duration {
	var at time.Duration
	for _, r := range net.Reports {
		if r.What == "leader" {
			at = r.At
		}
	}
	return at
}

// timeouts lists a node's timeout metric reports.
func timeouts(net *nodetest.Network, node string) []string {
	var out []string
	for _, r := range net.Reports {
		if r.Node == node && r.What == "metric" && r.Name == "timeout" {
			out = append(out, r.Value)
		}
	}
	return out
}

// With timely links from the start, everyone trusts the smallest id at
// once and never changes; nobody's timeout grows.
func TestTimelyTrustsTheSmallestAtOnce(t *testing.T) {
	net := cluster(t, []int{3, 9, 1, 7, 5})
	net.RunFor(10 * time.Second)
	checkAllTrust(t, net, "n3") // id 1
	if at := lastChange(net); at != 0 {
		t.Errorf("trust changed at %v, want never after the start", at)
	}
	for _, node := range net.Nodes() {
		if got := timeouts(net, node); len(got) != 1 || got[0] != "60" {
			t.Errorf("%s reported timeouts %v, want only the initial 60 (ms)", node, got)
		}
	}
}

// The smallest id crashes: the others' timers expire and trust moves to
// the next id, the smallest correct one, for good.
func TestCrashMovesTrustToTheNextSmallest(t *testing.T) {
	net := cluster(t, []int{3, 9, 1, 7, 5})
	net.RunFor(time.Second)
	net.Crash("n3")
	net.RunFor(10 * time.Second)
	checkAllTrust(t, net, "n1") // id 3
	if at := lastChange(net); at > 2*time.Second {
		t.Errorf("trust still changing at %v", at)
	}
}

// Before the stabilisation time the smallest id's messages are lost for
// longer than the timeout, again and again: the others suspect it, trust the
// next ones, and take it back with a longer timeout when its ALIVE gets
// through. After it (links timely for good) everybody trusts it for ever.
func TestConvergesToTheSmallestOnceTimely(t *testing.T) {
	net := cluster(t, []int{1, 2, 3, 4, 5})
	for i := 0; i < 4; i++ {
		for _, o := range net.Nodes()[1:] {
			net.Block("n1", o)
		}
		net.RunFor(150 * time.Millisecond)
		net.Heal()
		net.RunFor(50 * time.Millisecond)
	}
	gst := net.Now()
	net.RunFor(20 * time.Second)
	checkAllTrust(t, net, "n1")
	if at := lastChange(net); at > gst+time.Second {
		t.Errorf("trust still changing at %v, %v after the stabilisation time", at, at-gst)
	}
	for _, node := range net.Nodes()[1:] {
		got := timeouts(net, node)
		if len(got) < 2 {
			t.Errorf("%s's timeout never grew: %v", node, got)
		}
	}
	// Every wrong suspicion of n1 moved trust away from it, and cost n1 a
	// longer timeout when it was trusted again.
	suspicions := 0
	for _, r := range net.Reports {
		if r.What == "leader" && r.Node == "n2" && r.Value != "n1" {
			suspicions++
		}
	}
	if got := len(timeouts(net, "n2")) - 1; got != suspicions {
		t.Errorf("n2's timeout grew %d times for %d suspicions", got, suspicions)
	}
}

// While n1's ALIVEs to n3 take longer than the timeout, n3 suspects n1
// and trusts the next id, n2; once the link is timely n3 takes n1 back with
// a longer timeout.
func TestSlowLinkBeforeStabilisation(t *testing.T) {
	net := cluster(t, []int{1, 2, 3})
	net.SetLatency("n1", "n3", 500*time.Millisecond)
	net.RunFor(300 * time.Millisecond)
	if got := net.Leader("n3"); got != "n2" {
		t.Errorf("n3 trusts %q while n1's ALIVEs are late, want n2", got)
	}
	net.Heal()
	net.RunFor(5 * time.Second)
	checkAllTrust(t, net, "n1")
	if got := timeouts(net, "n3"); len(got) != 2 || got[1] != "80" {
		t.Errorf("n3's timeouts %v, want 60 then 80 (ms)", got)
	}
}

func TestParams(t *testing.T) {
	p, err := ParseParams(nodes.NewParams(map[string]any{"eta": "10ms"}))
	if err != nil {
		t.Fatal(err)
	}
	if p.Timeout != 30*time.Millisecond || p.Step != 10*time.Millisecond {
		t.Errorf("defaults from eta 10ms: %+v, want timeout 30ms and step 10ms", p)
	}
	for _, tt := range []struct {
		params map[string]any
		key    string
	}{
		{map[string]any{"etta": "1ms"}, "etta"},
		{map[string]any{"eta": "0s"}, "eta"},
		{map[string]any{"step": 3}, "step"},
	} {
		_, err := Spec.New(nodes.NewParams(tt.params))
		if err == nil || !strings.HasPrefix(err.Error(), "params."+tt.key+":") {
			t.Errorf("params %v: error %v, want one naming params.%s", tt.params, err, tt.key)
		}
	}
}
