package proxy

import (
	"sync"
	"testing"
	"time"

	"github.com/coupharness/coup/nemesis"
)

// A bandwidth fault holds a stream to its rate: what a sender that never
// waits gets through the proxy in a few seconds, on a link whose chunks'
// fates are a nemesis's under a bandwidth fault, is within 20% of the
// rate's worth, at two rates (a fault that did nothing, or held back
// too much, is outside it).
func TestBandwidthLimitsAStream(t *testing.T) {
	for _, rate := range []float64{250e3, 2e6} { // bytes a second
		nem, err := nemesis.InForce([]string{"n1", "n2"}, nemesis.Fault{Kind: nemesis.Bandwidth, Target: nemesis.Target{Nodes: []string{"n1"}}, Direction: nemesis.Out, Rate: rate, Burst: 16 << 10})
		if err != nil {
			t.Fatal(err)
		}
		pol, ev := newPolicy(), newEvents()
		var mu sync.Mutex
		zero := time.Now()
		pol.chunk = func(l nemesis.Link, _ uint64, _ int64, b []byte) nemesis.Fate {
			mu.Lock()
			defer mu.Unlock()
			return nem.Decide(nemesis.Msg{Link: l, Type: "stream", Size: len(b)}, time.Since(zero))
		}
		p, tg := start(t, pol, ev, nil)
		a, b := dial(t, p, tg)
		const span = 3 * time.Second
		start := time.Now()
		go func() {
			buf := make([]byte, 16<<10)
			a.SetWriteDeadline(start.Add(span))
			for time.Since(start) < span {
				if _, err := a.Write(buf); err != nil {
					return // the deadline
				}
			}
		}()
		var k int64
		buf := make([]byte, 64<<10)
		b.SetReadDeadline(start.Add(span))
		for {
			n, err := b.Read(buf)
			k += int64(n)
			if err != nil {
				break
			}
		}
		got := float64(k) / time.Since(start).Seconds()
		t.Logf("%d bytes in %v through a %g B/s limit: %.0f B/s (%.2f of it)", k, time.Since(start), rate, got, got/rate)
		if got < 0.8*rate || got > 1.2*rate {
			t.Errorf("%.0f B/s through a %g B/s limit: not within 20%% of it", got, rate)
		}
		p.Close()
	}
}
