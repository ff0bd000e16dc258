package main

// End-to-end tests of mutual exclusion: the catalogue's mutex scenarios
// with real processes, and a lock that is wrong on purpose.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
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
		failing []string // the checks that must fail
		checks  []string // the checks run; default checks.MutexDefaults
		// again, when set, marks a case whose run may say nothing of what
		// it checks (its timing went another way on a loaded machine): a
		// run not as expected, or one for which again gives a reason, is
		// made again, up to three times in all.
		again func(h *history.History) string
	}{
		{file: "token-ring.toml"},
		{file: "token-ring-crash.toml", failing: []string{"mutex-progress"}},
		{file: "ricart-agrawala.toml"},
		{file: "ricart-agrawala-crash.toml", failing: []string{"mutex-progress"}},
		// One request, grant and release per entry holds while bully
		// elects once: a probe answered later than T (25ms) on a loaded
		// machine elects anew, and each election moves the lock.
		{file: "centralised.toml", again: reelected},
		{file: "centralised-crash.toml"},
		{file: "centralised-replace.toml", failing: []string{"mutex-linearizable", "mutex-cs"},
			checks: []string{"mutex-linearizable", "mutex-cs", "mutex-fairness", "mutex-measures"},
			// The double grant needs the fresh n5 back before anyone
			// notices it gone (see the file): a run whose others noticed
			// is not as expected.
			again: func(*history.History) string { return "" }},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			name := strings.TrimSuffix(tt.file, ".toml")
			var run coupRun
			var latest string
			for try := 1; ; try++ {
				run = coup(t, "run", scenarioPath(t, tt.file))
				latest = filepath.Join(run.store, name, "latest")
				if tt.again == nil || try == 3 {
					break
				}
				if run.code == 0 {
					why := tt.again(readHistory(t, latest))
					if why == "" {
						break
					}
					t.Logf("run %d: %s; again", try, why)
				} else {
					t.Logf("run %d: exit %d; again\n%s", try, run.code, run.stdout)
				}
			}
			if run.code != 0 {
				t.Fatalf("exit %d, want 0\n%s%s", run.code, run.stdout, run.stderr)
			}
			res := readResults(t, latest)
			ran := tt.checks
			if ran == nil {
				ran = checks.MutexDefaults
			}
			for _, c := range ran {
				want := any(!slices.Contains(tt.failing, c))
				if got := checkValid(t, res, c); got != want {
					t.Errorf("%s = %v, want %v", c, got, want)
				}
			}
			m := figures(t, res, "mutex-measures")
			if m["entries"] == 0.0 {
				t.Errorf("no entry into the critical section: %v", m)
			}
			switch name {
			case "ricart-agrawala":
				// Ricart–Agrawala without faults costs exactly 2(N−1)
				// messages per entry.
				if got := m["messages_per_entry"]; got != 8.0 {
					t.Errorf("messages per entry %v, want 2(N−1) = 8", got)
				}
				if b := res.Stats.Messages.ByType; b["request"] != b["reply"] || b["request"] == 0 {
					t.Errorf("messages by type %v, want as many replies as requests", b)
				}
			case "centralised":
				// One request, one grant and one release per entry.
				for _, typ := range []string{"request", "grant", "release"} {
					if got := m["messages_per_entry_"+typ]; got != 1.0 {
						t.Errorf("%s messages per entry %v, want 1", typ, got)
					}
				}
			case "centralised-crash":
				h := readHistory(t, latest)
				if !nemesisHit(h, "crash", "n5") || !reported(h, "n4", history.ReportLeader, "n4") {
					t.Error("the history does not show n5 crashed and n4 taking over")
				}
			case "centralised-replace":
				h := readHistory(t, latest)
				if !nemesisHit(h, "replace", "n5") {
					t.Error("the history does not show n5 replaced")
				}
				page, err := os.ReadFile(filepath.Join(latest, checks.VisualisationFile))
				if err != nil {
					t.Fatalf("no visualisation: %v", err)
				}
				if !strings.Contains(string(page), `"Tag":"held twice"`) {
					t.Errorf("%s does not mark the clients that held the lock together", checks.VisualisationFile)
				}
			}
		})
	}
}

// reelected says why a run of bully-elected nodes elected more than
// once: more leader reports than nodes.
func reelected(h *history.History) string {
	reports, nodes := 0, map[string]bool{}
	for _, e := range h.Events {
		if e.Kind == history.KindReport && e.What == history.ReportLeader {
			reports++
			nodes[e.Node] = true
		}
	}
	if reports > len(nodes) {
		return fmt.Sprintf("bully elected more than once (%d leader reports from %d nodes)", reports, len(nodes))
	}
	return ""
}

func readHistory(t *testing.T, dir string) *history.History {
	t.Helper()
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	h = h.Expanded() // messages too, in Events
	return h
}

// nemesisHit reports whether the nemesis began a fault of that kind on
// node.
func nemesisHit(h *history.History, what, node string) bool {
	for _, e := range h.Events {
		if e.Kind == history.KindNemesis && e.What == what && slices.Contains(e.Nodes, node) {
			return true
		}
	}
	return false
}

// reported reports whether node made the report.
func reported(h *history.History, node, what, value string) bool {
	for _, e := range h.Events {
		if e.Kind == history.KindReport && e.Node == node && e.What == what && e.Value == value {
			return true
		}
	}
	return false
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
