package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Namespace is a PID namespace of its own (inside a user namespace of
// its own, so that a user who is not root may make one), whose first
// process is coup's init (nsinit.go): every process started in it, and
// everything those fork, setsid and double-fork included, is a process
// of the namespace, which one signal from the init reaches at once
// (kill(-1, …)), and which ends with the init, whose death the kernel
// makes theirs. The init dies with coup (the parent-death signal), so a
// killed coup leaves nothing behind.
type Namespace struct {
	cmd  *exec.Cmd
	conn *net.UnixConn
	mu   sync.Mutex
	// started, exited and acks wait for the init's answers.
	started map[int]chan initMsg
	members map[int]*Member
	acks    chan string
	next    int
	// leader is the first process's pid in the namespace, whose process
	// group every later one joins (as a host's processes share one).
	leader int
	done   chan struct{} // closed once the init has ended
}

// Member is a process of a Namespace.
type Member struct {
	ns     *Namespace
	id     int
	pid    int // on this machine (coup's PID namespace)
	nspid  int // in its own
	detail string
	exited chan struct{}
}

// NamespaceSpec says how to make a namespace.
type NamespaceSpec struct {
	// NetNS, when set, is the path of a network namespace (/run/netns/…)
	// that every process of the namespace starts in: the init enters it
	// first.
	NetNS string
	// NewNet gives the namespace a network namespace of its own, made
	// with it and owned by its user namespace (only a loopback, down),
	// instead: NetNSPath names it, for whoever lays the hosts' network
	// out (nsenter -t PID --user --net --preserve-credentials, as the
	// user coup runs as). An existing network namespace can be entered
	// (NetNS) only by an init that holds CAP_SYS_ADMIN over the user
	// namespace that owns it, which a user namespace of the init's own
	// does not give: root's namespaces, or another user namespace's,
	// cannot be entered so.
	NewNet bool
	// Log receives what the init itself says (why it could not start).
	Log *os.File
}

// Namespaces reports whether this machine lets coup make a PID
// namespace in a user namespace of its own, and if not, why.
func Namespaces() error {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = namespaceAttr()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("a user and PID namespace cannot be made here: %w", err)
	}
	return nil
}

func namespaceAttr() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		Setpgid:     true,
		Pdeathsig:   syscall.SIGKILL,
	}
}

// StartNamespace makes a namespace, its init running.
func StartNamespace(s NamespaceSpec) (*Namespace, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("namespace: %w", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("namespace: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "control"), os.NewFile(uintptr(fds[1]), "control")
	defer theirs.Close()
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, fmt.Errorf("namespace: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), initEnv+"=1", netnsEnv+"="+s.NetNS)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stdout, cmd.Stderr = s.Log, s.Log
	cmd.SysProcAttr = namespaceAttr()
	if s.NewNet {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
	}
	if err := cmd.Start(); err != nil {
		c.Close()
		return nil, fmt.Errorf("namespace: start its init: %w", err)
	}
	ns := &Namespace{cmd: cmd, conn: c.(*net.UnixConn), started: map[int]chan initMsg{}, members: map[int]*Member{},
		acks: make(chan string, 1), done: make(chan struct{})}
	go ns.listen()
	return ns, nil
}

// listen reads the init's messages until it ends.
func (ns *Namespace) listen() {
	buf := make([]byte, 64<<10)
	for {
		n, err := ns.conn.Read(buf)
		if err != nil || n == 0 {
			break
		}
		var m initMsg
		if json.Unmarshal(buf[:n], &m) != nil {
			continue
		}
		ns.mu.Lock()
		switch m.Op {
		case "started", "failed":
			if ch, ok := ns.started[m.ID]; ok {
				delete(ns.started, m.ID)
				ch <- m
			}
		case "exited":
			if mb, ok := ns.members[m.ID]; ok {
				delete(ns.members, m.ID)
				mb.detail = m.Detail
				close(mb.exited)
			}
		case "frozen", "thawed":
			select {
			case ns.acks <- m.Op:
			default:
			}
		}
		ns.mu.Unlock()
	}
	_ = ns.cmd.Wait()
	ns.mu.Lock()
	for id, mb := range ns.members {
		delete(ns.members, id)
		mb.detail = "signal: killed (its namespace ended)"
		close(mb.exited)
	}
	for id, ch := range ns.started {
		delete(ns.started, id)
		ch <- initMsg{Op: "failed", Detail: "the namespace's init ended"}
	}
	ns.mu.Unlock()
	ns.conn.Close()
	close(ns.done)
}

// Start starts a process in the namespace: Argv, Env (added to coup's
// environment), Dir, Log (its stderr), Stdout (required) and Credential
// of s are used.
func (ns *Namespace) Start(s Spec) (*Member, error) {
	if len(s.Argv) == 0 {
		return nil, fmt.Errorf("start: no program")
	}
	if s.Stdout == nil || s.Log == nil {
		return nil, fmt.Errorf("start %s: a namespace's process needs its stdout and its log", s.Argv[0])
	}
	m := initMsg{Op: "start", Argv: s.Argv, Env: append(os.Environ(), s.Env...), Dir: s.Dir}
	if s.Credential != nil {
		m.Uid, m.Gid = &s.Credential.Uid, s.Credential.Gid
	}
	reply := make(chan initMsg, 1)
	mb := &Member{ns: ns, exited: make(chan struct{})}
	ns.mu.Lock()
	ns.next++
	m.ID, mb.id, m.Pgid = ns.next, ns.next, ns.leader
	ns.started[m.ID] = reply
	ns.members[m.ID] = mb
	ns.mu.Unlock()
	b, _ := json.Marshal(m)
	if _, _, err := ns.conn.WriteMsgUnix(b, unix.UnixRights(int(s.Stdout.Fd()), int(s.Log.Fd())), nil); err != nil {
		ns.forget(m.ID)
		return nil, fmt.Errorf("start %s: tell the namespace's init: %w", s.Argv[0], err)
	}
	var got initMsg
	select {
	case got = <-reply:
	case <-time.After(10 * time.Second):
		ns.forget(m.ID)
		return nil, fmt.Errorf("start %s: the namespace's init did not answer within 10s", s.Argv[0])
	}
	if got.Op != "started" {
		ns.forget(m.ID)
		return nil, fmt.Errorf("start %s: %s", s.Argv[0], got.Detail)
	}
	mb.nspid = got.Pid
	mb.pid = ns.outerPid(got.Pid)
	ns.mu.Lock()
	if ns.leader == 0 {
		ns.leader = got.Pid
	}
	ns.mu.Unlock()
	return mb, nil
}

func (ns *Namespace) forget(id int) {
	ns.mu.Lock()
	delete(ns.started, id)
	delete(ns.members, id)
	ns.mu.Unlock()
}

// outerPid is the pid on this machine of the namespace's process nspid
// (0 when it is gone already).
func (ns *Namespace) outerPid(nspid int) int {
	for _, pid := range ns.Pids() {
		if inner(pid) == nspid {
			return pid
		}
	}
	return 0
}

// inner is a process's pid in its own namespace: the last of its NSpid.
func inner(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}

// Pids lists every process of the namespace but its init, as pids on
// this machine: the init's descendants (every process of a PID
// namespace descends from its first; an orphan becomes its child), read
// from each task's children in /proc.
func (ns *Namespace) Pids() []int {
	var out []int
	seen := map[int]bool{}
	var walk func(pid int)
	walk = func(pid int) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				c, err := strconv.Atoi(f)
				if err != nil || seen[c] {
					continue
				}
				seen[c] = true
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(ns.cmd.Process.Pid)
	return out
}

// Freeze stops every process of the namespace at once (SIGSTOP from its
// init), and Thaw continues them all (SIGCONT); each returns once the
// init has sent the signal.
func (ns *Namespace) Freeze() error { return ns.ask("freeze", "frozen") }
func (ns *Namespace) Thaw() error   { return ns.ask("thaw", "thawed") }

func (ns *Namespace) ask(op, ack string) error {
	b, _ := json.Marshal(initMsg{Op: op})
	if _, err := ns.conn.Write(b); err != nil {
		return fmt.Errorf("%s: tell the namespace's init: %w", op, err)
	}
	select {
	case got := <-ns.acks:
		if got != ack {
			return fmt.Errorf("%s: the namespace's init answered %s", op, got)
		}
		return nil
	case <-ns.done:
		return errors.New(op + ": the namespace has ended")
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s: the namespace's init did not answer within 10s", op)
	}
}

// Kill ends every process of the namespace at once: the init kills them
// all and exits (and were it stuck, its own SIGKILL ends the namespace
// the same way). It returns once the init is gone.
func (ns *Namespace) Kill() {
	b, _ := json.Marshal(initMsg{Op: "kill"})
	_, _ = ns.conn.Write(b)
	select {
	case <-ns.done:
		return
	case <-time.After(2 * time.Second):
	}
	_ = ns.cmd.Process.Kill()
	<-ns.done
}

// NetNSPath is the path of the network namespace the namespace's
// processes start in, while its init runs.
func (ns *Namespace) NetNSPath() string { return fmt.Sprintf("/proc/%d/ns/net", ns.cmd.Process.Pid) }

// Done is closed once the namespace has ended.
func (ns *Namespace) Done() <-chan struct{} { return ns.done }

// Pid is the member's pid on this machine (0 when it ended before coup
// could read it).
func (m *Member) Pid() int { return m.pid }

// Wait waits until the member has ended and says how.
func (m *Member) Wait() string {
	<-m.exited
	return m.detail
}
