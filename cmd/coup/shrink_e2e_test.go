package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	debian "github.com/coupharness/coup/internal/needs"
	"github.com/coupharness/coup/scenario"
)

var (
	freshRate   = regexp.MustCompile(`(?m)^# This file fails the same way in (\d+) of (\d+) fresh runs\.$`)
	wroteRate   = regexp.MustCompile(`(?m)^wrote shrunk\.toml; it fails the same way in (\d+) of 2 fresh runs; a failing history is shrunk\.history\.jsonl$`)
	faultsSized = regexp.MustCompile(`(?m)^  faults +(\d+) +(\d+)$`)
)

func testdataPath(t *testing.T, name string) string {
	p, err := filepath.Abs(filepath.Join("testdata", "shrink", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// coup shrink on node processes: the python example's leader cut off,
// with three faults beside it that do not matter, shrinks to at most
// three faults (the partition alone, as a rule) within a small budget;
// the written file, with the command's path made relative to its new
// folder, fails the same way in fresh runs, as its header says, beside a
// failing history; no process is left.
func TestShrinkNodeProcesses(t *testing.T) {
	debian.Program(t, "python3", "python3")
	dir := t.TempDir()
	r := coupIn(t, dir, "shrink", testdataPath(t, "lonely-noisy.toml"), "--runs", "2", "--budget", "14", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("%s", r.stdout)
	m := wroteRate.FindStringSubmatch(r.stdout)
	sizes := faultsSized.FindStringSubmatch(r.stdout)
	if m == nil || sizes == nil || sizes[1] != "4" {
		t.Fatalf("no rate or size:\n%s", r.stdout)
	}
	if n, _ := strconv.Atoi(sizes[2]); n > 3 {
		t.Errorf("shrunk to %d faults, want at most 3:\n%s", n, r.stdout)
	}
	src, err := os.ReadFile(filepath.Join(dir, "shrunk.toml"))
	if err != nil {
		t.Fatal(err)
	}
	h := freshRate.FindStringSubmatch(string(src))
	if h == nil || h[1] != m[1] || h[2] != "2" {
		t.Errorf("the header's rate %v, the command said %s of 2:\n%s", h, m[1], src)
	}
	sc, err := scenario.Load(filepath.Join(dir, "shrunk.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Faults) > 3 || !strings.Contains(string(src), `command = ["python3", "`) || strings.Contains(string(src), `"/`) {
		t.Errorf("faults %d, command %q:\n%s", len(sc.Faults), sc.Command, src)
	}
	hist, err := history.ReadFile(filepath.Join(dir, "shrunk.history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if hist.Meta.Scenario != "lonely-noisy-shrunk" || !hist.Ended {
		t.Errorf("the failing history is of %q, ended %v", hist.Meta.Scenario, hist.Ended)
	}
	// It fails the same way under coup check: as the file expects now.
	check := coupIn(t, dir, "check", "shrunk.history.jsonl")
	if check.code != 0 || !strings.Contains(check.stdout, "one-leader-per-term") {
		t.Errorf("coup check: exit %d\n%s%s", check.code, check.stdout, check.stderr)
	}
}

// Ctrl-C during a shrink on node processes stops it: the best scenario
// so far is written, said to be unmeasured, the exit code is 3, and no
// process is left.
func TestShrinkInterrupted(t *testing.T) {
	debian.Program(t, "python3", "python3")
	dir := t.TempDir()
	tag := tagged(t)
	cmd := exec.Command(coupBin, "shrink", testdataPath(t, "lonely-noisy.toml"), "--runs", "3", "--out", "best.toml")
	cmd.Env = append(os.Environ(), tag)
	cmd.Dir = dir
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the shrink has begun, and a candidate's run is under way.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "shrinking (budget") || len(survivors(tag)) < 5 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the shrink did not begin:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Errorf("exit %v, want 3\n%s", err, out.String())
	}
	checkNoSurvivors(t, tag)
	src, err := os.ReadFile(filepath.Join(dir, "best.toml"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(string(src), "The shrink was interrupted") || !strings.Contains(out.String(), "wrote best.toml, not measured (interrupted)") {
		t.Errorf("%s\n%s", src, out.String())
	}
	if _, err := scenario.Load(filepath.Join(dir, "best.toml")); err != nil {
		t.Error(err)
	}
}

// On the simulator, coup shrink --sim shrinks as coup sim --shrink does,
// and says that the file fails at its seed every time.
func TestShrinkSim(t *testing.T) {
	dir := t.TempDir()
	r := coupIn(t, dir, "shrink", "--sim", "--quiet", scenarioPath(t, "bully-coordinator-replaced.toml"))
	if r.code != 0 || !regexp.MustCompile(`(?m)^wrote shrunk\.toml \(seed \d+\); it fails the same way: coup sim shrunk\.toml$`).MatchString(r.stdout) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sc, err := scenario.Load(filepath.Join(dir, "shrunk.toml"))
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(filepath.Join(dir, "shrunk.toml"))
	if len(sc.Faults) != 1 || sc.Nodes != 2 || !strings.Contains(string(src), "every time: the simulator replays a seed") {
		t.Errorf("%d faults, %d nodes:\n%s", len(sc.Faults), sc.Nodes, src)
	}
}

// Bad input is refused with exit 2; so is a scenario whose runs never
// fail, with a word on what to do.
func TestShrinkBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"shrink"},
		{"shrink", "a.toml", "b.toml"},
		{"shrink", "missing.toml"},
		{"shrink", "--budget", "0", scenarioPath(t, "chang-roberts.toml")},
		{"shrink", "--budget", "soon", scenarioPath(t, "chang-roberts.toml")},
		{"shrink", "--runs", "0", scenarioPath(t, "chang-roberts.toml")},
		{"shrink", "--sim", scenarioPath(t, "go-kv.toml")},
	} {
		if r := coup(t, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	r := coup(t, "shrink", "--runs", "1", scenarioPath(t, "chang-roberts.toml"))
	if r.code != 2 || !strings.Contains(r.stderr, "nothing to shrink") {
		t.Errorf("a valid scenario: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// coup shrink on real servers: the example TCP service's leader cut off.
// The written file, in another folder, reaches the service's run.sh
// through the original's folder ({{.Scenario}}), and fails the same way
// in fresh runs; no server is left.
func TestShrinkServers(t *testing.T) {
	dir := t.TempDir()
	r := coupIn(t, dir, "shrink", scenarioPath(t, "tcp-leader-isolated.toml"), "--runs", "2", "--budget", "12", "--quiet")
	if r.code != 0 || !strings.Contains(r.stdout, "it fails as: two-leaders: nodes both believed they were the leader") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	src, err := os.ReadFile(filepath.Join(dir, "shrunk.toml"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, filepath.Dir(scenarioPath(t, "tcp-leader-isolated.toml")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "{{.Scenario}}/"+rel+"/../examples/tcp-leader/run.sh") || !regexp.MustCompile(`(?m)^# This file fails the same way in [12] of 2 fresh runs\.$`).Match(src) {
		t.Errorf("%s", src)
	}
	if _, err := os.Stat(filepath.Join(dir, "shrunk.history.jsonl")); err != nil {
		t.Error(err)
	}
}
