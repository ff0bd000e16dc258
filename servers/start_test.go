package servers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// checkUnstarted checks a run's folder after a start that did not
// happen: the history begins with its meta event and says how the start
// ended and why, coup check reads it as the run did, and results.json and
// harness.log hold the cause.
func checkUnstarted(t *testing.T, dir string, res *verdict.Results, what, cause string) {
	t.Helper()
	if !res.NotStarted() || res.Unstarted != what || !strings.Contains(res.Error, cause) {
		t.Errorf("results: not started %v, unstarted %q (want %q), error %q (want %q)", res.NotStarted(), res.Unstarted, what, res.Error, cause)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatalf("the history of a run that did not start cannot be read: %v", err)
	}
	if h.Meta.Scenario == "" || h.Unstarted == nil || h.Unstarted.What != what || h.Unstarted.Detail != res.Error || h.Ended {
		t.Errorf("history: meta %q, unstarted %+v, ended %v", h.Meta.Scenario, h.Unstarted, h.Ended)
	}
	again, err := verdict.Evaluate(h)
	if err != nil || again.Error != res.Error || again.ExitCode != res.ExitCode {
		t.Errorf("coup check says %+v (%v), the run said error %q exit %d", again, err, res.Error, res.ExitCode)
	}
	var saved verdict.Results
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil || json.Unmarshal(b, &saved) != nil || saved.Error != res.Error || saved.Unstarted != what {
		t.Errorf("results.json: %s (%v)", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "harness.log")); !strings.Contains(string(b), cause) {
		t.Errorf("harness.log does not say why the run did not start:\n%s", b)
	}
}

// A server that cannot start fails the run's start with its reason, in
// its own words (the end of its log), and nothing is left running.
func TestServerThatExitsFailsTheStart(t *testing.T) {
	src := `nodes = 2
[server]
command = ["sh", "-c", "echo no such luck >&2; exit 3"]
ports = ["peer"]
peer = ["peer"]
start_timeout = "5s"
[[server.log]]
match = '(?P<self>n[0-9]) leads'
role = "leader"
`
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "bad.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	checkUnstarted(t, dir, res, history.UnstartedFailed, "exited before it accepted connections")
	if !strings.Contains(res.Error, "no such luck") || res.ExitCode != verdict.ExitInput {
		t.Errorf("the cause lacks the server's own words, or exit %d is not 2: %q", res.ExitCode, res.Error)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "n1.log")); !strings.Contains(string(b), "no such luck") {
		t.Errorf("n1.log does not hold the server's own words: %q", b)
	}
}

// A start that fails before any server starts (a client process that
// exits before its init) is recorded all the same: the history begins
// with its meta event, then says why.
func TestClientProcessThatExitsFailsTheStart(t *testing.T) {
	sc := peerScenarioWith(t, `adapter = ["sh", "-c", "echo the client gives up >&2; exit 3"]`, oneClientKV)
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatalf("a failed start is the run's results, not an error: %v", err)
	}
	checkUnstarted(t, dir, res, history.UnstartedFailed, "client process c1 exited before it answered its init")
	if !strings.Contains(res.Error, "the client gives up") || res.ExitCode != verdict.ExitInput {
		t.Errorf("exit %d, error %q: want 2, with the end of the client's log", res.ExitCode, res.Error)
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "n*.log")); len(logs) != 0 {
		t.Errorf("servers were started after their clients failed: %v", logs)
	}
}

// cancelOn is a progress writer that cancels a run once it writes a line
// that holds a text.
type cancelOn struct {
	mu     sync.Mutex
	text   string
	cancel context.CancelFunc
	seen   strings.Builder
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen.Write(p)
	if strings.Contains(c.seen.String(), c.text) {
		c.cancel()
	}
	return len(p), nil
}

// A run interrupted while its client processes start (one that never
// answers its init) says it was interrupted, and where: it has no
// verdict (exit 3), and its history says so.
func TestInterruptedWhileClientsStart(t *testing.T) {
	sc := peerScenarioWith(t, `adapter = ["sh", "-c", "exec sleep 60"]`, oneClientKV)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := &cancelOn{text: "starting 1 client process", cancel: cancel}
	res, dir, err := Run(ctx, sc, Options{Store: t.TempDir(), Progress: progress})
	if err != nil {
		t.Fatalf("an interrupted start is the run's results, not an error: %v", err)
	}
	checkUnstarted(t, dir, res, history.UnstartedInterrupted, "interrupted while starting 1 client process")
	if !res.StartInterrupted() || res.ExitCode != verdict.ExitUnknown {
		t.Errorf("interrupted %v, exit %d: want an interrupted start, exit 3", res.StartInterrupted(), res.ExitCode)
	}
	if strings.Contains(res.Summary(), "valid=") {
		t.Errorf("a run that did not start is summed up with a verdict:\n%s", res.Summary())
	}
}
