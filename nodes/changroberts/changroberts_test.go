package changroberts

import (
	"fmt"
	"testing"

	"github.com/coupharness/coup/nodes/nodetest"
)

// ring builds a network with the given ids in ring order.
func ring(t *testing.T, ids []int) *nodetest.Network {
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

// maxNode is the node holding the largest id.
func maxNode(ids []int) string {
	best := 0
	for i, id := range ids {
		if id > ids[best] {
			best = i
		}
	}
	return fmt.Sprintf("n%d", best+1)
}

// One initiator just after the highest id: its id climbs n−1 hops to the
// highest, whose id goes round once (n), then elected goes round (n): 3n−1.
func TestSingleInitiatorWorstCaseIs3nMinus1(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 16} {
		ids := make([]int, n)
		ids[0] = n // n1 holds the max; n2 (id 1) is right after it
		for i := 1; i < n; i++ {
			ids[i] = i
		}
		net := ring(t, ids)
		net.Request("n2", "elect")
		if err := net.Settle(10 * n * n); err != nil {
			t.Fatal(err)
		}
		checkAllTrust(t, net, "n1")
		if got, want := net.Messages(), 3*n-1; got != want {
			t.Errorf("n=%d: %d messages, want 3n−1 = %d (%v)", n, got, want, net.Sent)
		}
		if got, want := net.Sent["elected"], n; got != want {
			t.Errorf("n=%d: %d elected messages, want %d", n, got, want)
		}
	}
}

// The best case for one initiator: the initiator holds the max; its id goes
// round once and elected goes round once: 2n.
func TestSingleInitiatorHoldingMaxIs2n(t *testing.T) {
	ids := []int{3, 9, 1, 7, 5}
	net := ring(t, ids)
	net.Request("n2", "elect")
	if err := net.Settle(1000); err != nil {
		t.Fatal(err)
	}
	checkAllTrust(t, net, "n2")
	if got, want := net.Messages(), 2*len(ids); got != want {
		t.Errorf("%d messages, want 2n = %d", got, want)
	}
}

// Everyone initiates with ids decreasing along the ring: id k travels k hops
// before a larger id swallows it, so n(n+1)/2 election messages, plus n.
func TestAllInitiateWorstCase(t *testing.T) {
	for _, n := range []int{3, 5, 10, 32} {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = n - i
		}
		net := ring(t, ids)
		for _, node := range net.Nodes() {
			net.Request(node, "elect")
		}
		if err := net.Settle(10 * n * n); err != nil {
			t.Fatal(err)
		}
		checkAllTrust(t, net, "n1")
		if got, want := net.Sent["election"], n*(n+1)/2; got != want {
			t.Errorf("n=%d: %d election messages, want n(n+1)/2 = %d", n, got, want)
		}
		if got, want := net.Sent["elected"], n; got != want {
			t.Errorf("n=%d: %d elected messages, want %d", n, got, want)
		}
	}
}

// Any arrangement and any set of initiators elects the highest id, and
// every process reports participation before it is told the leader.
func TestArbitraryArrangementsElectTheMax(t *testing.T) {
	arrangements := [][]int{{1, 2, 3, 4, 5}, {5, 4, 3, 2, 1}, {3, 9, 1, 7, 5}, {2, 1}, {7}}
	for _, ids := range arrangements {
		for init := range ids {
			net := ring(t, ids)
			net.Request(net.Nodes()[init], "elect")
			net.Request(net.Nodes()[(init+2)%len(ids)], "elect")
			if err := net.Settle(1000); err != nil {
				t.Fatal(err)
			}
			checkAllTrust(t, net, maxNode(ids))
		}
	}
}

// A crashed process breaks the ring: nobody learns a leader.
func TestCrashBreaksTheRing(t *testing.T) {
	net := ring(t, []int{1, 2, 3, 4, 5})
	net.Crash("n4")
	net.Request("n2", "elect")
	if err := net.Settle(1000); err != nil {
		t.Fatal(err)
	}
	checkAllTrust(t, net, "")
}

// Cost agrees with what the machines do for every initiator of a few
// arrangements.
func TestCostMatchesRuns(t *testing.T) {
	for _, ids := range [][]int{{5, 1, 2, 3, 4}, {3, 9, 1, 7, 5}, {1, 2, 3, 4, 5, 6, 7}} {
		for init := range ids {
			net := ring(t, ids)
			net.Request(net.Nodes()[init], "elect")
			if err := net.Settle(1000); err != nil {
				t.Fatal(err)
			}
			election, elected := Cost(ids, init)
			if net.Sent["election"] != election || net.Sent["elected"] != elected {
				t.Errorf("ids %v, initiator n%d: sent %v, Cost says election %d elected %d", ids, init+1, net.Sent, election, elected)
			}
		}
	}
}

func TestBound(t *testing.T) {
	for _, tt := range []struct{ n, init, want int }{{5, 1, 14}, {5, 5, 20}, {8, 8, 44}, {1, 1, 2}} {
		if got := Bound(tt.n, tt.init); got != tt.want {
			t.Errorf("Bound(%d, %d) = %d, want %d", tt.n, tt.init, got, tt.want)
		}
	}
}
