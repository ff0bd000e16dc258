package algorithms_test

// Chang–Roberts against Hirschberg–Sinclair: messages per election on
// rings of 8 to 256, every process initiating, run through the machines on
// the in-memory network.
//
//	go test -run TestRingMessageTable -v ./nodes/algorithms   # the table
//	go test -run '^$' -bench RingElection ./nodes/algorithms  # msgs/election

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/changroberts"
	"github.com/coupharness/coup/nodes/hirschbergsinclair"
	"github.com/coupharness/coup/nodes/nodetest"
)

var sizes = []int{8, 16, 32, 64, 128, 256}

// decreasing is Chang–Roberts' worst arrangement: ids n, n−1, …, 1 along
// the ring.
func decreasing(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = n - i
	}
	return ids
}

// bitReversal is ids 1..n in bit-reversed order of their positions (n a
// power of two): local maxima at every scale, a hard arrangement for
// Hirschberg–Sinclair.
func bitReversal(n int) []int {
	width := hirschbergsinclair.CeilLog2(n)
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

// electAll runs one election in which every process initiates and returns
// the messages it cost, after checking that everybody trusts the highest id.
func electAll(tb testing.TB, spec nodes.Spec, ids []int) int {
	net, err := nodetest.New(spec, len(ids), ids, nil)
	if err != nil {
		tb.Fatal(err)
	}
	net.Start()
	for _, node := range net.Nodes() {
		net.Request(node, "elect")
	}
	if err := net.Settle(1 << 26); err != nil {
		tb.Fatal(err)
	}
	top := 0
	for i, id := range ids {
		if id > ids[top] {
			top = i
		}
	}
	for node, l := range net.Leaders() {
		if l != net.Nodes()[top] {
			tb.Fatalf("%s, n=%d: %s trusts %q, want %s", spec.Name, len(ids), node, l, net.Nodes()[top])
		}
	}
	return net.Messages()
}

// The table of docs/algorithms.md. Chang–Roberts costs n(n+1)/2 + n on its
// worst arrangement; Hirschberg–Sinclair stays within 8n(⌈log2 n⌉+1) on
// it and on the bit-reversal arrangement, and costs less than Chang–Roberts'
// worst case from n = 32 on (decreasing ids) and n = 64 on (bit-reversed).
func TestRingMessageTable(t *testing.T) {
	var b strings.Builder
	fmt.Fprintln(&b, "| n | n log2 n | n² | CR, ids decreasing (its worst) | HS, ids decreasing | CR, ids bit-reversed | HS, ids bit-reversed | HS bound 8n(⌈log2 n⌉+1) |")
	fmt.Fprintln(&b, "|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, n := range sizes {
		cr := electAll(t, changroberts.Spec, decreasing(n))
		crRev := electAll(t, changroberts.Spec, bitReversal(n))
		hsDec := electAll(t, hirschbergsinclair.Spec, decreasing(n))
		hsRev := electAll(t, hirschbergsinclair.Spec, bitReversal(n))
		bound := hirschbergsinclair.Bound(n, n)
		if want := n*(n+1)/2 + n; cr != want {
			t.Errorf("n=%d: Chang–Roberts sent %d, want n(n+1)/2 + n = %d", n, cr, want)
		}
		if hsDec > bound || hsRev > bound {
			t.Errorf("n=%d: Hirschberg–Sinclair sent %d and %d, over the bound %d", n, hsDec, hsRev, bound)
		}
		if n >= 32 && hsDec >= cr || n >= 64 && hsRev >= cr {
			t.Errorf("n=%d: Hirschberg–Sinclair sent %d and %d, not below Chang–Roberts' %d", n, hsDec, hsRev, cr)
		}
		nlogn := float64(n) * math.Log2(float64(n))
		fmt.Fprintf(&b, "| %d | %.0f | %d | %d | %d | %d | %d | %d |\n", n, nlogn, n*n, cr, hsDec, crRev, hsRev, bound)
	}
	t.Log("\n" + b.String())
}

// BenchmarkRingElection reports the messages of one election (msgs/election)
// for each algorithm, arrangement and size.
func BenchmarkRingElection(b *testing.B) {
	for _, c := range []struct {
		name    string
		spec    nodes.Spec
		arrange func(int) []int
	}{
		{"chang-roberts/decreasing", changroberts.Spec, decreasing},
		{"hirschberg-sinclair/decreasing", hirschbergsinclair.Spec, decreasing},
		{"chang-roberts/bit-reversed", changroberts.Spec, bitReversal},
		{"hirschberg-sinclair/bit-reversed", hirschbergsinclair.Spec, bitReversal},
	} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
				ids := c.arrange(n)
				msgs := 0
				for b.Loop() {
					msgs = electAll(b, c.spec, ids)
				}
				b.ReportMetric(float64(msgs), "msgs/election")
			})
		}
	}
}
