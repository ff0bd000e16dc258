package main

// End-to-end tests: they build the coup binary once, run real scenarios
// with real node processes, and read what the runs leave in the store.
// Every test checks that no node process outlives it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes/changroberts"
)

var coupBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "coup-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	coupBin = filepath.Join(dir, "coup")
	build := exec.Command("go", "build", "-o", coupBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build coup:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// tagged is the environment marker of one test's processes: every node
// inherits it, so the test can find any that survive.
func tagged(t *testing.T) string {
	return "COUP_E2E_TAG=" + strings.ReplaceAll(t.Name(), "/", "_") + fmt.Sprint(time.Now().UnixNano())
}

// survivors lists the pids of live processes whose environment has tag.
func survivors(tag string) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, []byte(tag)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(d, "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			continue // a zombie is dead
		}
		var pid int
		fmt.Sscanf(filepath.Base(d), "%d", &pid)
		out = append(out, pid)
	}
	return out
}

func checkNoSurvivors(t *testing.T, tag string) {
	t.Helper()
	// Killed processes take a moment to be reaped by init, longer on a
	// loaded machine; poll for a while (a passing test waits no longer
	// than the reaping takes).
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := survivors(tag)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes survived the run: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type coupRun struct {
	code   int
	stdout string
	stderr string
	store  string
}

// coup runs the coup binary with args, in a fresh store, and checks that it
// leaves no process behind.
func coup(t *testing.T, args ...string) coupRun {
	t.Helper()
	return coupIn(t, t.TempDir(), args...)
}

func scenarioPath(t *testing.T, name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "scenarios", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type results struct {
	Valid   any                        `json:"valid"`
	Outcome string                     `json:"outcome"`
	Exit    int                        `json:"exit_code"`
	Checks  map[string]json.RawMessage `json:"checks"`
	Stats   struct {
		Messages struct {
			Sent   int64            `json:"sent"`
			ByType map[string]int64 `json:"by_type"`
		} `json:"messages"`
	} `json:"stats"`
}

func checkValid(t *testing.T, r results, name string) any {
	t.Helper()
	var c struct {
		Valid any `json:"valid"`
	}
	if err := json.Unmarshal(r.Checks[name], &c); err != nil {
		t.Fatalf("check %s: %v", name, err)
	}
	return c.Valid
}

func readResults(t *testing.T, dir string) results {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestChangRobertsRunsValid(t *testing.T) {
	run := coup(t, "run", scenarioPath(t, "chang-roberts.toml"))
	if run.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", run.code, run.stdout, run.stderr)
	}
	latest := filepath.Join(run.store, "chang-roberts", "latest")
	res := readResults(t, latest)
	if res.Valid != true {
		t.Errorf("results.json valid = %v, want true", res.Valid)
	}
	h, err := history.ReadFile(filepath.Join(latest, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	h = h.Expanded() // messages too, in Events
	// Every node reports its belief, and ends trusting the highest id.
	final := map[string]string{}
	for _, e := range h.Events {
		if e.Kind == history.KindReport && e.What == history.ReportLeader {
			final[e.Node] = e.Value
		}
	}
	for _, n := range h.Meta.Nodes {
		if final[n] != "n1" {
			t.Errorf("%s ends trusting %q, want n1 (id 5, the highest)", n, final[n])
		}
	}
	// The message count is Chang–Roberts' for this arrangement: 3n−1.
	election, elected := changroberts.Cost(h.Meta.IDs, 1)
	if got := res.Stats.Messages.ByType; got["election"] != int64(election) || got["elected"] != int64(elected) {
		t.Errorf("messages by type %v, want election %d and elected %d", got, election, elected)
	}
	if n := len(h.Meta.Nodes); res.Stats.Messages.Sent != int64(3*n-1) {
		t.Errorf("%d messages, want 3n−1 = %d", res.Stats.Messages.Sent, 3*n-1)
	}
	if v := checkValid(t, res, "complexity"); v != true {
		t.Errorf("complexity = %v, want true (3n−1 messages is the bound)", v)
	}
	for _, f := range []string{"n1.log", "n5.log", "harness.log", "report.html"} {
		if _, err := os.Stat(filepath.Join(latest, f)); err != nil {
			t.Errorf("store lacks %s: %v", f, err)
		}
	}
}

func TestChangRobertsCrashFailsTermination(t *testing.T) {
	run := coup(t, "run", scenarioPath(t, "chang-roberts-crash.toml"))
	if run.code != 0 {
		t.Fatalf("exit %d, want 0 (the violation is expected)\n%s%s", run.code, run.stdout, run.stderr)
	}
	latest := filepath.Join(run.store, "chang-roberts-crash", "latest")
	res := readResults(t, latest)
	if res.Valid != false {
		t.Errorf("valid = %v, want false", res.Valid)
	}
	if v := checkValid(t, res, "termination"); v != false {
		t.Errorf("termination = %v, want false", v)
	}
	if v := checkValid(t, res, "two-leaders"); v != true {
		t.Errorf("two-leaders = %v, want true", v)
	}

	// `coup check` reproduces the verdict from the history alone.
	check := coup(t, "check", filepath.Join(latest, "history.jsonl"))
	if check.code != 0 || !regexp.MustCompile(`termination +false`).MatchString(check.stdout) {
		t.Errorf("coup check: exit %d, want 0 and termination false:\n%s%s", check.code, check.stdout, check.stderr)
	}

	// `coup check --report` writes the page a run leaves in its folder.
	page := filepath.Join(t.TempDir(), "page.html")
	check = coup(t, "check", "--report", page, filepath.Join(latest, "history.jsonl"))
	b, err := os.ReadFile(page)
	if err != nil || check.code != 0 {
		t.Fatalf("coup check --report: exit %d, %v\n%s", check.code, err, check.stderr)
	}
	if !strings.Contains(string(b), "believed in no leader") || !strings.Contains(string(b), "<svg") {
		t.Errorf("report %s lacks termination's explanation or the timeline", page)
	}

	// The same file expecting a valid run exits 1.
	src, err := os.ReadFile(scenarioPath(t, "chang-roberts-crash.toml"))
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(src), "valid = false\nviolations = [\"termination\"]", "valid = true", 1)
	if changed == string(src) {
		t.Fatal("could not find the expectation to change")
	}
	file := filepath.Join(t.TempDir(), "expect-valid.toml")
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	run = coup(t, "run", file)
	if run.code != 1 {
		t.Errorf("expecting valid: exit %d, want 1\n%s%s", run.code, run.stdout, run.stderr)
	}
}

func TestBadScenarioExits2WithPosition(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(file, []byte("algorithm = \"chang-roberts\"\nnodes = 3\n[network]\nlatnecy = \"1ms\"\n"), 0o644)
	run := coup(t, "run", file)
	if run.code != 2 {
		t.Fatalf("exit %d, want 2", run.code)
	}
	if want := file + ":4:1: network.latnecy: unknown key"; !strings.Contains(run.stderr, want) {
		t.Errorf("stderr %q does not contain %q", run.stderr, want)
	}
	// A top-level key is met with the key it meant, as a table's is, in
	// coup list as in coup run.
	top := filepath.Join(t.TempDir(), "top.toml")
	os.WriteFile(top, []byte("algorithm = \"chang-roberts\"\nnodes = 3\nrecovery_window = \"1s\"\n"), 0o644)
	for _, cmd := range []string{"run", "list"} {
		r := coup(t, cmd, top)
		if want := top + ":3:1: recovery_window: unknown key (did you mean recovery?)"; r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("coup %s: exit %d, stderr %q; want 2 and %q", cmd, r.code, r.stderr, want)
		}
	}
}

// A bad fault stops the run before it starts: exit 2, with the file, line
// and field.
func TestBadFaultExits2WithPosition(t *testing.T) {
	tests := []struct{ fault, want string }{
		{"kind = \"explode\"", ":5:1: faults[0].kind: unknown fault"},
		{"kind = \"pause\"\ntarget = \"n9\"", ":6:1: faults[0].target: \"n9\" names no node"},
		{"kind = \"pause\"\ntarget = \"n1\"\nfor = \"-1s\"", ":7:1: faults[0].for: negative duration"},
		{"kind = \"loss\"\nprobability = 2", ":6:1: faults[0].probability: must be between 0 and 1"},
		{"kind = \"partition\"\nshape = \"isolate\"\noneway = true", ":4:1: faults[0].direction: a one-way partition needs a direction"},
	}
	for _, tt := range tests {
		file := filepath.Join(t.TempDir(), "bad.toml")
		os.WriteFile(file, []byte("algorithm = \"chang-roberts\"\nnodes = 3\n\n[[faults]]\n"+tt.fault+"\n"), 0o644)
		run := coup(t, "run", file)
		if run.code != 2 || !strings.Contains(run.stderr, file+tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.fault, run.code, run.stderr, file+tt.want)
		}
	}
}

// The history is causal: in Chang–Roberts the winner reports itself leader
// before it sends elected, and each node reports the leader only after
// elected was delivered to it. A bigger ring with no latency makes the
// recording race as hard as it can.
func TestHistoryIsCausal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "causal.toml")
	os.WriteFile(file, []byte(`algorithm = "chang-roberts"
nodes = 16
duration = "300ms"
recovery = "200ms"
[network]
latency = "0ms"
[workload]
initiators = ["all"]
`), 0o644)
	run := coup(t, "run", file)
	if run.code != 0 {
		t.Fatalf("exit %d\n%s%s", run.code, run.stdout, run.stderr)
	}
	h, err := history.ReadFile(filepath.Join(run.store, "causal", "latest", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	h = h.Expanded()                // messages too, in Events
	sent := map[int64]int64{}       // msg -> index of its send
	delivered := map[string]int64{} // node -> index of the delivery of elected to it
	leaderAt := map[string]int64{}  // node -> index of its leader report
	electedSentBy := map[string]int64{}
	for _, e := range h.Events {
		switch {
		case e.Kind == history.KindMsg && e.What == history.MsgSend:
			sent[e.Msg] = e.Index
			if e.MType == "elected" {
				electedSentBy[e.Src] = e.Index
			}
		case e.Kind == history.KindMsg && e.What == history.MsgDeliver:
			s, ok := sent[e.Msg]
			if !ok || s >= e.Index {
				t.Errorf("message %d delivered at index %d, sent at %d", e.Msg, e.Index, s)
			}
			if e.MType == "elected" {
				delivered[e.Dest] = e.Index
			}
		case e.Kind == history.KindReport && e.What == history.ReportLeader:
			leaderAt[e.Node] = e.Index
		}
	}
	if len(leaderAt) != 16 {
		t.Fatalf("%d nodes reported a leader, want 16", len(leaderAt))
	}
	for node, at := range leaderAt {
		if node == "n16" {
			if s, ok := electedSentBy[node]; !ok || at >= s {
				t.Errorf("the winner reported leadership at %d, after sending elected at %d", at, s)
			}
			continue
		}
		if d, ok := delivered[node]; !ok || d >= at {
			t.Errorf("%s reported the leader at %d, but elected was delivered to it at %d", node, at, d)
		}
		if s, ok := electedSentBy[node]; !ok || at >= s {
			t.Errorf("%s forwarded elected at %d, before reporting the leader at %d", node, s, at)
		}
	}
}

// Ctrl-C or SIGTERM in the middle of a run stops it: no node survives, the
// history on disk is checkable, and the exit code says no verdict (3).
func TestSignalsLeaveNoProcess(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "long.toml")
			os.WriteFile(file, []byte("algorithm = \"chang-roberts\"\nnodes = 5\nduration = \"30s\"\n"), 0o644)
			store := t.TempDir()
			tag := tagged(t)
			cmd, out := startUp(t, tag, "run", "--store", store, file)
			if n := len(survivors(tag)); n != 7 {
				t.Errorf("%d tagged processes while running, want 7 (coup, its reaper and 5 nodes)", n)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 3 {
				t.Errorf("exit %v, want 3\n%s", err, out.String())
			}
			checkNoSurvivors(t, tag)
			h, err := history.ReadFile(filepath.Join(store, "long", "latest", "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if h.Ended {
				t.Error("an interrupted run's history has an end event")
			}
		})
	}
}

// When coup itself is killed with SIGKILL, so that it can clean up nothing,
// no node survives it: not the node's own process, and not what a wrapper
// started beside it in its process group.
func TestKilledHarnessLeavesNoWrapperChildren(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "wrapped.toml")
	// Each node is a shell that starts a sleeping child, then runs the
	// built-in bully node in its place.
	scen := fmt.Sprintf(`algorithm = "bully"
command = ["sh", "-c", "sleep 600 & exec %s node --algo bully"]
nodes = 3
duration = "30s"
[workload]
kind = "none"
[checks]
run = ["two-leaders"]
`, coupBin)
	if err := os.WriteFile(file, []byte(scen), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := tagged(t)
	cmd, _ := startUp(t, tag, "run", "--store", filepath.Join(dir, "store"), file)
	// coup, its reaper, and per node the node and its sleeping child.
	if n := len(survivors(tag)); n != 8 {
		t.Errorf("%d tagged processes while running, want 8", n)
	}
	cmd.Process.Kill()
	_ = cmd.Wait()
	checkNoSurvivors(t, tag)
}

// startUp starts coup with args and tag in its environment, and returns
// once it says its nodes are up (its progress line), with what it prints.
// Three JVMs (ZooKeeper) on a loaded machine take tens of seconds to come
// up, so it waits as long as coup's own start timeout and more; a start
// that fails ends coup, and its words, sooner.
func startUp(t *testing.T, tag string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(coupBin, args...)
	cmd.Env = append(os.Environ(), tag)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(out.String(), "nodes up") {
		if ended(cmd.Process.Pid) {
			cmd.Wait()
			t.Fatalf("coup ended before its nodes came up:\n%s", out.String())
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("nodes never came up:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd, out
}

// ended reports whether the child pid has exited and waits to be reaped
// (a zombie), without reaping it: its caller's Wait still gets its status.
func ended(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z"))
}

// syncBuffer is a bytes.Buffer that a test may read while a command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
