package main

// End-to-end tests of a foreign node that reports terms (the termnode test
// fixture in testdata/termnode), and of what a user sees when a foreign
// node fails to start.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coupharness/coup/history"
)

var (
	termNodeOnce sync.Once
	termNodeBin  string
	termNodeErr  error
)

// termNode builds the termnode fixture once, beside the coup binary (so
// that TestMain removes it).
func termNode(t *testing.T) string {
	t.Helper()
	termNodeOnce.Do(func() {
		termNodeBin = filepath.Join(filepath.Dir(coupBin), "termnode")
		out, err := exec.Command("go", "build", "-o", termNodeBin, "./testdata/termnode").CombinedOutput()
		if err != nil {
			termNodeErr = err
			t.Logf("%s", out)
		}
	})
	if termNodeErr != nil {
		t.Fatalf("build termnode: %v", termNodeErr)
	}
	return termNodeBin
}

// termScenario writes a scenario named name into a fresh folder, with the
// termnode program beside it as ./termnode, and returns the file. The
// scenario's command is relative: coup finds the program from the
// scenario's folder whatever its own working directory (coup() runs it in
// the store's).
func termScenario(t *testing.T, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(termNode(t), filepath.Join(dir, "termnode")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name+".toml")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// isolatedLeader is a run of five termnodes whose leader is cut off from
// the others for 600ms, long enough for the majority to elect a new one.
const isolatedLeader = `nodes = 5
duration = "1.5s"
recovery = "500ms"
checksums = false

[workload]
kind = "none"

[[faults]]
kind = "partition"
shape = "isolate"
target = "leader"
at = "700ms"
for = "600ms"
`

// result is one check's result as results.json holds it.
type result struct {
	Valid       any             `json:"valid"`
	Explanation string          `json:"explanation"`
	Evidence    []history.Event `json:"evidence"`
	Figures     map[string]any  `json:"figures"`
}

func checkResult(t *testing.T, r results, name string) result {
	t.Helper()
	var c result
	if err := json.Unmarshal(r.Checks[name], &c); err != nil {
		t.Fatalf("check %s: %v", name, err)
	}
	return c
}

// A Raft-like node with its leader isolated: the old leader goes on
// believing it leads while the majority elects a new one, so two-leaders is
// false, but never two in one term; stale-leader measures the overlap and,
// past its bound, is false too.
func TestTermsIsolatedLeader(t *testing.T) {
	file := termScenario(t, "terms-isolated", `command = ["./termnode"]
`+isolatedLeader+`
[checks]
run = ["two-leaders", "one-leader-per-term", "stale-leader", "agreement", "termination"]
stale_leader = "5ms"

[expect]
valid = false
violations = ["two-leaders", "stale-leader"]
`)
	run := coup(t, "run", file)
	if run.code != 0 {
		t.Fatalf("exit %d, want 0 (the violations are expected)\n%s%s", run.code, run.stdout, run.stderr)
	}
	latest := filepath.Join(run.store, "terms-isolated", "latest")
	res := readResults(t, latest)
	if v := checkValid(t, res, "one-leader-per-term"); v != true {
		t.Errorf("one-leader-per-term = %v, want true", v)
	}
	two := checkResult(t, res, "two-leaders")
	if two.Valid != false {
		t.Fatalf("two-leaders = %v, want false: %s", two.Valid, two.Explanation)
	}
	terms := map[int64]bool{}
	for _, e := range two.Evidence {
		if e.Kind == history.KindReport && e.Term != nil {
			terms[*e.Term] = true
		}
	}
	if len(terms) < 2 || !strings.Contains(two.Explanation, "was a stale leader") {
		t.Errorf("two-leaders' evidence names terms %v, want two; explanation: %s", terms, two.Explanation)
	}
	stale := checkResult(t, res, "stale-leader")
	longest, _ := stale.Figures["longest_ns"].(float64)
	if stale.Valid != false || longest <= 5e6 || !strings.Contains(stale.Explanation, "exceeds the 5ms bound") {
		t.Errorf("stale-leader = %v with a window of %vns, want false with one over 5ms: %s", stale.Valid, longest, stale.Explanation)
	}
	h, err := history.ReadFile(filepath.Join(latest, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Meta.StaleLeader != 5e6 {
		t.Errorf("meta stale_leader_ns = %d, want 5ms", h.Meta.StaleLeader)
	}
	// The same history, checked again, gives the same window.
	check := coup(t, "check", filepath.Join(latest, "history.jsonl"))
	if !strings.Contains(check.stdout, "the longest stale-leader window is") {
		t.Errorf("coup check does not give the window:\n%s%s", check.stdout, check.stderr)
	}
}

// The same node with a deliberate bug: a follower whose leader falls
// silent takes over its term without a vote.
func TestTermsSameTermDoubleClaim(t *testing.T) {
	file := termScenario(t, "terms-takeover", `command = ["./termnode", "-bug", "takeover"]
`+isolatedLeader+`
[checks]
run = ["two-leaders", "one-leader-per-term"]

[expect]
valid = false
violations = ["two-leaders", "one-leader-per-term"]
`)
	run := coup(t, "run", file)
	if run.code != 0 {
		t.Fatalf("exit %d, want 0 (the violations are expected)\n%s%s", run.code, run.stdout, run.stderr)
	}
	res := readResults(t, filepath.Join(run.store, "terms-takeover", "latest"))
	one := checkResult(t, res, "one-leader-per-term")
	if one.Valid != false || !strings.Contains(one.Explanation, "both claimed leadership in term") || len(one.Evidence) < 2 {
		t.Errorf("one-leader-per-term = %v, want false with both claims: %s", one.Valid, one.Explanation)
	}
}

// startFailure runs a scenario whose node fails to start and checks that
// coup says so once, with each of want (the node, the cause, its log), no
// verdict above it, and exit code 2.
func startFailure(t *testing.T, name, body string, want ...string) {
	t.Helper()
	run := coup(t, "run", termScenario(t, name, body))
	if run.code != 2 {
		t.Errorf("exit %d, want 2", run.code)
	}
	if strings.Contains(run.stdout, " true ") || strings.Contains(run.stdout, "valid=") {
		t.Errorf("verdicts printed for a run that did not start:\n%s", run.stdout)
	}
	if n := strings.Count(run.stderr, "coup: "); n != 1 {
		t.Errorf("%d messages on stderr, want 1:\n%s", n, run.stderr)
	}
	for _, w := range want {
		if !strings.Contains(run.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, run.stderr)
		}
	}
	res := readResults(t, filepath.Join(run.store, name, "latest"))
	if res.Exit != 2 || len(res.Checks) != 0 {
		t.Errorf("results.json: exit %d with %d checks, want 2 and none", res.Exit, len(res.Checks))
	}
}

func TestNodeExitsAtStart(t *testing.T) {
	startFailure(t, "exits", "command = [\"./termnode\", \"-mode\", \"exit\"]\nnodes = 3\n",
		"n1 exited before answering init (exit status 3)", filepath.Join("store", "exits"), "n1.log:", "cannot open /nonexistent/state",
		"n2 and n3 failed to start too")
}

func TestNodeNeverFlushes(t *testing.T) {
	startFailure(t, "silent", "command = [\"./termnode\", \"-mode\", \"silent\"]\nnodes = 2\ninit_timeout = \"300ms\"\n",
		"n1 did not answer init within 300ms and wrote nothing on stdout", "output may be buffered", "flush", filepath.Join("store", "silent"), "n1.log")
}

func TestNodeProgramMissing(t *testing.T) {
	startFailure(t, "missing", "command = [\"./nosuchnode\"]\nnodes = 2\n",
		"n1 could not be started:", "nosuchnode: no such file or directory")
}

func TestNodeAnswersSomethingElse(t *testing.T) {
	startFailure(t, "chatty", "command = [\"sh\", \"-c\", \"echo hello; exec sleep 10\"]\nnodes = 1\ninit_timeout = \"300ms\"\n",
		"n1 did not answer init within 300ms; of the 1 line it wrote on stdout none was an init_ok (the first: hello)", "docs/protocol.md")
}
