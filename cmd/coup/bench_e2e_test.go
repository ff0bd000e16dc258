package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
)

// coup bench runs every part at a tiny scale and prints every row of the
// table, leaving no process behind (coup checks that).
func TestBenchPrintsEveryRow(t *testing.T) {
	r := coup(t, "bench", "--rounds", "1", "--warmup", "10ms", "--time", "50ms", "--steady-time", "100ms",
		"--nodes", "3,4", "--events", "3000", "--scenarios", scenarioPath(t, ""), "--sim-seeds", "1", "--quiet")
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
		"sim: the catalogue's simulated scenarios",
		"  catalogue ",
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

// coup bench --baseline runs the parts with another build too and prints
// each figure of both with the ratio. The other build here is this one
// behind a script that notes each command it is given, so that the test
// sees the baseline run what the parts measure: coup run, coup check and
// the fault proxy.
func TestBenchBaseline(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	other := filepath.Join(dir, "other-coup")
	script := fmt.Sprintf("#!/bin/sh\necho \"$*\" >> %q\nexec %q \"$@\"\n", calls, coupBin)
	if err := os.WriteFile(other, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := coup(t, "bench", "--only", "startup,history,proxy", "--baseline", other, "--rounds", "1", "--warmup", "10ms", "--time", "50ms",
		"--nodes", "3", "--events", "3000", "--quiet")
	if r.code != 0 {
		t.Fatalf("coup bench --baseline exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	out := squashSpaces(r.stdout)
	for _, want := range []string{
		"baseline: this build against " + other,
		"startup, 3 nodes: up in ",
		"startup, 3 nodes: harness peak ",
		"proxy, one at a time: round-trip p50 ",
		"proxy, pipelined, window 64: round trips/s ",
		"history: coup check ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, r.stdout)
		}
	}
	// Each figure of both builds, with a ratio.
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "startup, 3 nodes: up in") && !regexp.MustCompile(`\(\d+\.\d\d×\)`).MatchString(line) {
			t.Errorf("no ratio in %q", line)
		}
	}
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatalf("the baseline was never run: %v", err)
	}
	got := string(b)
	// Two rounds of each build; the startup part starts each size twice.
	for want, times := range map[string]int{"run --store": 4, "check ": 2, "bench-probe tcp-proxy": 2} {
		if n := strings.Count(got, want); n != times {
			t.Errorf("the baseline ran %q %d times, want %d:\n%s", want, n, times, got)
		}
	}
	if strings.Contains(got, "bare-start") || strings.Contains(got, "tcp-forward") || strings.Contains(got, "tcp-echo") {
		t.Errorf("the baseline ran a floor, which stays this build's:\n%s", got)
	}
}

// --baseline compares what a coup process does: a part measured in the
// benchmark's own process, or no --only, is refused.
func TestBenchBaselineRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--only", "router", "--baseline", coupBin, "--rounds", "1", "--warmup", "1ms", "--time", "10ms"},
		{"bench", "--baseline", coupBin, "--rounds", "1", "--warmup", "1ms", "--time", "10ms"},
		{"bench", "--only", "startup", "--baseline", "/nonexistent/coup", "--nodes", "1"},
	} {
		r := coup(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "--baseline") {
			t.Errorf("coup %v: exit %d, stderr %q; want 2 and a message naming --baseline", args, r.code, r.stderr)
		}
	}
}

func squashSpaces(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}

// --zoo runs the explore part on the bugs named alone, and is refused
// for a file that is not the zoo's, and without --only explore.
func TestBenchZoo(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	r := coupIn(t, root, "bench", "--only", "explore", "--zoo", "centralised-replace.toml", "--quiet")
	if r.code != 0 {
		t.Fatalf("coup bench exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"\n  centralised-replace ", "geometric mean of 1 bugs' ratios"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "bully-replace") {
		t.Errorf("a bug not named was run:\n%s", r.stdout)
	}
	for _, bad := range [][]string{
		{"bench", "--only", "explore", "--zoo", "no-such-bug.toml"},
		{"bench", "--only", "router", "--zoo", "centralised-replace.toml", "--rounds", "1", "--warmup", "1ms", "--time", "10ms"},
	} {
		r := coupIn(t, root, bad...)
		if r.code != 2 || !strings.Contains(r.stderr, "--zoo") {
			t.Errorf("coup %v: exit %d, stderr %q; want 2 and a message naming --zoo", bad, r.code, r.stderr)
		}
	}
}
