package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/internal/clockfault"
)

// A clock fault on real processes, interrupted while it holds: etcd (Go),
// ZooKeeper (the JVM), Redis with Sentinel (C, two processes a host) and
// a node program of the user's own (on the pipe driver). While the fault holds, every process of the target reads its
// clock through coup's hook and sees the jump, none is traced or left
// stopped; once coup is interrupted (SIGINT or SIGTERM) nothing is left.
func TestClockFaultInterrupted(t *testing.T) {
	if err := clockfault.Check(); err != nil {
		t.Skipf("clock faults cannot reach processes here: %v", err)
	}
	fault := "[[faults]]\nkind = \"clock\"\ntarget = \"all\"\noffset = \"30s\"\n"
	cases := []struct {
		name, preset string
		sig          syscall.Signal
		procs        int // tagged processes of the nodes
	}{
		{"etcd/SIGINT", "etcd", syscall.SIGINT, 3},
		{"etcd/SIGTERM", "etcd", syscall.SIGTERM, 3},
		{"zookeeper/SIGINT", "zookeeper", syscall.SIGINT, 3},
		// A host's sidecars too: a redis-server and a Sentinel on each.
		{"redis-sentinel/SIGINT", "redis-sentinel", syscall.SIGINT, 6},
		{"own-node/SIGINT", "", syscall.SIGINT, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var file string
			if c.preset != "" {
				needs(t, c.preset)
				file = serverScenario(t, c.preset, "")
				os.WriteFile(file, []byte(strings.Replace(readFile(t, file), `duration = "1s"`, `duration = "60s"`, 1)+fault), 0o644)
			} else {
				file = filepath.Join(t.TempDir(), "own.toml")
				os.WriteFile(file, []byte(fmt.Sprintf("command = [%q, \"node\", \"--algo\", \"bully\"]\nnodes = 3\nduration = \"60s\"\n[workload]\nkind = \"none\"\n%s", coupBin, fault)), 0o644)
			}
			tag := tagged(t)
			cmd, out := startUp(t, tag, "run", "--store", t.TempDir(), file)
			defer cmd.Process.Kill()
			// The fault begins at the run's zero; once its processes
			// have read their clocks through the hook, each is checked.
			deadline := time.Now().Add(60 * time.Second) // a loaded machine's JVMs are slow to read a clock
			var nodes []int
			for {
				nodes = nodeProcs(tag)
				if len(nodes) >= c.procs && allSkewed(nodes, 30*time.Second) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the nodes' processes %v never all read a clock 30s ahead:\n%s", nodes, out.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			for _, pid := range nodes {
				r, _ := clockfault.Read(pid)
				t.Logf("pid %d (%s): realtime %+v, monotonic %+v", pid, procStatus(pid)["Name"], r.Realtime, r.Monotonic)
				st := procStatus(pid)
				if st["TracerPid"] != "0" || strings.HasPrefix(st["State"], "T") {
					t.Errorf("pid %d while the fault holds: TracerPid %s, State %s: want untraced and running", pid, st["TracerPid"], st["State"])
				}
			}
			cmd.Process.Signal(c.sig)
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
				t.Errorf("exit %v, want 3\n%s", err, out.String())
			}
			checkNoSurvivors(t, tag)
		})
	}
}

// nodeProcs lists the tagged processes that are nodes: neither coup nor
// its reaper (a shell).
func nodeProcs(tag string) []int {
	var out []int
	for _, pid := range survivors(tag) {
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.HasSuffix(exe, "/sh") || strings.HasSuffix(exe, "/dash") || bytes.Contains(cmdline, []byte("\x00run\x00")) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// allSkewed reports whether every process has read a clock through the
// hook that saw it about skew ahead.
func allSkewed(pids []int, skew time.Duration) bool {
	for _, pid := range pids {
		r, err := clockfault.Read(pid)
		if err != nil || !r.Patched || !r.Counted {
			return false
		}
		ok := false
		for _, c := range []clockfault.Reads{r.Realtime, r.Monotonic} {
			if c.Count > 0 && time.Duration(c.Skew) >= skew-time.Second && time.Duration(c.Skew) <= skew+time.Second {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// procStatus reads /proc/PID/status.
func procStatus(pid int) map[string]string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// A clock fault that cannot reach the nodes refuses the run before any
// node starts: exit 2, with the reason, and nothing left running.
func TestClockFaultRefusedBeforeStart(t *testing.T) {
	if err := clockfault.Check(); err != nil {
		t.Skipf("clock faults cannot reach processes here: %v", err)
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "raw.c")
	os.WriteFile(src, []byte("void _start(void) { __asm__ volatile (\"syscall\" : : \"a\"(60), \"D\"(0)); }\n"), 0o644)
	bin := filepath.Join(dir, "rawnode")
	if out, err := exec.Command(cc, "-static", "-nostdlib", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("cc -static: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "raw.toml")
	os.WriteFile(file, []byte(fmt.Sprintf("command = [%q]\nnodes = 2\nduration = \"1s\"\n[workload]\nkind = \"none\"\n[[faults]]\nkind = \"clock\"\ntarget = \"n1\"\nrate = 2\n", bin)), 0o644)
	tag := tagged(t)
	cmd := exec.Command(coupBin, "run", "--store", t.TempDir(), file)
	cmd.Env = append(os.Environ(), tag)
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "static program") {
		t.Errorf("exit %d, want 2 with the reason the clock fault cannot reach the node:\n%s", code, out)
	}
	checkNoSurvivors(t, tag)
}
