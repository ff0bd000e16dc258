package servers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/scenario"
)

// localHost runs a node's processes on this machine, in one process
// group: the server leads it and each sidecar joins it, so that one
// signal (SIGKILL, SIGSTOP, SIGCONT) reaches every process of the host at
// once, as a machine's power switch or a container's freezer would, and
// what a process leaves in the group (a wrapper's children) goes with it.
// The server's end is the host's: when it exits, its group is killed,
// its sidecars with it. A sidecar that exits alone is said and logged,
// and the host runs on without it until its next start.
//
// Each process writes its own log (n1.log for the server, n1.NAME.log for
// a sidecar), read line by line through its own patterns.
type localHost struct {
	id   string
	node *scenario.ServerNode
	sv   *scenario.Server
	dir  string // the run's folder, where the logs go
	ev   hostEvents
	// launch starts one process of the host (proc.Start). Every process a
	// host runs starts here, and the run is told of each (ev.launched):
	// the one place where what must hold for each of them is added (a
	// clock fault in force, put into each process as it starts).
	launch func(proc.Spec) (*proc.Proc, error)

	mu     sync.Mutex
	procs  []*hostProcess // running, the server first; nil when down
	inc    int
	paused bool
	logs   map[string]*os.File // by file name, opened at the first start
	logMu  sync.Mutex          // one line at a time in each log
}

var _ Host = (*localHost)(nil)

// hostProcess is one running process of a host.
type hostProcess struct {
	name     string // "server", or the sidecar's name
	label    string // how messages name it: n1, or n1's sentinel
	p        *proc.Proc
	log      *os.File
	patterns []scenario.Pattern
	ready    string // where it accepts connections once up ("" for nowhere)
	// exited is closed once it has ended and its output has been read.
	exited chan struct{}
}

func newLocalHost(node *scenario.ServerNode, sv *scenario.Server, dir string, ev hostEvents) *localHost {
	return &localHost{id: node.ID, node: node, sv: sv, dir: dir, ev: ev, launch: proc.Start, logs: map[string]*os.File{}}
}

// processSpec is what starts one process of the host.
type processSpec struct {
	name, label, logName string
	argv                 []string
	patterns             []scenario.Pattern
	ready                string
}

// specs are the host's processes, the server first, as rendered.
func (h *localHost) specs(rd *scenario.Rendered) []processSpec {
	out := []processSpec{{name: "server", label: h.id, logName: h.id + ".log", argv: rd.Command,
		patterns: h.sv.Log, ready: h.node.Addr[h.sv.Ready]}}
	for k, sc := range rd.Sidecars {
		side := &h.sv.Sidecars[k]
		ps := processSpec{name: sc.Name, label: h.id + "'s " + sc.Name, logName: h.id + "." + sc.Name + ".log",
			argv: sc.Command, patterns: side.Log}
		if side.Ready != "" {
			ps.ready = h.node.Addr[side.Ready]
		}
		out = append(out, ps)
	}
	return out
}

// Start writes the node's files and starts its processes in order, each
// once the one before is ready (Host).
func (h *localHost) Start(ctx context.Context) error {
	rd, err := h.sv.Render(h.node)
	if err != nil {
		return fmt.Errorf("%s: %w", h.id, err)
	}
	if err := h.writeFiles(rd); err != nil {
		return fmt.Errorf("%s: %w", h.id, err)
	}
	var env []string
	for k, v := range rd.Env {
		env = append(env, k+"="+v)
	}
	h.mu.Lock()
	if len(h.procs) > 0 {
		h.mu.Unlock()
		return errUp
	}
	h.inc++
	inc := h.inc
	h.mu.Unlock()
	deadline := time.Now().Add(h.sv.StartTimeout.D)
	for i, ps := range h.specs(rd) {
		group := 0
		if i > 0 {
			group = h.group()
			if group == 0 {
				return fmt.Errorf("%s exited before its sidecar %s started (its log: %s.log)", h.id, ps.name, h.id)
			}
		}
		hp, err := h.startProcess(ps, env, group, inc)
		if err == nil {
			err = h.waitReady(ctx, hp, deadline)
		}
		if err != nil {
			h.Stop()
			return err
		}
	}
	return nil
}

// writeFiles makes the node's data folder and writes its files.
func (h *localHost) writeFiles(rd *scenario.Rendered) error {
	if err := os.MkdirAll(h.node.Data, 0o755); err != nil {
		return err
	}
	var paths []string
	if h.ev.written != nil {
		defer func() { h.ev.written(paths) }()
	}
	for name, text := range rd.Files {
		path := filepath.Join(h.node.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
		paths = append(paths, path)
	}
	return nil
}

// log is the log file of that name, opened at its first use and kept.
func (h *localHost) log(name string) (*os.File, error) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	if f, ok := h.logs[name]; ok {
		return f, nil
	}
	f, err := os.OpenFile(filepath.Join(h.dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	h.logs[name] = f
	return f, nil
}

// startProcess starts one process of the host, in group (0: a group of
// its own, which the host's later processes join), and reads its output.
func (h *localHost) startProcess(ps processSpec, env []string, group, inc int) (*hostProcess, error) {
	log, err := h.log(ps.logName)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ps.label, err)
	}
	// stderr goes through a pipe of our own, so that its lines, like
	// stdout's, are read through the patterns before they reach the log.
	er, ew, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ps.label, err)
	}
	p, err := h.launch(proc.Spec{Argv: ps.argv, Env: env, Log: ew, Dir: h.node.Dir, Group: group})
	ew.Close()
	if err != nil {
		er.Close()
		return nil, fmt.Errorf("%s: %w", ps.label, err)
	}
	p.Stdin.Close()
	hp := &hostProcess{name: ps.name, label: ps.label, p: p, log: log, patterns: ps.patterns, ready: ps.ready, exited: make(chan struct{})}
	h.mu.Lock()
	h.procs = append(h.procs, hp)
	h.mu.Unlock()
	h.logMu.Lock()
	fmt.Fprintf(log, "--- coup: incarnation %d, pid %d: %q\n", inc, p.Pid(), ps.argv)
	h.logMu.Unlock()
	h.ev.logf("%s: started incarnation %d, pid %d", ps.label, inc, p.Pid())
	if h.ev.launched != nil {
		h.ev.launched()
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go h.read(hp, p.Stdout, &readers)
	go h.read(hp, er, &readers)
	go func() {
		readers.Wait()
		state, _ := p.Wait()
		close(hp.exited)
		h.processExited(hp, inc, state)
	}()
	return hp, nil
}

// read copies one of a process's streams to its log, line by line, each
// through its patterns. A line longer than the reader's buffer is cut:
// its parts are matched apart.
func (h *localHost) read(hp *hostProcess, from io.ReadCloser, wg *sync.WaitGroup) {
	defer wg.Done()
	defer from.Close()
	sc := bufio.NewScanner(from)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for {
		if !sc.Scan() {
			if errors.Is(sc.Err(), bufio.ErrTooLong) {
				sc = bufio.NewScanner(from)
				sc.Buffer(make([]byte, 64<<10), 64<<10)
				continue
			}
			return
		}
		line := sc.Bytes()
		h.logMu.Lock()
		hp.log.Write(line)
		hp.log.Write([]byte{'\n'})
		h.logMu.Unlock()
		h.ev.line(hp.patterns, line)
	}
}

// waitReady waits until the process accepts connections on its ready
// address, it exits, the deadline passes or ctx ends.
func (h *localHost) waitReady(ctx context.Context, hp *hostProcess, deadline time.Time) error {
	if hp.ready == "" {
		return nil
	}
	for {
		c, err := net.DialTimeout("tcp", hp.ready, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-hp.exited:
			// Its output is all in its log by now: the cause is usually
			// at its end.
			return fmt.Errorf("%s exited before it accepted connections on %s%s", hp.label, hp.ready, console.LogTail(hp.log.Name()))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections on %s within %s%s", hp.label, hp.ready, h.sv.StartTimeout.D, console.LogTail(hp.log.Name()))
		}
	}
}

// processExited handles a process that ended, by coup's hand or its own.
func (h *localHost) processExited(hp *hostProcess, inc int, state *os.ProcessState) {
	h.mu.Lock()
	i := slices.Index(h.procs, hp)
	if i < 0 {
		h.mu.Unlock()
		return // ended by coup (Stop), which says why
	}
	detail := "unknown"
	if state != nil {
		detail = state.String()
	}
	if i > 0 {
		// A sidecar killed with the group of a server that exited: the
		// server, reaped before its group was killed, is gone, and its
		// own end says the host's.
		if err := syscall.Kill(h.procs[0].p.Pid(), 0); errors.Is(err, syscall.ESRCH) {
			h.mu.Unlock()
			return
		}
		h.procs = slices.Delete(h.procs, i, i+1)
		h.mu.Unlock()
		h.ev.progress("%s exited on its own: %s; the host runs on without it until its next start", hp.label, detail)
		return
	}
	if len(h.procs) > 1 {
		detail += "; its sidecars ended with it"
	}
	h.procs, h.paused = nil, false
	h.mu.Unlock()
	h.ev.exited(inc, detail)
}

// Stop kills the host's group, every process of it at once, and waits
// until each is gone and its output read (Host).
func (h *localHost) Stop() bool {
	h.mu.Lock()
	procs := h.procs
	h.procs, h.paused = nil, false
	h.mu.Unlock()
	if len(procs) == 0 {
		return false
	}
	_ = procs[0].p.Kill() // the group: the server and every sidecar
	for _, hp := range procs[1:] {
		_ = hp.p.Kill() // one that left the group (setsid) too
	}
	for _, hp := range procs {
		<-hp.exited // its ports are free once it is gone
	}
	return true
}

// Pause stops the host's group with SIGSTOP (Host).
func (h *localHost) Pause(mark func()) error { return h.setPaused(true, mark) }

// Resume continues the host's group with SIGCONT (Host).
func (h *localHost) Resume(mark func()) error { return h.setPaused(false, mark) }

func (h *localHost) setPaused(pause bool, mark func()) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case len(h.procs) == 0:
		return errDown
	case h.paused == pause && pause:
		return errPaused
	case h.paused == pause:
		return errActive
	}
	h.paused = pause
	mark()
	leader := h.procs[0].p
	if pause {
		return leader.Pause()
	}
	return leader.Resume()
}

// Exec runs a command in the node's folder, in a process group of its
// own, its output written to the server's log (Host).
func (h *localHost) Exec(ctx context.Context, argv []string) error {
	log, err := h.log(h.id + ".log")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = h.node.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	h.logMu.Lock()
	fmt.Fprintf(log, "--- coup: %q\n", argv)
	h.logMu.Unlock()
	out, err := cmd.CombinedOutput()
	h.logMu.Lock()
	log.Write(out)
	h.logMu.Unlock()
	return err
}

// Wipe removes the node's data folder (Host).
func (h *localHost) Wipe() error { return os.RemoveAll(h.node.Data) }

// Up reports whether the host's server runs (Host).
func (h *localHost) Up() bool { return h.group() != 0 }

// Incarnation counts the host's starts (Host).
func (h *localHost) Incarnation() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inc
}

// group is the host's process group (its server's pid), 0 when it is
// down: what attribution by process looks for.
func (h *localHost) group() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.procs) == 0 {
		return 0
	}
	return h.procs[0].p.Pid()
}
