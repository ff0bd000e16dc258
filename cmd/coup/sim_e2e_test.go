package main

// End-to-end tests of coup sim: the binary simulates scenarios, sweeps
// seeds and replays them. No node process is started.

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var hashLine = regexp.MustCompile(`history sha256 ([0-9a-f]{16})`)

// One seed is simulated and stored as a real run is; its printed hash is
// the sha256sum of its history; and it agrees with a real run of the same
// scenario on the verdict and the messages (Chang–Roberts with one
// initiator sends the same messages whatever the timing).
func TestSimOneSeed(t *testing.T) {
	simRun := coup(t, "sim", scenarioPath(t, "chang-roberts.toml"))
	if simRun.code != 0 {
		t.Fatalf("exit %d\n%s%s", simRun.code, simRun.stdout, simRun.stderr)
	}
	latest := filepath.Join(simRun.store, "chang-roberts", "latest")
	for _, f := range []string{"history.jsonl", "results.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(latest, f)); err != nil {
			t.Error(err)
		}
	}
	m := hashLine.FindStringSubmatch(simRun.stdout)
	b, err := os.ReadFile(filepath.Join(latest, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if m == nil || !strings.HasPrefix(hex.EncodeToString(sum[:]), m[1]) {
		t.Errorf("printed hash %v, history.jsonl's sha256 %x", m, sum)
	}
	simulated := readResults(t, latest)

	realRun := coup(t, "run", scenarioPath(t, "chang-roberts.toml"))
	if realRun.code != 0 {
		t.Fatalf("coup run: exit %d\n%s", realRun.code, realRun.stdout)
	}
	real := readResults(t, filepath.Join(realRun.store, "chang-roberts", "latest"))
	if simulated.Outcome != real.Outcome || simulated.Valid != real.Valid {
		t.Errorf("simulated %v/%s, real %v/%s", simulated.Valid, simulated.Outcome, real.Valid, real.Outcome)
	}
	for typ, n := range real.Stats.Messages.ByType {
		if simulated.Stats.Messages.ByType[typ] != n {
			t.Errorf("%s messages: %d simulated, %d real", typ, simulated.Stats.Messages.ByType[typ], n)
		}
	}
}

// A sweep of at most 1000 seeds finds the bully replacement race, with no
// trigger, and prints the command that replays it; the replay gives the
// same history hash.
func TestSimSweepFindsTheRace(t *testing.T) {
	file := scenarioPath(t, filepath.Join("sim", "bully-replace-race.toml"))
	sweep := coup(t, "sim", file, "--seed", "1", "--seeds", "1000", "--quiet")
	if sweep.code != 1 {
		t.Errorf("the sweep exited %d, want 1 (the scenario's claim of safety is refuted)", sweep.code)
	}
	m := regexp.MustCompile(`(?m)^seed (\d+): valid=false, unexpected.*\n  replay: (coup sim \S+ --seed (\d+))\s+\(history sha256 ([0-9a-f]{16})\)`).FindStringSubmatch(sweep.stdout)
	if m == nil || m[1] != m[3] {
		t.Fatalf("no violation found in the sweep:\n%s", sweep.stdout)
	}
	args := strings.Fields(m[2])[1:]
	replay := coup(t, args...)
	if replay.code != 1 {
		t.Fatalf("%s: exit %d, want 1 (the violation again)\n%s", m[2], replay.code, replay.stdout)
	}
	if h := hashLine.FindStringSubmatch(replay.stdout); h == nil || h[1] != m[4] {
		t.Errorf("the sweep printed history %s for seed %s, the replay %v", m[4], m[1], h)
	}
}

// With --first a sweep stops at the first seed not as expected and names
// it, with its replay command.
func TestSimSweepFirst(t *testing.T) {
	src, err := os.ReadFile(scenarioPath(t, filepath.Join("sim", "bully-replace-race.toml")))
	if err != nil {
		t.Fatal(err)
	}
	// A copy of the race scenario: the cluster is claimed safe, so a race
	// is a failure.
	file := filepath.Join(t.TempDir(), "claim.toml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	run := coup(t, "sim", file, "--seed", "1", "--seeds", "1000", "--first", "--quiet")
	if run.code != 1 {
		t.Errorf("exit %d, want 1", run.code)
	}
	m := regexp.MustCompile(`(?m)^seed (\d+): valid=false, unexpected.*\n  replay: coup sim \S+ --seed (\d+)`).FindStringSubmatch(run.stdout)
	if m == nil || m[1] != m[2] || !regexp.MustCompile(`\d+ seeds in .*: \d+ as expected, 1 unexpected`).MatchString(run.stdout) {
		t.Errorf("want one failing seed and its replay:\n%s", run.stdout)
	}
}

func TestSimCheckDeterminism(t *testing.T) {
	run := coup(t, "sim", scenarioPath(t, "bully-crash-coordinator.toml"), "--check-determinism")
	hashes := regexp.MustCompile(`run: +history sha256 ([0-9a-f]{64})`).FindAllStringSubmatch(run.stdout, -1)
	if run.code != 0 || len(hashes) != 2 || hashes[0][1] != hashes[1][1] {
		t.Errorf("exit %d, hashes %v:\n%s", run.code, hashes, run.stdout)
	}
}

// A scenario of a foreign node program, a missing file and a bad flag are
// input errors.
func TestSimBadInput(t *testing.T) {
	foreign := filepath.Join(t.TempDir(), "foreign.toml")
	if err := os.WriteFile(foreign, []byte("algorithm = \"mine\"\nelects = \"max\"\ncommand = [\"./mynode\"]\nnodes = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"sim", foreign},
		{"sim", "no-such.toml"},
		{"sim", scenarioPath(t, "chang-roberts.toml"), "--seeds", "x"},
		{"sim"},
	} {
		run := coup(t, args...)
		if run.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, run.code, run.stderr)
		}
	}
	if run := coup(t, "sim", foreign); !strings.Contains(run.stderr, "command") || !strings.Contains(run.stderr, "built-in") {
		t.Errorf("the error does not say why: %s", run.stderr)
	}
}

func TestSimBench(t *testing.T) {
	run := coup(t, "sim", "--bench", "--seeds", "2", scenarioPath(t, "chang-roberts.toml"), scenarioPath(t, "bully-crash-coordinator.toml"))
	if run.code != 0 || !regexp.MustCompile(`(?m)^total +4 +\d+ +\d+ +\d+ +\d+x$`).MatchString(run.stdout) {
		t.Errorf("exit %d:\n%s%s", run.code, run.stdout, run.stderr)
	}
}
