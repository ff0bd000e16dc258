package lelann

import (
	"fmt"
	"testing"

	"github.com/coupharness/coup/nodes/nodetest"
)

func newRing(t *testing.T, ids []int) *nodetest.Network {
	t.Helper()
	net, err := nodetest.New(Spec, len(ids), ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	net.Start()
	return net
}

func maxNode(ids []int) string {
	best := 0
	for i, id := range ids {
		if id > ids[best] {
			best = i
		}
	}
	return fmt.Sprintf("n%d", best+1)
}

func decreasing(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = n - i
	}
	return ids
}

// Every process initiates: each of the n tokens travels the whole ring, n²
// messages, and every process picks the highest id.
func TestAllInitiateCostsNSquared(t *testing.T) {
	for _, ids := range [][]int{{7}, {1, 2}, {3, 9, 1, 7, 5}, decreasing(8), decreasing(32), {2, 4, 6, 8, 1, 3, 5, 7}} {
		net := newRing(t, ids)
		for _, node := range net.Nodes() {
			net.Request(node, "elect")
		}
		if err := net.Settle(100 * len(ids) * len(ids)); err != nil {
			t.Fatal(err)
		}
		for node, got := range net.Leaders() {
			if want := maxNode(ids); got != want {
				t.Errorf("ids %v: %s trusts %q, want %q", ids, node, got, want)
			}
		}
		n := len(ids)
		if got, want := net.Messages(), n*n; got != want {
			t.Errorf("ids %v: %d messages, want n² = %d", ids, got, want)
		}
		if got, want := net.Messages(), Bound(n, n); got > want {
			t.Errorf("ids %v: %d messages, over the bound %d", ids, got, want)
		}
	}
}

// One initiator wakes the others with its token; each woken process sends
// its own token before forwarding, so it still costs n² and elects the max.
func TestOneInitiatorWakesTheRing(t *testing.T) {
	ids := []int{3, 9, 1, 7, 5}
	for init := range ids {
		net := newRing(t, ids)
		net.Request(net.Nodes()[init], "elect")
		if err := net.Settle(1000); err != nil {
			t.Fatal(err)
		}
		for node, got := range net.Leaders() {
			if got != "n2" {
				t.Errorf("initiator n%d: %s trusts %q, want n2 (id 9)", init+1, node, got)
			}
		}
		if got, want := net.Messages(), len(ids)*len(ids); got != want {
			t.Errorf("initiator n%d: %d messages, want n² = %d", init+1, got, want)
		}
	}
}

// Each process reports participation before its decision, and decides
// exactly once.
func TestReportsParticipationThenLeader(t *testing.T) {
	net := newRing(t, []int{2, 5, 1, 4, 3})
	net.Request("n3", "elect")
	net.Request("n1", "elect")
	if err := net.Settle(1000); err != nil {
		t.Fatal(err)
	}
	seq := map[string][]string{}
	for _, r := range net.Reports {
		seq[r.Node] = append(seq[r.Node], r.What+"="+r.Value)
	}
	want := "[participant=true participant=false leader=n2]"
	for _, node := range net.Nodes() {
		if got := fmt.Sprint(seq[node]); got != want {
			t.Errorf("%s reported %s, want %s", node, got, want)
		}
	}
}

// A crashed process swallows every token: nobody decides.
func TestCrashStopsEveryDecision(t *testing.T) {
	net := newRing(t, []int{1, 2, 3, 4, 5})
	net.Crash("n4")
	net.Request("n1", "elect")
	if err := net.Settle(1000); err != nil {
		t.Fatal(err)
	}
	for node, got := range net.Leaders() {
		if got != "" {
			t.Errorf("%s trusts %q with a broken ring, want nobody", node, got)
		}
	}
}

func TestUnknownParameterIsRejected(t *testing.T) {
	if _, err := nodetest.New(Spec, 3, nil, map[string]any{"eta": "1ms"}); err == nil {
		t.Error("an unknown parameter was accepted")
	}
}
