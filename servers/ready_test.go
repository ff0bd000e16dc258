package servers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// lateScenario is three plain TCP programs that say nothing of a leader
// (they follow "none"), each with a sidecar that says, after delay
// seconds (a sleep of the sidecar's own), that n1 leads at term 1 and the
// others follow it: the cluster is seen ready only then, through the
// sidecars' log patterns. server adds keys to [server]; a partition of n3
// is due at 100ms.
func lateScenario(t *testing.T, delay, server string) *scenario.Scenario {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`nodes = 3
duration = "1s"
recovery = "300ms"

[server]
command = ["sh", "-c", "exec %s {{.ID}} {{.Addr.peer}} none%s"]
env = { COUP_TEST_PEER = "1" }
ports = ["peer"]
peer = ["peer"]
start_timeout = "10s"
%s

[[server.log]]
match = 'follows (?P<leader>n[0-9]) at term (?P<term>[0-9]+)'
role = "follower"

[[server.sidecar]]
name = "say"
command = ["sh", "-c", "sleep %s; if [ {{.ID}} = n1 ]; then echo '{{.ID}} leads at term 1'; else echo '{{.ID}} follows n1 at term 1'; fi; exec sleep 60"]

[[server.sidecar.log]]
match = '(?P<self>n[0-9]) leads at term (?P<term>[0-9]+)'
role = "leader"

[[server.sidecar.log]]
match = 'follows (?P<leader>n[0-9]) at term (?P<term>[0-9]+)'
role = "follower"

[[faults]]
kind = "partition"
shape = "isolate"
target = "n3"
at = "100ms"
for = "200ms"

[checks]
run = ["one-leader-per-term"]
`, exe, `{{range .Nodes}}{{if ne .ID $.ID}} {{(index $.Reach .ID).Addr.peer}}{{end}}{{end}}`, server, delay)
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "late.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// readyAndFault are the history's ready event and its first fault.
func readyAndFault(t *testing.T, dir string) (ready, fault *history.Event) {
	t.Helper()
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindReady && ready == nil:
			ready = e
		case e.Kind == history.KindNemesis && e.Phase == history.PhaseStart && fault == nil:
			fault = e
		}
	}
	if ready == nil || fault == nil {
		t.Fatalf("ready %+v, first fault %+v", ready, fault)
	}
	return ready, fault
}

// With ready_state = "followers", the run waits until a leader and every
// follower are seen (here through the sidecars' logs): the fault due at
// 100ms begins after the ready event, late, and the verdict has nothing
// to say of it.
func TestReadyWaitsForFollowers(t *testing.T) {
	sc := lateScenario(t, "0.3", `ready_state = "followers"`)
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %+v", err, res)
	}
	ready, fault := readyAndFault(t, dir)
	if ready.Value != "n1" || ready.Term == nil || *ready.Term != 1 || !strings.Contains(ready.Detail, "n3 follows n1") {
		t.Errorf("ready event %+v, want n1 leading in term 1 and n3 following", ready)
	}
	if fault.Index < ready.Index {
		t.Errorf("the fault (event %d) began before the cluster was ready (event %d)", fault.Index, ready.Index)
	}
	if res.Ready == nil || res.Ready.Waited != "followers" || !res.Ready.Seen || len(res.Ready.FaultsBefore) != 0 {
		t.Errorf("results' ready %+v", res.Ready)
	}
	for _, n := range res.Notes {
		if strings.Contains(n, "before the cluster was ready") {
			t.Errorf("note %q on a run that waited", n)
		}
	}
}

// Without a wait (ready_state "port", the default for a description of
// your own), the fault due at 100ms begins while the cluster is still
// forming; the cluster is seen ready later, and the verdict names the
// fault in a note.
func TestVerdictNamesAFaultThatBeganBeforeReady(t *testing.T) {
	sc := lateScenario(t, "0.8", "")
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %+v", err, res)
	}
	ready, fault := readyAndFault(t, dir)
	if fault.Index > ready.Index {
		t.Fatalf("the fault (event %d at %dns) began after the ready event (%d at %dns): the sidecars said too soon", fault.Index, fault.Time, ready.Index, ready.Time)
	}
	if res.Ready == nil || res.Ready.Waited != "port" || len(res.Ready.FaultsBefore) != 1 || !strings.HasPrefix(res.Ready.FaultsBefore[0], "faults[0]#1 partition [n3] at ") {
		t.Errorf("results' ready %+v", res.Ready)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "a fault began before the cluster was ready: faults[0]#1 partition [n3]") {
		t.Errorf("notes %q do not name the fault", res.Notes)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(b), "a fault began before the cluster was ready") {
		t.Errorf("the report does not give the note (%v)", err)
	}
}

// A cluster that is not seen ready within ready_timeout fails the run,
// which is not judged, with what was seen of each node.
func TestReadyTimeoutFailsTheRun(t *testing.T) {
	sc := lateScenario(t, "60", "ready_state = \"leader\"\nready_timeout = \"300ms\"")
	res, _, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NotStarted() || res.ExitCode != 2 {
		t.Fatalf("not started %v, exit %d: %s", res.NotStarted(), res.ExitCode, res.Error)
	}
	for _, want := range []string{"not ready within ready_timeout 300ms", `ready_state "leader"`, "n1: nothing seen yet"} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("error %q does not say %q", res.Error, want)
		}
	}
}
