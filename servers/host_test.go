package servers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/scenario"
)

// sidecarTable gives each node of a peer scenario a sidecar: this test
// binary again, as a plain TCP program that listens on the host's port
// "side", leads nobody and dials the node's own server, so that the
// server's log shows what the sidecar sent.
const sidecarTable = `
[[server.sidecar]]
name = "side"
command = ["sh", "-c", "exec %s {{.ID}}-side {{.Addr.side}} none {{.Addr.peer}}"]
ports = ["side"]
`

// hostScenario is a peer scenario whose hosts have a sidecar each, with
// rest (faults) appended.
func hostScenario(t *testing.T, rest string) *scenario.Scenario {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return peerScenarioWith(t, fmt.Sprintf(sidecarTable, exe), "[checks]\nrun = [\"two-leaders\", \"one-leader-per-term\"]\n"+rest)
}

// testHost is one node's local host, outside a run, with what it says
// collected.
type testHost struct {
	*localHost
	mu     sync.Mutex
	lines  []string
	exited []string
	logged []string // harness.log's lines
}

func newTestHost(t *testing.T, sc *scenario.Scenario) *testHost {
	t.Helper()
	dir := t.TempDir()
	l, err := newLayout(sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	iso, err := chooseIsolation(sc.Server)
	if err != nil {
		t.Fatal(err)
	}
	th := &testHost{}
	th.localHost = newLocalHost(l.nodes[0], sc.Server, dir, iso, hostEvents{
		line: func(_ []scenario.Pattern, line []byte, _ string, _ int) {
			th.mu.Lock()
			th.lines = append(th.lines, string(line))
			th.mu.Unlock()
		},
		exited: func(inc int, detail string) {
			th.mu.Lock()
			th.exited = append(th.exited, detail)
			th.mu.Unlock()
		},
		sidecarExited: func(name, detail string) { t.Logf("sidecar %s exited on its own: %s", name, detail) },
		logf: func(format string, args ...any) {
			th.mu.Lock()
			th.logged = append(th.logged, fmt.Sprintf(format, args...))
			th.mu.Unlock()
			t.Logf(format, args...)
		},
		progress: t.Logf,
	})
	t.Cleanup(func() { th.Stop() })
	return th
}

// procs are the host's running processes, the server first.
func (h *testHost) running() []boxed {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.localHost.mu.Lock()
	defer h.localHost.mu.Unlock()
	var out []boxed
	for _, hp := range h.procs {
		out = append(out, hp.p)
	}
	return out
}

// A whole host is paused and resumed together: its server and its
// sidecar, both stopped by one pause, both running again after the
// resume; a stop ends both, and the host starts again, both anew.
func TestHostPausedAndResumedTogether(t *testing.T) {
	h := newTestHost(t, hostScenario(t, ""))
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ps := h.running()
	if len(ps) != 2 {
		t.Fatalf("%d processes running, want the server and its sidecar", len(ps))
	}
	if g, _ := syscall.Getpgid(ps[1].Pid()); g != ps[0].Pid() {
		t.Errorf("the sidecar's group is %d, want the server's, %d", g, ps[0].Pid())
	}
	marks := 0
	if err := h.Pause(func() { marks++ }); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		waitState(t, p, true)
	}
	if err := h.Pause(func() { marks++ }); err != errPaused {
		t.Errorf("a second pause: %v, want %v", err, errPaused)
	}
	if err := h.Resume(func() { marks++ }); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		waitState(t, p, false)
	}
	if marks != 2 {
		t.Errorf("the run was told of %d pauses and resumes, want 2", marks)
	}

	if !h.Stop() {
		t.Fatal("Stop found nothing running")
	}
	for _, p := range ps {
		if err := syscall.Kill(p.Pid(), 0); err == nil {
			t.Errorf("pid %d still runs after the host's stop", p.Pid())
		}
	}
	if h.Stop() {
		t.Error("a second Stop found something running")
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	again := h.running()
	if len(again) != 2 || again[0].Pid() == ps[0].Pid() || h.Incarnation() != 2 {
		t.Errorf("after a restart: %d processes, incarnation %d", len(again), h.Incarnation())
	}
	b, err := os.ReadFile(filepath.Join(h.dir, "n1.side.log"))
	if err != nil || strings.Count(string(b), "--- coup: incarnation") != 2 {
		t.Errorf("the sidecar's own log, n1.side.log, holds %q (%v), want a line per start", b, err)
	}
}

// The server's end is the host's: when it exits on its own, its sidecar
// goes with it, and the run is told once.
func TestHostEndsWithItsServer(t *testing.T) {
	h := newTestHost(t, hostScenario(t, ""))
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ps := h.running()
	if err := syscall.Kill(ps[0].Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		waitGone(t, p.Pid())
	}
	// The host's own handler runs after the process is reaped: observe
	// it, rather than assume it.
	deadline := time.Now().Add(10 * time.Second)
	for h.Up() {
		if time.Now().After(deadline) {
			t.Fatal("the host is still up after its server exited")
		}
		time.Sleep(time.Millisecond)
	}
	for {
		h.mu.Lock()
		n := len(h.exited)
		h.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.exited) != 1 || !strings.Contains(h.exited[0], "killed") || !strings.Contains(h.exited[0], "its sidecars ended with it") {
		t.Errorf("the run was told %q, want one end of the host", h.exited)
	}
}

// waitState polls until p is stopped (or running), as /proc says, or
// fails the test after 10 seconds.
func waitState(t *testing.T, p boxed, stopped bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for proc.PidStopped(p.Pid()) != stopped {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: never stopped=%v", p.Pid(), stopped)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitGone polls until pid is gone (or a zombie), or fails the test
// after 10 seconds.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still runs", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// A run of hosts with sidecars records a pause of the whole host, and
// leaves no process of any host behind.
func TestHostsInARun(t *testing.T) {
	sc := hostScenario(t, `
[[faults]]
kind = "pause"
target = "n2"
at = "200ms"
for = "300ms"
`)
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %+v", err, res)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var whats []string
	for _, e := range h.Events {
		if e.Kind == history.KindProcess && e.Node == "n2" {
			whats = append(whats, e.What)
		}
	}
	if strings.Join(whats, " ") != "start pause resume stop" {
		t.Errorf("n2's process events %q, want start pause resume stop", whats)
	}
	all := pids(t, dir)
	if len(all) != 6 {
		t.Errorf("%d pids in the logs, want a server and a sidecar on each of 3 hosts", len(all))
	}
	for _, pid := range all {
		if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
			t.Errorf("pid %d still running after the run", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	// The sidecar's lines reached its own log, and its connection to its
	// server the server's.
	side, _ := os.ReadFile(filepath.Join(dir, "n2.side.log"))
	server, _ := os.ReadFile(filepath.Join(dir, "n2.log"))
	if !strings.Contains(string(side), "n2-side follows none") || !strings.Contains(string(server), "n2 got from n2-side seq") {
		t.Errorf("n2.side.log:\n%.300s\nn2.log:\n%.300s", side, server)
	}
}
