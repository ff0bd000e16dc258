package hirschbergsinclair

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/nodetest"
)

func newRing(t testing.TB, ids []int) *nodetest.Network {
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

func increasing(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i + 1
	}
	return ids
}

func decreasing(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = n - i
	}
	return ids
}

// bitReversal puts ids 1..n (n a power of two) in bit-reversed order round
// the ring, so that many processes are local maxima at every scale: a hard
// arrangement for Hirschberg–Sinclair.
func bitReversal(n int) []int {
	width := CeilLog2(n)
	ids := make([]int, n)
	for i := range ids {
		r := 0
		for b := 0; b < width; b++ {
			if i&(1<<b) != 0 {
				r |= 1 << (width - 1 - b)
			}
		}
		ids[i] = r + 1
	}
	return ids
}

func electAll(t testing.TB, ids []int) *nodetest.Network {
	t.Helper()
	net := newRing(t, ids)
	for _, node := range net.Nodes() {
		net.Request(node, "elect")
	}
	if err := net.Settle(1 << 24); err != nil {
		t.Fatal(err)
	}
	return net
}

// Exact counts worked out by hand, every process initiating.
//
// Ids 1 2 3 4 round the ring. Phase 0: 8 probes of one hop; 1 gets no
// reply (2 and 4 are larger), 2 and 3 one each (from 1 and 2), 4 both:
// 4 replies. Phase 1: only 4 goes on, 2 hops each way and back: 4 probes,
// 4 replies. Phase 2: 4 hops reach round the ring: both probes come home
// after 4 hops (8 probes) and the announcement goes round (4). Total 32.
//
// Ids 2 1: phase 0 costs 4 probes and 2 replies (to 2); in phase 1 both of
// 2's probes come home after 2 hops (4) and the announcement costs 2: 12.
//
// A ring of one: both probes come home at once, the announcement too: 3.
func TestExactCountsOnHandWorkedRings(t *testing.T) {
	for _, tt := range []struct {
		ids  []int
		want int
	}{
		{[]int{1, 2, 3, 4}, 32},
		{[]int{2, 1}, 12},
		{[]int{7}, 3},
	} {
		probes, replies, elected := Cost(tt.ids)
		if got := probes + replies + elected; got != tt.want {
			t.Errorf("Cost(%v) = %d probes + %d replies + %d elected = %d, want %d", tt.ids, probes, replies, elected, got, tt.want)
		}
		net := electAll(t, tt.ids)
		if got := net.Messages(); got != tt.want {
			t.Errorf("ids %v: the machines sent %d messages (%v), want %d", tt.ids, got, net.Sent, tt.want)
		}
		for node, got := range net.Leaders() {
			if want := maxNode(tt.ids); got != want {
				t.Errorf("ids %v: %s trusts %q, want %q", tt.ids, node, got, want)
			}
		}
	}
}

// On many arrangements, every process initiating, the machines elect the
// highest id, send exactly what Cost counts, and stay within the bound
// 8n(⌈log2 n⌉+1).
func TestAllInitiateMatchesCostWithinBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var arrangements [][]int
	for _, n := range []int{2, 3, 5, 8, 13, 16, 31, 64, 100} {
		arrangements = append(arrangements, increasing(n), decreasing(n))
		perm := rng.Perm(n)
		for i := range perm {
			perm[i]++
		}
		arrangements = append(arrangements, perm)
	}
	for _, n := range []int{8, 16, 64, 128} {
		arrangements = append(arrangements, bitReversal(n))
	}
	for _, ids := range arrangements {
		n := len(ids)
		net := electAll(t, ids)
		probes, replies, elected := Cost(ids)
		if net.Sent["probe"] != probes || net.Sent["reply"] != replies || net.Sent["elected"] != elected {
			t.Errorf("n=%d ids %v: sent %v, Cost says probe %d reply %d elected %d", n, ids, net.Sent, probes, replies, elected)
		}
		if got, bound := net.Messages(), Bound(n, n); got > bound {
			t.Errorf("n=%d ids %v: %d messages, over the bound 8n(⌈log2 n⌉+1) = %d", n, ids, got, bound)
		}
		for node, got := range net.Leaders() {
			if want := maxNode(ids); got != want {
				t.Errorf("n=%d: %s trusts %q, want %q", n, node, got, want)
				break
			}
		}
	}
}

// One initiator wakes the rest with its probes; every woken process is a
// candidate, so the election costs exactly what Cost counts, wherever the
// initiator sits, and the highest id wins.
func TestOneInitiatorElectsTheMax(t *testing.T) {
	for _, ids := range [][]int{{3, 9, 1, 7, 5}, {1, 5, 2, 3, 4}, increasing(9), decreasing(9), bitReversal(16)} {
		for init := range ids {
			net := newRing(t, ids)
			net.Request(net.Nodes()[init], "elect")
			if err := net.Settle(1 << 20); err != nil {
				t.Fatal(err)
			}
			for node, got := range net.Leaders() {
				if want := maxNode(ids); got != want {
					t.Errorf("ids %v, initiator n%d: %s trusts %q, want %q", ids, init+1, node, got, want)
				}
			}
			probes, replies, elected := Cost(ids)
			if net.Sent["probe"] != probes || net.Sent["reply"] != replies || net.Sent["elected"] != elected {
				t.Errorf("ids %v, initiator n%d: sent %v, Cost says probe %d reply %d elected %d", ids, init+1, net.Sent, probes, replies, elected)
			}
		}
	}
}

// The winner reports itself leader before it sends the announcement, and
// every other process learns the leader from the announcement.
func TestReportsBeforeAnnouncing(t *testing.T) {
	ids := []int{3, 9, 1, 7, 5}
	net := newRing(t, ids)
	var firstElected time.Duration = -1
	net.Trace = func(at time.Duration, from, to string, m nodes.Msg) {
		if _, ok := m.(Elected); ok && firstElected < 0 {
			firstElected = at
		}
	}
	net.Request("n1", "elect")
	if err := net.Settle(10000); err != nil {
		t.Fatal(err)
	}
	var winnerAt time.Duration = -1
	for _, r := range net.Reports {
		if r.What == "leader" && r.Node == "n2" {
			winnerAt = r.At
		}
	}
	if winnerAt < 0 || firstElected < 0 || winnerAt >= firstElected {
		t.Errorf("winner reported at %v, first announcement delivered at %v", winnerAt, firstElected)
	}
}

// A crash breaks the ring: the highest id's probes never come home.
func TestCrashStopsTheElection(t *testing.T) {
	net := newRing(t, increasing(6))
	net.Crash("n3")
	for _, node := range net.Nodes() {
		net.Request(node, "elect")
	}
	if err := net.Settle(10000); err != nil {
		t.Fatal(err)
	}
	for node, got := range net.Leaders() {
		if got != "" {
			t.Errorf("%s trusts %q with a broken ring, want nobody", node, got)
		}
	}
}

func TestCeilLog2AndBound(t *testing.T) {
	for _, tt := range []struct{ n, log, bound int }{{1, 0, 8}, {2, 1, 32}, {3, 2, 72}, {4, 2, 96}, {5, 3, 160}, {8, 3, 256}, {9, 4, 360}, {256, 8, 18432}} {
		if got := CeilLog2(tt.n); got != tt.log {
			t.Errorf("CeilLog2(%d) = %d, want %d", tt.n, got, tt.log)
		}
		if got := Bound(tt.n, tt.n); got != tt.bound {
			t.Errorf("Bound(%d) = %d, want %d", tt.n, got, tt.bound)
		}
	}
}
