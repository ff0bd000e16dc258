package servers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// A server whose probe is a command is ready once the command exits 0,
// not once its port accepts connections: the server makes its flag
// 300ms after it listens, and the host's start returns after.
func TestCommandProbe(t *testing.T) {
	sc := peerScenarioWith(t, `ready = { command = ["sh", "-c", "test -f {{.Dir}}/flag"] }`, "")
	h := newTestHost(t, sc)
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.MkdirAll(h.node.Dir, 0o755)
		os.WriteFile(filepath.Join(h.node.Dir, "flag"), nil, 0o644)
	}()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.node.Dir, "flag")); err != nil {
		t.Errorf("the start returned before the probe's command could succeed: %v", err)
	}
}

// A probe that never answers fails the start, naming the probe, its
// last answer and the end of the process's log.
func TestProbeThatNeverAnswers(t *testing.T) {
	sc := peerScenarioWith(t, `ready = { command = ["sh", "-c", "echo not yet; exit 7"] }`, "")
	sc.Server.StartTimeout.D = 3 * time.Second
	h := newTestHost(t, sc)
	err := h.Start(context.Background())
	if err == nil {
		t.Fatal("the start succeeded with a probe that never answers")
	}
	for _, want := range []string{"n1 was not ready within start_timeout 3s", `the command ["sh" "-c" "echo not yet; exit 7"]`, "its last answer: exit status 7: not yet", "the end of its log", "n1 leads at term 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if h.Up() {
		t.Error("the host is up after its start failed")
	}
}

// An HTTP probe waits for a 2xx answer whose body matches.
func TestHTTPProbe(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := asked.Add(1); {
		case n < 3:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		case n < 5:
			fmt.Fprint(w, `{"health":"false","reason":"not_decided"}`)
		default:
			fmt.Fprint(w, `{"health":"true"}`)
		}
	}))
	defer srv.Close()
	sc := peerScenarioWith(t, fmt.Sprintf(`ready = { http = "%s/health", match = '"health":"true"' }`, srv.URL), "")
	h := newTestHost(t, sc)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := asked.Load(); n < 5 {
		t.Errorf("the host was ready after %d GETs, want the fifth, the first whose body matches", n)
	}
}

// Sidecars start in order, each once the one it starts after is ready:
// the second sidecar starts only once the first's flag is there.
func TestSidecarsStartInOrder(t *testing.T) {
	sc := peerScenarioWith(t, `
[[server.sidecar]]
name = "first"
command = ["sh", "-c", "sleep 0.3; touch {{.Dir}}/first; exec sleep 3600"]
ready = { command = ["test", "-f", "{{.Dir}}/first"] }

[[server.sidecar]]
name = "second"
command = ["sh", "-c", "test -f {{.Dir}}/first && echo after first || echo before first; exec sleep 3600"]
`, "")
	h := newTestHost(t, sc)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(h.dir, "n1.second.log"))
		if strings.Contains(string(b), "after first") {
			break
		}
		if strings.Contains(string(b), "before first") || time.Now().After(deadline) {
			t.Fatalf("n1.second.log: %s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// With user, as root, every process of the host runs as that user, and
// the node's folder is theirs.
func TestHostRunsAsItsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching the hosts' user needs root; TestUserRefusedWithoutRoot is this user's")
	}
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "user.toml"), `nodes = 1
duration = "1s"

[server]
command = ["sh", "-c", "touch {{.Data}}/server; exec sleep 3600"]
ports = ["peer"]
ready = { command = ["test", "-f", "{{.Data}}/server"] }
user = "nobody"
isolation = "cgroup"

[[server.log]]
match = '(?P<self>n[0-9]) leads at term (?P<term>[0-9]+)'
role = "leader"

[[server.sidecar]]
name = "side"
command = ["sh", "-c", "touch {{.Data}}/side; exec sleep 3600"]
ready = { command = ["test", "-f", "{{.Data}}/side"] }
`)
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHost(t, sc)
	// nobody must reach the node's folder, inside the test's.
	for p := h.dir; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		os.Chmod(p, 0o755)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pid := range h.Pids() {
		if uid := statusUid(pid); uid != 65534 {
			t.Errorf("pid %d runs as uid %d, want nobody's", pid, uid)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(h.node.Data, &st); err != nil || st.Uid != 65534 {
		t.Errorf("the data folder's owner is %d (%v), want nobody", st.Uid, err)
	}
	if pids := h.Pids(); len(pids) != 2 {
		t.Errorf("the host runs %d processes, want the server and its sidecar", len(pids))
	}
}

// As a user who is not root, user is refused with the reason.
func TestUserRefusedWithoutRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("as root the user is switched (TestHostRunsAsItsUser)")
	}
	sc := peerScenarioWith(t, `user = "daemon"`, "")
	_, err := chooseIsolation(sc.Server)
	if err == nil || !strings.Contains(err.Error(), `user = "daemon"`) || !strings.Contains(err.Error(), "root") {
		t.Errorf("got %v, want a refusal that names the user and root", err)
	}
}

// statusUid is a process's real uid, from /proc/PID/status (-1 when it
// cannot be read).
func statusUid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			var uid int
			fmt.Sscan(rest, &uid)
			return uid
		}
	}
	return -1
}

// A pipe that a process outside the host holds open (a grandchild that
// left the host's process group, with isolation "group") does not hold
// up the host's stop: coup reads it for a bounded time, says so, and
// closes it.
func TestPipeHeldOutsideTheHost(t *testing.T) {
	sc := peerScenarioWith(t, `isolation = "group"

[[server.sidecar]]
name = "daemon"
command = ["sh", "-c", "setsid sh -c 'while :; do sleep 1; done # {{.Dir}} holds the pipe' & exec sleep 3600"]
`, "")
	h := newTestHost(t, sc)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	marker := h.node.Dir + " holds the pipe"
	deadline := time.Now().Add(10 * time.Second)
	// The daemon has left the host once a process naming the marker leads
	// a session of its own (setsid done: before it, a kill of the host's
	// group still reaches it).
	escaped := func() bool {
		for _, pid := range processesNaming(marker) {
			if statField(pid, 3) == pid {
				return true
			}
		}
		return false
	}
	for !escaped() {
		if time.Now().After(deadline) {
			t.Fatal("the daemon never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer func() {
		for _, pid := range processesNaming(marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	stopped := make(chan bool)
	go func() { stopped <- h.Stop() }()
	select {
	case <-stopped:
	case <-time.After(60 * time.Second):
		t.Fatal("the host's stop waits on a pipe held outside the host")
	}
	if len(processesNaming(marker)) == 0 {
		t.Fatal("the daemon ended with the host: nothing held the pipe")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	said := strings.Join(h.logged, "\n")
	if !strings.Contains(said, "n1's daemon: its output is still held open") {
		t.Errorf("harness.log does not say the pipe was given up on:\n%s", said)
	}
}

// A failed start names the connections the proxies could not attribute
// meanwhile, and the last one's reason; with none, it says nothing.
func TestStartNoteNamesUnattributedConnections(t *testing.T) {
	r := &run{}
	if got := r.startNote(); got != "" {
		t.Errorf("with no unattributed connection: %q, want nothing", got)
	}
	for range 18 {
		r.stats.add(history.CountLinkUnattributed)
	}
	last := "the dialler of 127.0.0.1:36182: socket 206845 is held by no process of the nodes' hosts"
	r.unattributed.Store(&last)
	got := r.startNote()
	for _, want := range []string{"18 connections could not be attributed to a node", "were reset", "(the last: " + last + ")"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
}
