package report

import (
	"fmt"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// kvHistory is a real servers' run of three hosts: clients doing ops
// operations over 10 minutes (one in twenty timing out, one in ten
// failing), and every link's counts once a second.
func kvHistory(t testing.TB, ops int) *history.History {
	b := newHB("n1", "n2", "n3")
	b.meta.Algorithm, b.meta.Workload, b.meta.Servers, b.meta.Checks = "etcd", "lin-kv", true, []string{"one-leader-per-term"}
	b.starts(0, "n1", "n2", "n3")
	const run = 600e3 // milliseconds
	for i := range ops {
		at := float64(i) * run / float64(ops)
		p := fmt.Sprintf("c%d", 1+i%10)
		f := []string{"read", "write", "cas"}[i%3]
		typ, took := history.OpOK, 2+float64(i%7)
		switch {
		case i%20 == 0:
			typ, took = history.OpInfo, 1000
		case i%10 == 0:
			typ = history.OpFail
		}
		b.op(p, history.OpInvoke, f, "n1", at).op(p, typ, f, "n1", at+took)
	}
	for s := 1; s <= run/1000; s++ {
		for _, l := range [][2]string{{"n1", "n2"}, {"n1", "n3"}, {"n2", "n1"}, {"n2", "n3"}, {"n3", "n1"}, {"n3", "n2"}} {
			b.add(link(float64(s)*1000, l[0], l[1], int64(1000+s%50), 10, 0))
		}
	}
	return b.end(run).h(t)
}

// BenchmarkOperationsAndLinks measures the report of a real servers' run
// of ten minutes, from a thousand to a million operations, and the size
// of the page.
func BenchmarkOperationsAndLinks(b *testing.B) {
	for _, ops := range []int{1000, 100000, 1000000} {
		b.Run(fmt.Sprintf("ops=%d", ops), func(b *testing.B) {
			h := kvHistory(b, ops)
			m := newReportModel(&verdict.Results{}, h)
			var n int
			for b.Loop() {
				v := m.opsSection()
				l := m.linksSection()
				n = len(v.Latency) + len(v.Rate) + len(l.SVG)
			}
			b.ReportMetric(float64(n), "svg-bytes")
		})
	}
}
