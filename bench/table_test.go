package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestPercentileAndMedian(t *testing.T) {
	xs := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		q    float64
		want int64
	}{{0.5, 5}, {0.9, 9}, {0.99, 10}, {0.1, 1}, {0, 1}, {1, 10}} {
		if got := percentile(xs, c.q); got != c.want {
			t.Errorf("percentile(1..10, %g) = %d, want %d", c.q, got, c.want)
		}
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile of nothing = %d", got)
	}
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median(3,1,2) = %g", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median(4,1,3,2) = %g", got)
	}
	var f Figures
	f.setLatencies([]int64{30, 10, 20, 40})
	if f.P50 != 20 || f.Max != 40 || f.Mean != 25 || f.P99 != 40 {
		t.Errorf("latencies of 10..40: %+v", f)
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{formatCount(735000), "735 000"},
		{formatCount(999.6), "1 000"},
		{formatCount(42), "42"},
		{formatCount(1234567), "1 234 567"},
		{formatDuration(5200), "5.2µs"},
		{formatDuration(142e3), "142µs"},
		{formatDuration(1.234e6), "1.23ms"},
		{formatDuration(25e6), "25.0ms"},
		{formatDuration(0), "-"},
		{formatMultiple(27.4), "27×"},
		{formatMultiple(1.44), "1.4×"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// figures makes round figures: rate round trips per second and a p50 and
// p99 of p50 and p99.
func figures(mode string, rate float64, p50, p99 time.Duration) Figures {
	return Figures{Mode: mode, Completed: int64(rate), Sent: int64(rate), Seconds: 1, P50: int64(p50), P99: int64(p99)}
}

// The table gives medians over rounds, coup's ratio to the relay and the
// targets' marks.
func TestPrintRouter(t *testing.T) {
	cfg := Config{Rounds: 3, Window: 64, Rate: 5000}
	faults := DefaultFaults
	pipe := Case{Title: "pipelined, window 64", probe: probeConfig{Mode: Pipelined}}
	pipe.Runs[Relay] = []Figures{figures(Pipelined, 700000, 0, 0), figures(Pipelined, 100, 0, 0), figures(Pipelined, 800000, 0, 0)}
	pipe.Runs[Coup] = []Figures{figures(Pipelined, 400000, 0, 0)}
	pipe.Runs[Recorded] = []Figures{figures(Pipelined, 210000, 0, 0)}
	for p, perMessage := range [paths]time.Duration{500, 2000, 10000} {
		for i := range pipe.Runs[p] {
			f := &pipe.Runs[p][i]
			f.Pings = 1000
			f.CPU = 2 * 1000 * perMessage
		}
	}
	one := Case{Title: "one at a time", probe: probeConfig{Mode: OneAtATime}}
	one.Runs[Relay] = []Figures{figures(OneAtATime, 1, 10*time.Microsecond, 20*time.Microsecond)}
	one.Runs[Coup] = []Figures{figures(OneAtATime, 1, 25*time.Microsecond, 50*time.Microsecond)}
	one.Runs[Recorded] = []Figures{figures(OneAtATime, 1, 40*time.Microsecond, 90*time.Microsecond)}
	steady := Case{Title: "steady 5000 msg/s", Faults: &faults, probe: probeConfig{Mode: Steady}}
	steady.Runs[Relay] = []Figures{figures(Steady, 2500, 400*time.Microsecond, 900*time.Microsecond)}
	steady.Runs[Coup] = []Figures{figures(Steady, 2500, 500*time.Microsecond, 990*time.Microsecond)}
	lossy := figures(Steady, 2500, 600*time.Microsecond, 1500*time.Microsecond)
	lossy.Lost, lossy.Dup = 50, 25
	steady.Runs[Recorded] = []Figures{lossy}
	r := &Results{Config: cfg, Router: []Case{pipe, one, steady}, Timer: [2]time.Duration{time.Millisecond, 2 * time.Millisecond}}
	var b bytes.Buffer
	r.Print(&b)
	out := squash(b.String())
	for _, want := range []string{
		"pipelined, window 64: round trips/s 700 000 400 000 (0.57×) ✓ 210 000 (0.30×) ✗ ≥ 0.5× / ≥ 0.35×",
		"pipelined, window 64: CPU per message 500ns 2.0µs (4.0×) 10µs (20×)",
		"one at a time: round-trip p50 10µs 25µs (2.50×) ✗ 40µs (4.00×) ✗ ≤ 1.05×",
		"one at a time: round-trip p99 20µs 50µs (2.5×) 90µs (4.5×)",
		"steady 5000 msg/s: round-trip p99",
		"990µs (1.1×) ✓",
		"1.50ms (1.7×) ✗",
		"0.0% / 0.0%",
		"2.0% / 1.0%",
		"fires here after 1.00ms, p50, and 2.00ms, p99",
		"loss 1%, delay 100µs + [0, 100µs), duplication 1%",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

func TestPrintStartupAndHistory(t *testing.T) {
	r := &Results{
		Config: Config{Algorithm: "chang-roberts"},
		Startup: []Startup{
			{Nodes: 3, Coup: []StartupRun{{Up: 230 * time.Millisecond, HarnessPeak: 40e6, NodePeaks: []int64{11e6, 12e6, 10e6}}},
				Bare: []StartupRun{{Up: 100 * time.Millisecond, HarnessPeak: 9e6}}},
			{Nodes: 1000,
				Coup: []StartupRun{{Up: 2500 * time.Millisecond, HarnessPeak: 150e6}, {Up: 2300 * time.Millisecond, HarnessPeak: 90e6, NodePeaks: []int64{11e6}, LeftBehind: 2}},
				Bare: []StartupRun{{Up: 2000 * time.Millisecond, HarnessPeak: 30e6}, {Up: 1800 * time.Millisecond, HarnessPeak: 31e6}}},
		},
		History: &HistoryFigures{Events: 1000000, Bytes: 120e6, Scenario: "omega", Checks: 12,
			Read:      Cost{Time: 2 * time.Second, Live: 400e6, Allocated: 2000e6},
			Check:     Cost{Time: 4 * time.Second, Live: 410e6, Allocated: 2100e6},
			CoupCheck: 800 * time.Millisecond, CoupCheckPeak: 350e6},
	}
	var b bytes.Buffer
	r.Print(&b)
	out := squash(b.String())
	for _, want := range []string{
		"3 100ms 230ms (2.30×) 40.0 MB (13333 KB) 9.0 MB 11.0 MB 12.0 MB 3 0 ✓",
		// medians of two: 2.4s against 1.9s; the highest harness peak
		"1000 1.9s 2.4s (1.26×) ✓ 150.0 MB (150 KB) ✗ 31.0 MB 11.0 MB 11.0 MB 1 ✗ 2 ✗ ≤ 1.5× bare, harness < 100 KB a node",
		"1 000 000 events, 120.0 MB (omega)",
		"read (in process) 2s 500 000 400 B live, 2 000 B allocated",
		"read + all 12 checks (in process) 4s 250 000 410 B live, 2 100 B allocated",
		"coup check (a process) 800ms ✓ 1 250 000 peak RSS 350.0 MB ✗ (350 B) < 1s, < 300.0 MB",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// squash collapses runs of spaces, so that tests do not depend on the
// columns' widths.
func squash(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}

// The baseline table gives each figure of both builds, medians, and this
// build's to the baseline's; a figure missing on one side has no ratio.
func TestPrintBaseline(t *testing.T) {
	r := &Results{
		Config: Config{Baseline: []string{"/tmp/old-coup"}},
		Baseline: []BaselineFigure{
			{Name: "startup, 1000 nodes: up in", Unit: "duration", This: []float64{4e9, 6e9}, Base: []float64{8e9, 10e9}},
			{Name: "startup, 1000 nodes: harness peak", Unit: "bytes", This: []float64{75e6, 77e6}, Base: []float64{370e6, 366e6}},
			{Name: "proxy, pipelined, window 64: round trips/s", Unit: "rate", This: []float64{800e3}, Base: []float64{400e3}},
			{Name: "history: coup check", Unit: "duration", This: []float64{5e8}},
		},
	}
	var b bytes.Buffer
	r.Print(&b)
	out := squash(b.String())
	for _, want := range []string{
		"baseline: this build against /tmp/old-coup",
		"startup, 1000 nodes: up in 9.00s 5.00s (0.56×)",
		"startup, 1000 nodes: harness peak 368.0 MB 76.0 MB (0.21×)",
		"proxy, pipelined, window 64: round trips/s 400 000 800 000 (2.00×)",
		"history: coup check - 500.0ms\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// Figures come from the parts a coup process makes, named by part.
func TestBaselineFigures(t *testing.T) {
	r := &Results{
		Startup: []Startup{{Nodes: 10, Coup: []StartupRun{{Up: 2e9, HarnessPeak: 5e6, CPU: 1e8}}, Bare: []StartupRun{{Up: 1e9}}}},
		History: &HistoryFigures{CoupCheck: 3e8, CoupCheckPeak: 9e6},
	}
	got := map[string]float64{}
	for _, f := range baselineFigures(r) {
		got[f.name] = f.value
	}
	for name, want := range map[string]float64{
		"startup, 10 nodes: up in": 2e9, "startup, 10 nodes: harness peak": 5e6, "startup, 10 nodes: harness CPU to up": 1e8,
		"startup, 10 nodes: bare start (this build's in both)": 1e9, "history: coup check": 3e8, "history: coup check, peak RSS": 9e6,
	} {
		if got[name] != want {
			t.Errorf("%s: got %g, want %g (all: %v)", name, got[name], want, got)
		}
	}
}
