package report

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// heartbeatHistory is an all-to-all heartbeat run of n nodes that sends
// about msgs messages, one in ten lost, with a timeout metric per node:
// the shape of Ω's runs, at any size.
func heartbeatHistory(t testing.TB, n, msgs int) *history.History {
	var nodes []string
	for i := range n {
		nodes = append(nodes, fmt.Sprintf("n%d", i+1))
	}
	b := newHB(nodes...)
	b.meta.GST = msT(600)
	b.starts(0, nodes...)
	rounds := max(1, msgs/(n*(n-1)))
	step := 1000.0 / float64(rounds)
	id := int64(0)
	for r := range rounds {
		at := float64(r) * step
		for i, src := range nodes {
			b.metric(src, "timeout", fmt.Sprint(40+r%20), at)
			for j, dst := range nodes {
				if i == j {
					continue
				}
				id++
				b.send(id, src, dst, "alive", at)
				if id%10 == 0 {
					b.drop(id, at, "loss")
				} else {
					b.deliver(id, at+step/3)
				}
			}
		}
		b.leader(nodes[r%n], nodes[0], at)
	}
	b.end(1100)
	return b.h(t)
}

// BenchmarkWriteReport measures the report of runs from a thousand to a
// quarter of a million messages, and the size of the page.
func BenchmarkWriteReport(b *testing.B) {
	for _, size := range []struct{ nodes, msgs int }{{5, 1000}, {5, 20000}, {5, 250000}, {50, 250000}} {
		b.Run(fmt.Sprintf("nodes=%d/msgs=%d", size.nodes, size.msgs), func(b *testing.B) {
			h := heartbeatHistory(b, size.nodes, size.msgs)
			res, err := verdict.Evaluate(h)
			if err != nil {
				b.Fatal(err)
			}
			var n int
			for b.Loop() {
				var buf bytes.Buffer
				if err := Write(&buf, res, h); err != nil {
					b.Fatal(err)
				}
				n = buf.Len()
			}
			b.ReportMetric(float64(n), "page-bytes")
			b.ReportMetric(float64(len(h.Events)), "events")
		})
	}
}
