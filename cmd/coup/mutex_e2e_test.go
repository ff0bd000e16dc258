package main

// End-to-end tests of mutual exclusion: the catalogue's mutex scenarios
// with real processes, and a lock that is wrong on purpose.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"coup/checks"
)

// figures reads one check's figures from results.json.
func figures(t *testing.T, r results, name string) map[string]any {
	t.Helper()
	var c struct {
		Figures map[string]any `json:"figures"`
	}
	if err := json.Unmarshal(r.Checks[name], &c); err != nil {
		t.Fatalf("check %s: %v", name, err)
	}
	return c.Figures
}

func TestMutexScenarios(t *testing.T) {
	tests := []struct {
		file    string
		failing string // the check that must fail, if any
	}{
		{"token-ring.toml", ""},
		{"token-ring-crash.toml", "mutex-progress"},
		{"ricart-agrawala.toml", ""},
		{"ricart-agrawala-crash.toml", "mutex-progress"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			run := coup(t, "run", scenarioPath(t, tt.file))
			if run.code != 0 {
				t.Fatalf("exit %d, want 0\n%s%s", run.code, run.stdout, run.stderr)
			}
			name := strings.TrimSuffix(tt.file, ".toml")
			res := readResults(t, filepath.Join(run.store, name, "latest"))
			for _, c := range checks.MutexDefaults {
				want := any(true)
				if c == tt.failing {
					want = false
				}
				if got := checkValid(t, res, c); got != want {
					t.Errorf("%s = %v, want %v", c, got, want)
				}
			}
			if m := figures(t, res, "mutex-measures"); m["entries"] == 0.0 {
				t.Errorf("no entry into the critical section: %v", m)
			}
			// Ricart–Agrawala without faults costs exactly 2(N−1) messages
			// per entry.
			if name == "ricart-agrawala" {
				if got := figures(t, res, "mutex-measures")["messages_per_entry"]; got != 8.0 {
					t.Errorf("messages per entry %v, want 2(N−1) = 8", got)
				}
				if b := res.Stats.Messages.ByType; b["request"] != b["reply"] || b["request"] == 0 {
					t.Errorf("messages by type %v, want as many replies as requests", b)
				}
			}
		})
	}
}

// A lock that grants every acquire at once, whoever holds it: one sed
// process that answers each request with its type and "_ok". Two clients
// hold the lock together, porcupine finds that the history is not
// linearizable, and its visualisation is written into the run's folder.
func TestDoubleGrantIsVisualised(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "grant-all.toml")
	src := `name = "grant-all"
algorithm = "grant-all"
command = ["sed", "-u", "-n", 's/^{"src":"\([^"]*\)","dest":"\([^"]*\)","body":{"type":"\([^"]*\)","msg_id":\([0-9]*\).*/{"src":"\2","dest":"\1","body":{"type":"\3_ok","in_reply_to":\4}}/p']
nodes = 2
duration = "300ms"
recovery = "200ms"

[workload]
kind = "mutex"
clients = 2
rate = 200
hold = "40ms"
timeout = "100ms"

[checks]
run = ["mutex-linearizable", "mutex-progress"]

[expect]
valid = false
violations = ["mutex-linearizable"]
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	run := coup(t, "run", file)
	if run.code != 0 {
		t.Fatalf("exit %d, want 0 (the violation is expected)\n%s%s", run.code, run.stdout, run.stderr)
	}
	latest := filepath.Join(run.store, "grant-all", "latest")
	page, err := os.ReadFile(filepath.Join(latest, checks.VisualisationFile))
	if err != nil {
		t.Fatalf("no visualisation: %v", err)
	}
	if !strings.Contains(string(page), "<html") || !strings.Contains(string(page), "acquire(c") {
		t.Errorf("%s does not look like porcupine's page of the lock history", checks.VisualisationFile)
	}
	raw, err := os.ReadFile(filepath.Join(latest, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"files": [`) || !strings.Contains(string(raw), checks.VisualisationFile) {
		t.Errorf("results.json does not list the visualisation")
	}
}
