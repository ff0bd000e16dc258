package proc

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The init of a host's PID namespace (namespace.go) is this program
// again, started with initEnv set: a test binary, or coup, runs it from
// this package's init function, before its own main, and never returns.
// Its first thread enters the host's network namespace when it is told
// of one (netnsEnv) and starts every process of the host from that
// thread, so that each starts inside it.
const (
	initEnv  = "COUP_HOST_INIT"
	netnsEnv = "COUP_HOST_NETNS"
)

func init() {
	if os.Getenv(initEnv) != "1" {
		return
	}
	runtime.LockOSThread() // the main thread, whose namespaces the processes get
	os.Exit(runInit())
}

// initMsg is a message between coup and a namespace's init, one per
// packet of their socket. From coup: start (with the process's stdout
// and stderr as rights), freeze, thaw, kill. From the init: started (the
// process's pid in the namespace) or failed, exited, and frozen or
// thawed once done.
type initMsg struct {
	Op     string   `json:"op"`
	ID     int      `json:"id,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	Env    []string `json:"env,omitempty"`
	Dir    string   `json:"dir,omitempty"`
	Uid    *uint32  `json:"uid,omitempty"`
	Gid    uint32   `json:"gid,omitempty"`
	Pid    int      `json:"pid,omitempty"`
	Pgid   int      `json:"pgid,omitempty"`
	Detail string   `json:"detail,omitempty"`
}

// runInit is the namespace's first process: it starts the host's
// processes when told, reaps every process of the namespace (each
// orphan is its child), signals them all at once (kill(-1, …) reaches
// every process of the namespace but itself), and ends them all when
// told to, or when coup is gone (its socket closes). Its own end ends
// the namespace: the kernel kills every process left in it.
func runInit() int {
	if path := os.Getenv(netnsEnv); path != "" {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
			unix.Close(fd)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup host init: enter the network namespace %s: %v\n", path, err)
			return 1
		}
	}
	f := os.NewFile(3, "control")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup host init: %v\n", err)
		return 1
	}
	conn := c.(*net.UnixConn)
	chld := make(chan os.Signal, 64)
	signal.Notify(chld, syscall.SIGCHLD)
	type in struct {
		m   initMsg
		fds []int
	}
	msgs := make(chan in)
	go func() {
		defer close(msgs)
		buf, oob := make([]byte, 1<<20), make([]byte, unix.CmsgSpace(2*4))
		for {
			n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
			if err != nil || n == 0 {
				return
			}
			var m in
			if json.Unmarshal(buf[:n], &m.m) != nil {
				continue
			}
			if cms, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
				for _, cm := range cms {
					if fds, err := unix.ParseUnixRights(&cm); err == nil {
						m.fds = append(m.fds, fds...)
					}
				}
			}
			msgs <- m
		}
	}()
	send := func(m initMsg) {
		b, _ := json.Marshal(m)
		_, _ = conn.Write(b)
	}
	members := map[int]int{} // namespace pid → coup's id of the process
	reap := func() {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if pid <= 0 || err != nil {
				return
			}
			if id, ok := members[pid]; ok {
				delete(members, pid)
				send(initMsg{Op: "exited", ID: id, Detail: waitDetail(ws)})
			}
		}
	}
	for {
		select {
		case <-chld:
			reap()
		case m, ok := <-msgs:
			if !ok || m.m.Op == "kill" {
				_ = unix.Kill(-1, unix.SIGKILL)
				return 0
			}
			switch m.m.Op {
			case "start":
				pid, err := initStart(m.m, m.fds)
				for _, fd := range m.fds {
					unix.Close(fd)
				}
				if err != nil {
					send(initMsg{Op: "failed", ID: m.m.ID, Detail: err.Error()})
					continue
				}
				members[pid] = m.m.ID
				send(initMsg{Op: "started", ID: m.m.ID, Pid: pid})
				reap() // one that ended at once
			case "freeze":
				_ = unix.Kill(-1, unix.SIGSTOP)
				send(initMsg{Op: "frozen"})
			case "thaw":
				_ = unix.Kill(-1, unix.SIGCONT)
				send(initMsg{Op: "thawed"})
			}
		}
	}
}

// initStart starts one process of the host, from the init's first
// thread: stdin /dev/null, stdout and stderr the two files coup sent.
func initStart(m initMsg, fds []int) (int, error) {
	if len(m.Argv) == 0 || len(fds) != 2 {
		return 0, fmt.Errorf("a start needs a program and two files")
	}
	path := m.Argv[0]
	if lp, err := lookPath(path, m.Env); err == nil {
		path = lp
	} else {
		return 0, err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	sys := &syscall.SysProcAttr{Setpgid: true, Pgid: m.Pgid}
	if m.Uid != nil {
		sys.Credential = &syscall.Credential{Uid: *m.Uid, Gid: m.Gid}
	}
	return syscall.ForkExec(path, m.Argv, &syscall.ProcAttr{Dir: m.Dir, Env: m.Env,
		Files: []uintptr{null.Fd(), uintptr(fds[0]), uintptr(fds[1])}, Sys: sys})
}

// lookPath finds a program on the PATH of the environment it runs with.
func lookPath(name string, env []string) (string, error) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			os.Setenv("PATH", v)
			break
		}
	}
	return exec.LookPath(name)
}

// waitDetail says how a process ended, as os.ProcessState does.
func waitDetail(ws unix.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exit status %d", ws.ExitStatus())
	case ws.Signaled():
		return "signal: " + ws.Signal().String()
	}
	return fmt.Sprintf("wait status %d", ws)
}
