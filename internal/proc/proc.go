// Package proc starts and controls node processes: each in its own process
// group (or in the group of another, as the processes of one host share
// one), with stdin and stdout as pipes and stderr written straight to a
// log file.
//
// Every process the package starts is tracked until it has been waited for,
// so KillAll can end them all, whatever state they are in (a stopped
// process is killed too). Signals go to the whole process group, so a node
// started through a wrapper (sh -c "…") is paused, resumed and killed with
// everything the wrapper started, as long as none of it leaves the group
// (setsid, setpgid).
//
// The harness may itself be killed with SIGKILL, when it can clean up
// nothing. Then each node's own process dies with it (Linux's parent-death
// signal), and a reaper kills what is left of each node's group: a small
// shell, started with the first node, in its own group, that is told of
// every group that starts and ends and, when its input closes because the
// harness has gone, kills the groups still running, and the cgroups it
// was told of (a real server's hosts, as root).
//
// A real server's host may be held more firmly (the servers package
// chooses): in a cgroup (Spec.Cgroup), or in a PID namespace of its own
// (Namespace, namespace.go), whose first process is this program again
// (nsinit.go), which starts the host's processes, signals every process
// of the namespace at once, and whose end is theirs.
package proc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"
)

// Spec says how to start a process.
type Spec struct {
	// Argv is the program and its arguments.
	Argv []string
	// Env is added to the harness's environment.
	Env []string
	// Log receives the process's stderr.
	Log *os.File
	// Dir is the working directory ("" for the harness's).
	Dir string
	// Group, when not 0, is the process group the process joins (one led
	// by a running process this package started), instead of leading a
	// group of its own: the processes of one host share a group, so that
	// one signal reaches them all at once. Signals to a member reach it
	// alone; its group goes with its leader.
	Group int
	// Stdout, when set, receives the process's stdout in place of a pipe
	// of the package's (Proc.Stdout is then nil): for a caller that reads
	// the pipe itself, and may give up on it when a process it no longer
	// runs holds it open.
	Stdout *os.File
	// Cgroup, when set, is an open cgroup v2 folder that the process
	// starts in (clone's CLONE_INTO_CGROUP), before it runs anything of
	// its own: everything it forks is in the cgroup from the start.
	Cgroup *os.File
	// Credential, when set, is the user and groups the process runs as.
	Credential *syscall.Credential
}

// Proc is one running (or finished) process.
type Proc struct {
	cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	done   chan struct{}
	once   sync.Once
	err    error
	state  *os.ProcessState
	// member is set when the process joined another's group (Spec.Group).
	member bool
}

var (
	// live holds every process started and not yet waited for: a
	// concurrent map, with no lock that a thousand starts at once queue
	// for (under one, the queue's hand-offs from one to the next were a
	// second of a thousand nodes' start on a loaded machine).
	live sync.Map // *Proc → struct{}
	// starting is held shared by every Start from its fork to its process
	// being in live, and whole by KillAll, so that KillAll misses no
	// process started before it, while starts do not wait for each other:
	// a fork returns only once the child has exec'd, milliseconds on a
	// loaded machine, and a thousand starts in a row under one lock were
	// half of the start of a thousand nodes.
	starting sync.RWMutex
)

// Start starts a process.
func Start(s Spec) (*Proc, error) {
	if len(s.Argv) == 0 {
		return nil, fmt.Errorf("start: no program")
	}
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Dir = s.Dir
	cmd.Stderr = s.Log
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,            // Ctrl-C at a terminal reaches the harness only
		Pgid:       s.Group,         // 0: a group of its own
		Pdeathsig:  syscall.SIGKILL, // and the node dies if the harness does
		Credential: s.Credential,
	}
	if s.Cgroup != nil {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(s.Cgroup.Fd())
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Argv[0], err)
	}
	var stdout io.ReadCloser
	if s.Stdout != nil {
		cmd.Stdout = s.Stdout
	} else if stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Argv[0], err)
	}
	p := &Proc{cmd: cmd, Stdin: stdin, Stdout: stdout, done: make(chan struct{}), member: s.Group != 0}
	starting.RLock()
	defer starting.RUnlock()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Argv[0], err)
	}
	live.Store(p, struct{}{})
	if !p.member {
		reaper.watch(p.Pid()) // a member's group is its leader's, watched already
	}
	return p, nil
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Wait waits for the process to end, once its stdout has been read to the
// end, and returns how it ended. It may be called more than once.
func (p *Proc) Wait() (*os.ProcessState, error) {
	p.once.Do(func() {
		err := p.cmd.Wait()
		// What the process left in its group (a wrapper's children, the
		// members that joined it) goes with it.
		if !p.member {
			_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
			reaper.forget(p.Pid())
		}
		p.state, p.err = p.cmd.ProcessState, err
		live.Delete(p)
		close(p.done)
	})
	<-p.done
	return p.state, p.err
}

// Done is closed when Wait has returned.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Signal sends sig to the process's group, or, for a process that joined
// another's group (Spec.Group), to the process alone.
func (p *Proc) Signal(sig syscall.Signal) error {
	if p.member {
		return syscall.Kill(p.Pid(), sig)
	}
	return syscall.Kill(-p.Pid(), sig)
}

// Kill kills the process group with SIGKILL (a member alone).
func (p *Proc) Kill() error { return p.Signal(syscall.SIGKILL) }

// Pause stops the process group (SIGSTOP).
func (p *Proc) Pause() error { return p.Signal(syscall.SIGSTOP) }

// Resume continues the process group (SIGCONT).
func (p *Proc) Resume() error { return p.Signal(syscall.SIGCONT) }

// Stopped reports whether the process is stopped by a signal (SIGSTOP),
// as Linux's /proc says.
func (p *Proc) Stopped() bool {
	st, ok := pidState(p.Pid())
	return ok && (st == 'T' || st == 't')
}

// PidStopped reports whether a process runs no more: stopped by a
// signal, frozen with its cgroup, a zombie, or gone, as Linux's /proc
// says.
func PidStopped(pid int) bool {
	st, ok := pidState(pid)
	return !ok || st == 'T' || st == 't' || st == 'Z' || st == 'X' || cgroupFrozen(pid)
}

// pidState is a process's state letter in /proc/PID/stat.
func pidState(pid int) (byte, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The state follows the command name, which is in parentheses and may
	// hold anything.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0, false
	}
	return stat[i+2], true
}

// Unread returns how many bytes the process has written to its stdout that
// nobody has read yet.
func (p *Proc) Unread() (int, error) {
	sc, ok := p.Stdout.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return 0, fmt.Errorf("unread: stdout is not a file")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("unread: %w", err)
	}
	var n int32
	var errno syscall.Errno
	if err := raw.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}); err != nil {
		return 0, fmt.Errorf("unread: %w", err)
	}
	if errno != 0 {
		return 0, fmt.Errorf("unread: %w", errno)
	}
	return int(n), nil
}

// KillAll kills every process started by this package that has not been
// waited for yet. It is safe to call at any time, from a signal handler's
// goroutine too.
func KillAll() {
	starting.Lock()
	defer starting.Unlock()
	live.Range(func(p, _ any) bool {
		_ = p.(*Proc).Kill()
		return true
	})
}
