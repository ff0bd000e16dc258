package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
)

// coup bench runs every part at a tiny scale and prints every row of the
// table, leaving no process behind (coup checks that).
func TestBenchPrintsEveryRow(t *testing.T) {
	r := coup(t, "bench", "--rounds", "1", "--warmup", "10ms", "--time", "50ms", "--steady-time", "100ms",
		"--nodes", "3,4", "--events", "3000", "--quiet")
	if r.code != 0 {
		t.Fatalf("coup bench exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("--quiet printed progress: %s", r.stderr)
	}
	for _, row := range []string{
		"router: two nodes",
		"pipelined, window 64: round trips/s",
		"pipelined, window 64: CPU per message",
		"one at a time: round-trip p50",
		"one at a time: round-trip p99",
		"router with faults",
		"fault mix on every link: loss 1%, delay 100µs + [0, 100µs), duplication 1%",
		"steady 5000 msg/s: round-trip p50",
		"steady 5000 msg/s: round-trip p99",
		"steady 5000 msg/s: pings lost / echoed twice",
		"proxy: a TCP client and an echo server",
		"startup: from starting `coup run`",
		"\n  3 ", "\n  4 ",
		"history: ",
		"read (in process)",
		"read + all " + strconv.Itoa(len(checks.All())-1) + " checks (in process)", // every check but lost-writes, which needs writes
		"coup check (a process)",
	} {
		if !strings.Contains(r.stdout, row) {
			t.Errorf("the table lacks %q:\n%s", row, r.stdout)
		}
	}
	// Every measured cell holds a figure: no "-" for a median of nothing.
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, " - ") || strings.HasSuffix(line, " -") {
			t.Errorf("a row without a figure: %q", line)
		}
	}
}

func TestBenchRejectsBadFlags(t *testing.T) {
	// Each bad flag comes after a tiny scale, so that a flag taken for
	// good fails the test at once rather than after a full benchmark.
	tiny := []string{"bench", "--only", "router", "--rounds", "1", "--warmup", "1ms", "--time", "10ms"}
	for _, bad := range [][]string{
		{"--only", "routre"},
		{"--nodes", "3,x"},
		{"--rounds", "0"},
		{"--window", "0"},
		{"--events", "10"},
		{"extra"},
	} {
		args := append(append([]string(nil), tiny...), bad...)
		r := coup(t, args...)
		if r.code != 2 || r.stderr == "" {
			t.Errorf("coup %v: exit %d, stderr %q; want 2 and a message", args, r.code, r.stderr)
		}
	}
}
