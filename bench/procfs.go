package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// peakRSS is a process's peak resident set size in bytes (VmHWM in
// /proc/<pid>/status), while it runs.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("/proc/%d/status: VmHWM: unexpected %q", pid, rest)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/status: VmHWM: %w", pid, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM (the process has ended)", pid)
}

// children lists the child processes of pid, whichever of its threads
// started them.
func children(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// procID tells one process from a later one that reuses its pid: the pid
// and its start time, in clock ticks since boot.
type procID struct {
	pid   int
	start uint64
}

// identify reads pid's start time.
func identify(pid int) (procID, bool) {
	_, start, ok := procState(pid)
	return procID{pid, start}, ok
}

// alive reports whether the process still exists and has not ended (a
// zombie has ended: it only waits to be reaped).
func (p procID) alive() bool {
	state, start, ok := procState(p.pid)
	return ok && start == p.start && state != 'Z' && state != 'X'
}

// procState reads a process's state letter and start time from
// /proc/<pid>/stat.
func procState(pid int) (byte, uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	// The command name, in parentheses, may hold anything; the fields
	// after it start with the state, and the start time is the 20th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, 0, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil || len(f[0]) == 0 {
		return 0, 0, false
	}
	return f[0][0], start, true
}

// environHas reports whether the process's environment holds a variable
// named key (the harness marks each node it starts with COUP_NODE).
func environHas(pid int, key string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	for v := range bytes.SplitSeq(b, []byte{0}) {
		if bytes.HasPrefix(v, []byte(key+"=")) {
			return true
		}
	}
	return false
}

// argvHas reports whether the process's command line holds arg.
func argvHas(pid int, arg string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	for a := range bytes.SplitSeq(b, []byte{0}) {
		if string(a) == arg {
			return true
		}
	}
	return false
}
