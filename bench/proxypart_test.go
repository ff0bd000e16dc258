package bench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// The proxy part runs at a tiny scale on real processes (this test binary
// as the echo server, the forwarder and the proxy) and its table has
// every row.
func TestProxyPartRuns(t *testing.T) {
	cfg := Config{Coup: []string{"unused"}, Probe: probeArgv(), Parts: []string{PartProxy}, Rounds: 1,
		Warmup: 10 * time.Millisecond, Time: 100 * time.Millisecond, Window: 8}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Proxy) != 2 {
		t.Fatalf("%d proxy cases, want 2", len(res.Proxy))
	}
	for _, c := range res.Proxy {
		for p := range tcpPaths {
			if len(c.Runs[p]) != 1 {
				t.Fatalf("%s, %s: %d runs, want 1", c.Title, tcpPathNames[p], len(c.Runs[p]))
			}
			checkFigures(t, c.Runs[p][0], false)
		}
	}
	var b bytes.Buffer
	res.Print(&b)
	out := squash(b.String())
	for _, want := range []string{
		"proxy: a TCP client and an echo server, 64-byte messages",
		"pipelined, window 8: round trips/s",
		"pipelined, window 8: CPU per message",
		"one at a time: round-trip p50",
		"one at a time: round-trip p99",
		"≥ 0.8× forwarder", "≤ 1.3× forwarder",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if left := childrenOf(os.Getpid()); len(left) > 0 {
		t.Errorf("processes outlived the part: %v", left)
	}
}

// The proxy table gives medians, the ratios to the forwarder and to
// direct, and the targets' marks.
func TestPrintProxy(t *testing.T) {
	pipe := ProxyCase{Title: "pipelined, window 64", Mode: Pipelined, Window: 64}
	pipe.Runs[Direct] = []Figures{figures(Pipelined, 100000, 0, 0)}
	pipe.Runs[Forwarder] = []Figures{figures(Pipelined, 50000, 0, 0), figures(Pipelined, 1, 0, 0), figures(Pipelined, 60000, 0, 0)}
	pipe.Runs[Proxied] = []Figures{figures(Pipelined, 45000, 0, 0)}
	one := ProxyCase{Title: "one at a time", Mode: OneAtATime, Window: 1}
	one.Runs[Direct] = []Figures{figures(OneAtATime, 1, 20*time.Microsecond, 40*time.Microsecond)}
	one.Runs[Forwarder] = []Figures{figures(OneAtATime, 1, 40*time.Microsecond, 80*time.Microsecond)}
	one.Runs[Proxied] = []Figures{figures(OneAtATime, 1, 60*time.Microsecond, 100*time.Microsecond)}
	r := &Results{Config: Config{Rounds: 3}, Proxy: []ProxyCase{pipe, one}}
	var b bytes.Buffer
	r.Print(&b)
	out := squash(b.String())
	for _, want := range []string{
		"pipelined, window 64: round trips/s 100 000 50 000 (0.50× direct) 45 000 (0.90× forwarder, 0.45× direct) ✓ ≥ 0.8× forwarder",
		"one at a time: round-trip p50 20µs 40µs (2.00× direct) 60µs (1.50× forwarder, 3.00× direct) ✗ ≤ 1.3× forwarder",
		"one at a time: round-trip p99 40µs 80µs (2.00× direct) 100µs (1.25× forwarder, 2.50× direct)",
		// These figures count no CPU (a probe shorter than a tick).
		"pipelined, window 64: CPU per message no carrier too short to count",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, " - ") {
		t.Errorf("a cell without a figure:\n%s", out)
	}
}
