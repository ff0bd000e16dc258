package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	debian "github.com/coupharness/coup/internal/needs"
)

// The election node of docs/your-node.md (examples/python-heartbeat): its
// scenario, the leader crashed, is valid. Without its start-up wait the
// same node claims leadership before it can hear its peers, and
// two-leaders finds the overlap at the start of the run: the pitfall the
// guide warns of.
func TestPythonHeartbeat(t *testing.T) {
	debian.Program(t, "python3", "python3")
	run := coup(t, "run", scenarioPath(t, "python-heartbeat.toml"))
	if run.code != 0 {
		t.Fatalf("exit %d, want 0 (every check holds)\n%s%s", run.code, run.stdout, run.stderr)
	}
	res := readResults(t, filepath.Join(run.store, "python-heartbeat", "latest"))
	for _, c := range []string{"two-leaders", "agreement", "validity", "termination"} {
		if r := checkResult(t, res, c); r.Valid != true {
			t.Errorf("%s = %v, want true: %s", c, r.Valid, r.Explanation)
		}
	}

	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "python-heartbeat", "node.py"))
	if err != nil {
		t.Fatal(err)
	}
	const wait = "    if len(heard) < len(peers) and now - started < ALONE:\n        continue"
	if !strings.Contains(string(src), wait) {
		t.Fatalf("node.py has no start-up wait %q to take out", wait)
	}
	dir := t.TempDir()
	eager := strings.Replace(string(src), wait, "    if False:\n        continue", 1)
	writeScenario(t, dir, "node.py", eager)
	scenario, err := os.ReadFile(scenarioPath(t, "python-heartbeat.toml"))
	if err != nil {
		t.Fatal(err)
	}
	file := writeScenario(t, dir, "eager.toml", strings.Replace(
		strings.Replace(string(scenario), "../examples/python-heartbeat/node.py", "node.py", 1),
		`name = "python-heartbeat"`, `name = "eager"`, 1))
	// 50ms a message: a first heartbeat cannot overtake the claims
	// however slowly the machine runs the nodes.
	run = coup(t, "run", "--set", "network.latency=50ms", file)
	if run.code != 1 {
		t.Fatalf("without the start-up wait: exit %d, want 1 (two-leaders fails)\n%s%s", run.code, run.stdout, run.stderr)
	}
	two := checkResult(t, readResults(t, filepath.Join(run.store, "eager", "latest")), "two-leaders")
	if two.Valid != false || !strings.Contains(two.Explanation, "both believed they were the leader from 0.") {
		t.Errorf("two-leaders = %v, want false at the start of the run: %s", two.Valid, two.Explanation)
	}
}
