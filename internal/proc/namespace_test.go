package proc

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A namespace holds what its processes start, setsid included: its
// init's freeze stops them all, its thaw continues them all, its kill
// ends them all, and each member's end is told.
func TestNamespaceHoldsWhatItsProcessesStart(t *testing.T) {
	if err := Namespaces(); err != nil {
		t.Skip(err)
	}
	log, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	ns, err := StartNamespace(NamespaceSpec{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Kill()
	m, err := ns.Start(Spec{Argv: []string{"sh", "-c", "setsid sleep 61 & exec sleep 62"}, Stdout: log, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if m.Pid() == 0 {
		t.Fatal("the member has no pid on this machine")
	}
	var pids []int
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids = ns.Pids()
		if named(pids, "sleep\x0061") && named(pids, "sleep\x0062") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the namespace's processes %v: want both sleeps", pids)
		}
		time.Sleep(time.Millisecond)
	}
	if err := ns.Freeze(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitPid(t, pid, true)
	}
	if err := ns.Thaw(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitPid(t, pid, false)
	}
	ns.Kill()
	if got := m.Wait(); !strings.Contains(got, "killed") {
		t.Errorf("the member ended %q, want killed", got)
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			if st, ok := pidState(pid); ok && st != 'Z' {
				t.Errorf("pid %d still runs after the namespace's kill", pid)
			}
		}
	}
}

// named reports whether one of pids runs the command line cmd (its
// arguments joined by NULs).
func named(pids []int, cmd string) bool {
	for _, pid := range pids {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.TrimRight(string(b), "\x00") == cmd {
			return true
		}
	}
	return false
}

// waitPid polls until pid is stopped (or not), for up to 10 seconds.
func waitPid(t *testing.T, pid int, stopped bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for PidStopped(pid) != stopped {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: never stopped=%v", pid, stopped)
		}
		time.Sleep(time.Millisecond)
	}
}

// A namespace with a network of its own starts its processes in it.
func TestNamespaceWithANetworkOfItsOwn(t *testing.T) {
	if err := Namespaces(); err != nil {
		t.Skip(err)
	}
	log, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	ns, err := StartNamespace(NamespaceSpec{NewNet: true, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Kill()
	m, err := ns.Start(Spec{Argv: []string{"sleep", "60"}, Stdout: log, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	own, _ := os.Readlink("/proc/self/ns/net")
	theirs, err := os.Readlink(ns.NetNSPath())
	if err != nil || theirs == own {
		t.Fatalf("the namespace's network %q (%v), coup's %q: want one of its own", theirs, err, own)
	}
	if got, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", m.Pid())); got != theirs {
		t.Errorf("its process is in network %q, want the namespace's, %q", got, theirs)
	}
}
