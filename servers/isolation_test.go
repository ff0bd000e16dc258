package servers

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
)

// workerTable gives each host of a peer scenario a sidecar that starts
// a worker the way a daemon does: forked twice and in a session of its
// own (setsid), out of every process group coup made. The worker writes
// the time, in nanoseconds, to its host's beats file every 100ms.
const workerTable = `
isolation = "host"

[[server.sidecar]]
name = "worker"
command = ["sh", "-c", "(setsid sh -c 'while :; do date +%s%N >> {{.Dir}}/beats; sleep 0.1; done' &); exec sleep 3600"]
`

// A host holds a worker that calls setsid: a 2s pause of the host
// freezes it for 2s, a crash ends it, and after a run no process of any
// host is left. As root the hosts are cgroups; as a user who is not root
// (this test again, under setpriv as nobody), PID namespaces.
func TestHostHoldsASetsidWorker(t *testing.T) {
	sc := peerScenarioWith(t, workerTable, "[checks]\nrun = [\"two-leaders\"]\n"+`
[[faults]]
kind = "pause"
target = "n2"
at = "200ms"
for = "300ms"
`)
	iso, err := chooseIsolation(sc.Server)
	if err != nil {
		t.Skipf("no isolation that holds a setsid worker here: %v", err)
	}
	t.Logf("isolation %s (%s), uid %d", iso.kind, iso.why, os.Geteuid())

	h := newTestHost(t, sc)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	beats := filepath.Join(h.node.Dir, "beats")
	waitBeats(t, beats, 3)
	workers := eldest(processesNaming(beats))
	if len(workers) != 1 {
		t.Fatalf("%d workers run (%v), want 1", len(workers), workers)
	}
	worker := workers[0]
	if pg, own := statField(worker, 2), statField(h.running()[0].Pid(), 2); pg == own || pg != statField(worker, 3) {
		t.Fatalf("the worker's group is %d (session %d), the server's %d: it did not leave the host's group", pg, statField(worker, 3), own)
	}
	if held := h.Pids(); !containsPid(held, worker) {
		t.Errorf("the host's processes %v leave out its worker %d", held, worker)
	}

	if err := h.Pause(func() {}); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	time.Sleep(2 * time.Second)
	resuming := time.Now()
	if err := h.Resume(func() {}); err != nil {
		t.Fatal(err)
	}
	n := len(readBeats(t, beats))
	waitBeats(t, beats, n+3)
	got := readBeats(t, beats)
	for _, b := range got {
		if b.After(paused) && b.Before(resuming) {
			t.Errorf("the worker wrote at %s, %s into the host's 2s pause", b.Format(time.StampMilli), b.Sub(paused))
		}
	}
	if gap := longestGap(got); gap < 1900*time.Millisecond {
		t.Errorf("the worker's longest gap between beats is %s, want the 2s pause", gap)
	} else {
		t.Logf("the worker's longest gap between beats: %s", gap)
	}

	h.Stop() // a crash: every process of the host at once
	waitGone(t, worker)

	// A whole run: no process of any host is left after it.
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %+v", err, res)
	}
	if res.Isolation != iso.kind {
		t.Errorf("results.json says isolation %q, want %q", res.Isolation, iso.kind)
	}
	hist, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if hist.Meta.Isolation != iso.kind {
		t.Errorf("the history's meta says isolation %q, want %q", hist.Meta.Isolation, iso.kind)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if left := processesNaming(filepath.Join(dir, n, "beats")); len(left) > 0 {
			t.Errorf("%s's worker %v still runs after the run", n, left)
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	for _, pid := range pids(t, dir) {
		if syscall.Kill(pid, 0) == nil && !zombie(pid) {
			t.Errorf("pid %d still runs after the run", pid)
		}
	}
	if iso.kind == isolationCgroup {
		if left, _ := filepath.Glob(filepath.Join(iso.cgroups, "coup-"+strconv.Itoa(os.Getpid())+"-*")); len(left) > 0 {
			t.Errorf("cgroups left after the run: %v", left)
		}
	}
}

// The same, as a user who is not root: this test binary again, as
// nobody, in a folder nobody may write (and there, user is refused). It runs where coup runs as root
// and setpriv is installed, and is skipped, with the reason, where
// nobody's run skips.
func TestHostHoldsASetsidWorkerAsAUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs as root, to run the test again as nobody; this user's own run is TestHostHoldsASetsidWorker")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	dir, err := os.MkdirTemp("", "coup-as-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "servers.test")
	if err := copyFile(exe, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups",
		bin, "-test.run", "^(TestHostHoldsASetsidWorker|TestUserRefusedWithoutRoot)$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "HOME="+dir)
	out, err := cmd.CombinedOutput()
	text := string(out)
	switch {
	case err != nil:
		t.Fatalf("as nobody: %v\n%s", err, text)
	case strings.Contains(text, "--- SKIP"):
		t.Skipf("as nobody, skipped:\n%s", text)
	case !strings.Contains(text, "--- PASS: TestHostHoldsASetsidWorker") || !strings.Contains(text, "isolation "+isolationNamespace):
		t.Fatalf("as nobody, want a pass in a namespace:\n%s", text)
	case !strings.Contains(text, "--- PASS: TestUserRefusedWithoutRoot"):
		t.Fatalf("as nobody, want user refused:\n%s", text)
	}
	t.Logf("as nobody:\n%s", text)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// readBeats reads a beats file: one time in nanoseconds a line.
func readBeats(t *testing.T, path string) []time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []time.Time
	for _, line := range strings.Fields(string(b)) {
		ns, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			continue // a line being written
		}
		out = append(out, time.Unix(0, ns))
	}
	return out
}

// waitBeats waits until the beats file has n beats, for up to 30s.
func waitBeats(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(readBeats(t, path)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d beats after 30s, want %d", path, len(readBeats(t, path)), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func longestGap(beats []time.Time) time.Duration {
	var most time.Duration
	for i := 1; i < len(beats); i++ {
		most = max(most, beats[i].Sub(beats[i-1]))
	}
	return most
}

// processesNaming lists the processes whose command line holds s.
func processesNaming(s string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) && !zombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// eldest leaves out of pids those whose parent is among them: the
// worker's shell forks for each beat, and a child caught between its
// fork and its exec still has the worker's command line (seen on two
// busy cores).
func eldest(pids []int) []int {
	var out []int
	for _, p := range pids {
		if !containsPid(pids, statField(p, 1)) {
			out = append(out, p)
		}
	}
	return out
}

// statField is a number of /proc/PID/stat after the command name: 1 the
// parent, 2 the process group, 3 the session (0 when it cannot be read).
func statField(pid, i int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	at := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[at+1:]))
	if i >= len(f) {
		return 0
	}
	n, _ := strconv.Atoi(f[i])
	return n
}

func containsPid(list []int, pid int) bool {
	for _, p := range list {
		if p == pid {
			return true
		}
	}
	return false
}

// A host given a network namespace (localHost.netns) starts every
// process in it: the server and its sidecar. As root, with a namespace
// of the test's own, removed at the end.
func TestHostStartsInItsNetworkNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a network namespace (ip netns add) needs root here")
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("ip (iproute2) is not installed")
	}
	name := fmt.Sprintf("coup-test-%d", os.Getpid())
	if out, err := exec.Command(ip, "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add: %v: %s", err, out)
	}
	defer exec.Command(ip, "netns", "delete", name).Run()
	path := "/run/netns/" + name
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("net:[%d]", st.Ino)
	for _, kind := range []string{"cgroup", "group"} {
		t.Run(kind, func(t *testing.T) {
			// Inside the namespace only its own loopback exists, and it is
			// down: the server's port cannot be the probe.
			sc := peerScenarioWith(t, fmt.Sprintf(`isolation = %q
ready = { command = ["true"] }

[[server.sidecar]]
name = "side"
command = ["sleep", "3600"]
`, kind), "")
			h := newTestHost(t, sc)
			h.netns = path
			if err := h.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for _, p := range h.running() {
				for {
					got, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", p.Pid()))
					if err == nil && got == want {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("pid %d is in network namespace %s (%v), want the host's, %s", p.Pid(), got, err, want)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}
