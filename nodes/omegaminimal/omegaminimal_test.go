package omegaminimal

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

// settledSince is the time of the last leader report of a live node.
func settledSince(net *nodetest.Network) time.Duration {
	live := net.Leaders()
	var at time.Duration
	for _, r := range net.Reports {
		if _, ok := live[r.Node]; ok && r.What == "leader" {
			at = r.At
		}
	}
	return at
}

// With every link timely, everyone settles on the smallest id.
func TestTimelyElectsTheSmallest(t *testing.T) {
	net := cluster(t, []int{3, 9, 1, 7, 5})
	net.RunFor(10 * time.Second)
	checkAllTrust(t, net, "n3") // id 1
	if at := settledSince(net); at > time.Second {
		t.Errorf("trust still changing at %v", at)
	}
}

// The smallest id crashes: its counter grows everywhere, the others' stay
// equal, and everyone settles on the smallest correct id.
func TestCrashElectsTheSmallestCorrect(t *testing.T) {
	net := cluster(t, []int{3, 9, 1, 7, 5})
	net.RunFor(time.Second)
	net.Crash("n3")
	net.RunFor(10 * time.Second)
	checkAllTrust(t, net, "n1") // id 3
	if at := settledSince(net); at > 2*time.Second {
		t.Errorf("trust still changing at %v", at)
	}
}

// Only one ◇-source: n4's outgoing links work, every other link loses
// everything. Nobody hears from anyone but n4, directly or relayed, so
// everyone's counters but n4's grow for ever, and everyone trusts n4,
// although its id is not the smallest.
func TestOneSourceIsEnough(t *testing.T) {
	net := cluster(t, []int{3, 9, 1, 7, 5})
	for _, from := range net.Nodes() {
		for _, to := range net.Nodes() {
			if from != "n4" && from != to {
				net.Block(from, to)
			}
		}
	}
	net.RunFor(20 * time.Second)
	checkAllTrust(t, net, "n4")
	if at := settledSince(net); at > 5*time.Second {
		t.Errorf("trust still changing at %v", at)
	}
}

// Relays carry a heartbeat round a broken direct link: with n1→n2 blocked
// for good, n2 still hears n1 through the others and trusts it.
func TestRelaysBridgeABrokenLink(t *testing.T) {
	net := cluster(t, []int{1, 2, 3, 4})
	net.Block("n1", "n2")
	net.RunFor(10 * time.Second)
	checkAllTrust(t, net, "n1")
}

// Before the stabilisation time the smallest id's outgoing links lose
// everything, again and again; then every link is timely for good. The
// others raised n1's counter, which never comes down, so everyone settles on
// the least suspected process, n2, all the same one, for ever.
func TestSettlesOnTheLeastSuspectedOnceTimely(t *testing.T) {
	net := cluster(t, []int{1, 2, 3, 4, 5})
	for i := 0; i < 4; i++ {
		for _, o := range net.Nodes()[1:] {
			net.Block("n1", o)
		}
		net.RunFor(200 * time.Millisecond)
		net.Heal()
		net.RunFor(100 * time.Millisecond)
	}
	gst := net.Now()
	net.RunFor(20 * time.Second)
	checkAllTrust(t, net, "n2")
	if at := settledSince(net); at > gst+time.Second {
		t.Errorf("trust still changing at %v, %v after the stabilisation time", at, at-gst)
	}
}

// Isolating n1 both ways is symmetric: n1 suspects everyone as much as
// everyone suspects it, the merged counters stay equal, and the smallest id
// is trusted again once the links are timely.
func TestSymmetricIsolationKeepsTheSmallest(t *testing.T) {
	net := cluster(t, []int{1, 2, 3, 4, 5})
	for i := 0; i < 4; i++ {
		net.Isolate("n1")
		net.RunFor(200 * time.Millisecond)
		net.Heal()
		net.RunFor(100 * time.Millisecond)
	}
	gst := net.Now()
	net.RunFor(20 * time.Second)
	checkAllTrust(t, net, "n1")
	if at := settledSince(net); at > gst+time.Second {
		t.Errorf("trust still changing at %v, %v after the stabilisation time", at, at-gst)
	}
}

// Each heartbeat counts once: duplicates, relayed copies and old sequence
// numbers are neither relayed nor merged again.
func TestHeartbeatsAreRelayedOnce(t *testing.T) {
	net := cluster(t, []int{1, 2, 3, 4})
	net.RunFor(20*time.Millisecond - time.Nanosecond) // only the first heartbeats
	n := 4
	if got, want := net.Sent["heartbeat"], n*(n-1)*(n-1); got != want {
		t.Errorf("%d heartbeat messages for one round, want n(n−1)² = %d (each origin's n−1 and each receiver's n−2 relays)", got, want)
	}
}

func TestParams(t *testing.T) {
	for _, tt := range []struct {
		params map[string]any
		key    string
	}{
		{map[string]any{"units": "1ms"}, "units"},
		{map[string]any{"unit": "0s"}, "unit"},
		{map[string]any{"eta": "fast"}, "eta"},
	} {
		_, err := Spec.New(nodes.NewParams(tt.params))
		if err == nil || !strings.HasPrefix(err.Error(), "params."+tt.key+":") {
			t.Errorf("params %v: error %v, want one naming params.%s", tt.params, err, tt.key)
		}
	}
}

// Each process reports the trusted process's suspicion counter when it
// changes: with a crashed smallest id, the counters first grow with the
// suspicions of n3, then settle on n1's, which stops.
func TestReportsLeaderSuspicions(t *testing.T) {
	net := cluster(t, []int{3, 9, 1, 7, 5})
	net.RunFor(time.Second)
	net.Crash("n3")
	net.RunFor(10 * time.Second)
	last := map[string]string{}
	var lastAt time.Duration
	for _, r := range net.Reports {
		if r.What != "metric" || r.Name != MetricLeaderSuspicions {
			continue
		}
		if prev, ok := last[r.Node]; ok && prev == r.Value {
			t.Errorf("%s reported %s=%s twice in a row", r.Node, r.Name, r.Value)
		}
		last[r.Node] = r.Value
		lastAt = r.At
	}
	if len(last) != 5 {
		t.Errorf("%d processes reported the metric, want 5", len(last))
	}
	if lastAt > 5*time.Second {
		t.Errorf("the trusted counter still changes at %v", lastAt)
	}
}
