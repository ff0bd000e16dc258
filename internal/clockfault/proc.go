package clockfault

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// mem is a process's memory, through /proc/PID/mem, and where its vDSO
// is mapped. Writing there needs what ptrace's attach needs (the same
// user, a process that can be dumped, and Yama's leave), and the kernel
// lets the write through a read-only mapping (proc_mem.force_override
// other than "never"; "ptrace" needs an attached tracer, which coup is
// not).
type mem struct {
	pid  int
	f    *os.File
	base uint64 // the vDSO's start
	size int    // and length
}

func openMem(pid int) (*mem, error) {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrGone)
		}
		return nil, fmt.Errorf("process %d: coup may not write its memory (%v): %s", pid, unwrapErrno(err), permissionHint())
	}
	m := &mem{pid: pid, f: f}
	m.base, m.size, err = findVDSO(pid)
	if err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

func (m *mem) close() { m.f.Close() }

func (m *mem) read(addr uint64, n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := m.f.ReadAt(b, int64(addr)); err != nil {
		return nil, fmt.Errorf("process %d: read %#x: %w", m.pid, addr, goneOr(m.pid, err))
	}
	return b, nil
}

func (m *mem) write(addr uint64, b []byte) error {
	if _, err := m.f.WriteAt(b, int64(addr)); err != nil {
		return fmt.Errorf("process %d: write %#x: %w", m.pid, addr, goneOr(m.pid, err))
	}
	return nil
}

// ErrGone is a process that ended before coup was done with it.
var ErrGone = errors.New("the process has ended")

func goneOr(pid int, err error) error {
	if _, serr := os.Stat(fmt.Sprintf("/proc/%d", pid)); serr != nil {
		return ErrGone
	}
	return err
}

func unwrapErrno(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// findVDSO finds a process's [vdso] mapping.
func findVDSO(pid int) (uint64, int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("process %d: %w", pid, ErrGone)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasSuffix(line, "[vdso]") {
			continue
		}
		lo, hi, ok := parseRange(line)
		if !ok {
			break
		}
		return lo, int(hi - lo), nil
	}
	return 0, 0, fmt.Errorf("process %d has no vDSO: it reads its clock by system calls, which coup cannot reach", pid)
}

// parseRange reads the address range that begins a line of
// /proc/PID/maps.
func parseRange(line string) (lo, hi uint64, ok bool) {
	r, _, _ := strings.Cut(line, " ")
	a, b, found := strings.Cut(r, "-")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseUint(a, 16, 64)
	hi, err2 := strconv.ParseUint(b, 16, 64)
	return lo, hi, err1 == nil && err2 == nil && hi > lo
}

// Group lists the processes of a process group: the processes of a node
// that coup started in a group of its own, and whatever they started that
// stayed in it.
func Group(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.pgrp != pgid || st.state == 'Z' || st.state == 'X' {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// stat is what coup reads of /proc/PID/stat (or of a thread's).
type stat struct {
	state byte
	pgrp  int
}

func readStat(pid int) (stat, error) { return readStatFile(fmt.Sprintf("/proc/%d/stat", pid)) }

func readStatFile(path string) (stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return stat{}, err
	}
	// The command name is in parentheses and may hold anything.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return stat{}, fmt.Errorf("%s: no command name", path)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return stat{}, fmt.Errorf("%s: too short", path)
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return stat{}, fmt.Errorf("%s: process group %q", path, f[2])
	}
	return stat{state: f[0][0], pgrp: pgrp}, nil
}

// YamaScope reads Yama's ptrace_scope: -1 when Yama is not there.
func YamaScope() int {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// permissionHint says what decides whether coup may write a process's
// memory here.
func permissionHint() string {
	base := "coup may change the clocks only of processes of its own user that it started (or that they started), and not of setuid programs"
	switch YamaScope() {
	case -1, 0:
		return base
	case 1:
		return base + "; Yama's ptrace_scope is 1: only coup's own descendants"
	case 2:
		return "Yama's ptrace_scope is 2: only a process with CAP_SYS_PTRACE may write another's memory; run coup as root, or set kernel.yama.ptrace_scope to 1"
	}
	return "Yama's ptrace_scope is 3: no process may write another's memory, not even root's, until the next boot"
}

// signal sends a signal to one process.
func signal(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
