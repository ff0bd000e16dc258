package bench

import (
	"context"
	"testing"
	"time"
)

// BenchmarkProbe runs the pipelined and one-at-a-time probes on each path,
// one probe run per iteration, and reports what the pinger measured:
//
//	go test ./bench -run '^$' -bench Probe -benchtime 3x
//
// `coup bench` is the fuller measure (interleaved rounds, faults, start-up,
// histories); this is for a quick look from the test tool.
func BenchmarkProbe(b *testing.B) {
	for _, mode := range []string{Pipelined, OneAtATime} {
		for path := range paths {
			b.Run(mode+"/"+pathNames[path], func(b *testing.B) {
				var rate, p50, cpu float64
				for i := 0; i < b.N; i++ {
					c := Case{probe: probeConfig{Mode: mode, Window: 64, Warmup: 50 * time.Millisecond, Time: 300 * time.Millisecond}}
					if mode == OneAtATime {
						c.probe.Window = 1
					}
					cfg := &Config{Probe: probeArgv()}
					f, err := runPath(context.Background(), cfg, &c, path, b.TempDir(), "")
					if err != nil {
						b.Fatal(err)
					}
					rate += f.Throughput()
					p50 += float64(f.P50)
					cpu += float64(f.CPUPerMessage())
				}
				n := float64(b.N)
				b.ReportMetric(rate/n, "roundtrips/s")
				b.ReportMetric(p50/n, "p50-ns")
				b.ReportMetric(cpu/n, "cpu-ns/msg")
			})
		}
	}
}
