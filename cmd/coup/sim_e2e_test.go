package main

// End-to-end tests of coup sim: the binary simulates scenarios, sweeps
// seeds and replays them. No node process is started.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

var (
	failsAs     = regexp.MustCompile(`(?m)^it fails as: (.+)$`)
	signature   = regexp.MustCompile(`(?m)^  signature: (.+)$`)
	sizeRow     = regexp.MustCompile(`(?m)^  (faults|nodes) +(\d+) +(\d+)$`)
	wroteShrunk = regexp.MustCompile(`(?m)^wrote (\S+) \(seed (\d+)\); it fails the same way: (coup sim .+?)   \(history sha256 ([0-9a-f]{16})\)$`)
)

// --shrink on the bully replacement race and three scenarios of the
// catalogue writes a shrunk.toml that coup sim runs to the same failure
// (the same signature, and the printed history), with no more faults
// and nodes than the original and, for these, one fault and at most two
// nodes (centralised's coordinator, replaced, grants twice to two clients
// of its own node).
func TestSimShrink(t *testing.T) {
	cases := []struct {
		file string
		seed string
	}{
		{filepath.Join("sim", "bully-replace-race.toml"), "50"},
		{"bully-coordinator-replaced.toml", "7"},
		{"centralised-replace.toml", "33"},
		{"ring-commander-corrupt-no-checksums.toml", "7"},
	}
	for _, c := range cases {
		shrink := coup(t, "sim", scenarioPath(t, c.file), "--seed", c.seed, "--shrink", "--quiet")
		m, w := failsAs.FindStringSubmatch(shrink.stdout), wroteShrunk.FindStringSubmatch(shrink.stdout)
		if shrink.code != 0 || m == nil || w == nil {
			t.Errorf("%s: exit %d\n%s%s", c.file, shrink.code, shrink.stdout, shrink.stderr)
			continue
		}
		for _, row := range sizeRow.FindAllStringSubmatch(shrink.stdout, -1) {
			if n, _ := strconv.Atoi(row[3]); (row[1] == "faults" && n != 1) || (row[1] == "nodes" && (n < 1 || n > 2)) {
				t.Errorf("%s: %s %s → %s", c.file, row[1], row[2], row[3])
			}
		}
		// The written file, run as a user runs it, from its own folder.
		dir := filepath.Dir(shrink.store)
		src, err := os.ReadFile(filepath.Join(dir, "shrunk.toml"))
		if err != nil {
			t.Fatal(err)
		}
		again := coupIn(t, dir, strings.Fields(w[3])[1:]...)
		s := signature.FindStringSubmatch(again.stdout)
		h := hashLine.FindStringSubmatch(again.stdout)
		if s == nil || s[1] != m[1] || h == nil || h[1] != w[4] {
			t.Errorf("%s: shrunk.toml fails as %v (history %v), the shrink said %q (%s):\n%s\n%s", c.file, s, h, m[1], w[4], again.stdout, src)
		}
		if again.code != 0 || !strings.Contains(string(src), "[expect]\nvalid = false") {
			t.Errorf("%s: shrunk.toml does not expect its violation (exit %d):\n%s", c.file, again.code, src)
		}
	}
}

// A shrunk scenario is a scenario like any other: coup run runs it with
// real processes.
func TestShrunkRunsForReal(t *testing.T) {
	shrink := coup(t, "sim", scenarioPath(t, filepath.Join("sim", "bully-replace-race.toml")), "--seed", "50", "--shrink", "--quiet", "--out", "race.toml")
	if shrink.code != 0 {
		t.Fatalf("exit %d\n%s%s", shrink.code, shrink.stdout, shrink.stderr)
	}
	run := coupIn(t, filepath.Dir(shrink.store), "run", "--quiet", "race.toml")
	if run.code == 2 {
		t.Fatalf("coup run refused the shrunk scenario:\n%s%s", run.stdout, run.stderr)
	}
	readResults(t, filepath.Join(run.store, "bully-replace-race-shrunk", "latest"))
}

var failedAs = regexp.MustCompile(`(?m)^seeds that failed as .*$`)

// A sweep split into 4 shards and merged reports exactly the failures of
// the same sweep run whole; the replay command of a merged failure gives
// the history hash the merge printed.
func TestSimShardsMerge(t *testing.T) {
	file := scenarioPath(t, filepath.Join("sim", "bully-replace-race.toml"))
	dir := t.TempDir()
	sweep := func(out string, more ...string) {
		args := append([]string{"sim", file, "--seed", "1", "--seeds", "400", "--strategy", "bias", "--quiet", "--out", filepath.Join(dir, out)}, more...)
		if r := coup(t, args...); r.code == 2 || r.code == 3 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	sweep("whole.jsonl")
	var shards []string
	for k := 1; k <= 4; k++ {
		name := fmt.Sprintf("shard%d.jsonl", k)
		sweep(name, "--shard", fmt.Sprintf("%d/4", k))
		shards = append(shards, filepath.Join(dir, name))
	}
	whole := coup(t, "sim", "merge", filepath.Join(dir, "whole.jsonl"))
	merged := coup(t, append([]string{"sim", "merge"}, shards...)...)
	wantFailures := failedAs.FindAllString(whole.stdout, -1)
	if len(wantFailures) == 0 || !strings.Contains(whole.stdout, "400 seeds: ") {
		t.Fatalf("the whole sweep found no failure:\n%s", whole.stdout)
	}
	if got := failedAs.FindAllString(merged.stdout, -1); !slices.Equal(got, wantFailures) || merged.code != whole.code {
		t.Errorf("merged shards (exit %d):\n%s\nwhole (exit %d):\n%s", merged.code, merged.stdout, whole.code, whole.stdout)
	}
	if cut := func(s string) string { return s[strings.Index(s, "\n"):] }; cut(merged.stdout) != cut(whole.stdout) {
		t.Errorf("the merged report differs from the whole sweep's:\n%s\n%s", merged.stdout, whole.stdout)
	}
	m := regexp.MustCompile(`(?m)^    replay: (coup sim .+)   \(history sha256 ([0-9a-f]{16})\)$`).FindStringSubmatch(merged.stdout)
	if m == nil || !strings.Contains(m[1], "--strategy bias") {
		t.Fatalf("no replay command:\n%s", merged.stdout)
	}
	replay := coup(t, strings.Fields(m[1])[1:]...)
	if h := hashLine.FindStringSubmatch(replay.stdout); h == nil || h[1] != m[2] {
		t.Errorf("%s gave history %v, the merge printed %s", m[1], h, m[2])
	}

	// Three shards of four: the merge says what is missing (and still
	// fails on the failures the three found).
	part := coup(t, "sim", "merge", shards[0], shards[1], shards[3])
	if part.code != 1 || !strings.Contains(part.stdout, "MISSING 100 of 400 seeds") || !strings.Contains(part.stdout, "201..300") {
		t.Errorf("exit %d:\n%s", part.code, part.stdout)
	}
}

// Bad combinations of flags and bad results files are input errors.
func TestSimFlagsBad(t *testing.T) {
	file := scenarioPath(t, "bully-crash-coordinator.toml")
	notResults := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(notResults, []byte(`{"kind":"seed","seed":1}`+"\n"), 0o644)
	for _, args := range [][]string{
		{"sim", file, "--shard", "1/2"},
		{"sim", file, "--seeds", "4", "--shard", "5/4"},
		{"sim", file, "--strategy", "dfs"},
		{"sim", file, "--strategy", "pct:0"},
		{"sim", file, "--shrink", "--seeds", "3"},
		{"sim", file, "--shrink"}, // as expected: nothing to shrink
		{"sim", file, "--out", "x.jsonl"},
		{"sim", file, "--budget", "10"},
		{"sim", "merge"},
		{"sim", "merge", notResults},
		{"sim", "merge", "no-such.jsonl"},
	} {
		if r := coup(t, args...); r.code != 2 || r.stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// coupIn runs the coup binary with args in the folder dir (its store
// under it), as coup does in a fresh one.
func coupIn(t *testing.T, dir string, args ...string) coupRun {
	t.Helper()
	tag := tagged(t)
	cmd := exec.Command(coupBin, args...)
	cmd.Env = append(os.Environ(), tag)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	checkNoSurvivors(t, tag)
	return coupRun{code: code, stdout: out.String(), stderr: errb.String(), store: filepath.Join(dir, "store")}
}
