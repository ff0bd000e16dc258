package sim

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/coupharness/coup/scenario"
)

// catalogue loads every scenario of the catalogue that the simulator runs
// (those of a built-in state-machine algorithm), from scenarios/ and scenarios/sim/.
func catalogue(tb testing.TB) []*scenario.Scenario {
	tb.Helper()
	var out []*scenario.Scenario
	for _, pattern := range []string{"../scenarios/*.toml", "../scenarios/sim/*.toml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range files {
			sc, err := scenario.Load(f)
			if err != nil {
				tb.Fatal(err)
			}
			if sc.StateMachine() {
				out = append(out, sc)
			}
		}
	}
	if len(out) == 0 {
		tb.Fatal("no scenarios found")
	}
	return out
}

// BenchmarkCatalogue simulates every scenario of the catalogue once per
// iteration (a new seed each time) and reports the simulator's rate:
// message deliveries per second of real time and per second of processor
// time, and virtual time per real time. The checks are not timed. Run it
// on one core: go test -bench Catalogue -cpu 1 ./sim
func BenchmarkCatalogue(b *testing.B) {
	scs := catalogue(b)
	var delivered int64
	var virtual, wall, cpu time.Duration
	hints := make([]int, len(scs))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, sc := range scs {
			b.StopTimer()
			cfg, err := FromScenario(sc, sc.Seed+int64(i))
			if err != nil {
				b.Fatal(err)
			}
			cfg.EventsHint = hints[j]
			b.StartTimer()
			c0, w0 := cpuTime(), time.Now()
			s, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Run(); err != nil {
				b.Fatal(err)
			}
			wall += time.Since(w0)
			cpu += cpuTime() - c0
			if n := len(s.Events()); n+n/8 > hints[j] {
				hints[j] = n + n/8
			}
			st := s.Stats()
			delivered += st.Delivered
			virtual += st.Virtual
			Recycle(&Outcome{array: s.rec.array()})
		}
	}
	b.ReportMetric(float64(delivered)/wall.Seconds(), "deliveries/s")
	b.ReportMetric(float64(delivered)/cpu.Seconds(), "deliveries/cpu-s")
	b.ReportMetric(virtual.Seconds()/wall.Seconds(), "virtual/real")
	b.ReportMetric(0, "ns/op")
}
