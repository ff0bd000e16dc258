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
	"sync"
	"syscall"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/clockfault"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/scenario"
)

// server is one node: a real server process, its folder, its log.
type server struct {
	r    *run
	id   string
	data *scenario.ServerNode

	mu     sync.Mutex
	p      *proc.Proc
	inc    int
	paused bool
	// readers is done when the current process's output has all been
	// read (and its observations recorded).
	readers *sync.WaitGroup
	logFile *os.File
	// clock is the clock skew in force on its processes, kept across
	// incarnations.
	clock clockfault.Node
}

var (
	errDown   = errors.New("the server is down")
	errUp     = errors.New("the server is up")
	errPaused = errors.New("the server is already paused")
	errActive = errors.New("the server is not paused")
)

func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return 0
	}
	return s.p.Pid()
}

func (s *server) incarnation() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inc
}

// start writes the node's files, starts its process in a process group of
// its own, reads its output (to its log, through the log patterns), and
// waits until its ready port accepts a connection, its process exits, or
// the start timeout passes.
func (s *server) start(ctx context.Context, existing bool) error {
	if existing {
		s.data.State = "existing"
	}
	rd, err := s.r.sv.Render(s.data)
	if err != nil {
		return fmt.Errorf("%s: %w", s.id, err)
	}
	if err := os.MkdirAll(s.data.Data, 0o755); err != nil {
		return fmt.Errorf("%s: %w", s.id, err)
	}
	for name, text := range rd.Files {
		path := filepath.Join(s.data.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("%s: %w", s.id, err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return fmt.Errorf("%s: %w", s.id, err)
		}
	}
	if s.logFile == nil {
		f, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("%s: %w", s.id, err)
		}
		s.logFile = f
	}
	var env []string
	for k, v := range rd.Env {
		env = append(env, k+"="+v)
	}
	// stderr goes through a pipe of our own, so that its lines, like
	// stdout's, are read through the patterns before they reach the log.
	er, ew, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("%s: %w", s.id, err)
	}
	p, err := proc.Start(proc.Spec{Argv: rd.Command, Env: env, Log: ew, Dir: s.data.Dir})
	ew.Close()
	if err != nil {
		er.Close()
		return fmt.Errorf("%s: %w", s.id, err)
	}
	p.Stdin.Close()
	s.mu.Lock()
	s.p = p
	s.inc++
	inc := s.inc
	readers := &sync.WaitGroup{}
	s.readers = readers
	s.mu.Unlock()
	fmt.Fprintf(s.logFile, "--- coup: incarnation %d, pid %d: %q\n", inc, p.Pid(), rd.Command)
	s.r.logf("%s: started incarnation %d, pid %d", s.id, inc, p.Pid())
	s.clockStarted()
	exited := make(chan struct{})
	readers.Add(2)
	go s.read(p.Stdout, readers)
	go s.read(er, readers)
	go func() {
		readers.Wait()
		state, _ := p.Wait()
		close(exited)
		s.exited(p, inc, state)
	}()
	s.r.obs.started(s.id)
	err = s.ready(ctx, exited)
	if err == nil {
		s.clockStarted() // what a wrapper started meanwhile
	}
	return err
}

// logPath is the server's log, in the run's folder.
func (s *server) logPath() string { return filepath.Join(s.r.dir, s.id+".log") }

// read copies one of the process's streams to the node's log, line by
// line, each through the log patterns. A line longer than the reader's
// buffer is cut: its parts are matched apart.
func (s *server) read(from io.ReadCloser, wg *sync.WaitGroup) {
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
		s.mu.Lock()
		s.logFile.Write(line)
		s.logFile.Write([]byte{'\n'})
		s.mu.Unlock()
		s.r.obs.line(s.id, line)
	}
}

// ready waits until the node accepts connections on its ready port.
func (s *server) ready(ctx context.Context, exited <-chan struct{}) error {
	addr := s.data.Addr[s.r.sv.Ready]
	deadline := time.Now().Add(s.r.sv.StartTimeout.D)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			// Its output is all in its log by now: the cause is usually
			// at its end.
			return fmt.Errorf("%s exited before it accepted connections on %s%s", s.id, addr, console.LogTail(s.logPath()))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections on %s within %s%s", s.id, addr, s.r.sv.StartTimeout.D, console.LogTail(s.logPath()))
		}
	}
}

// exited records a process that ended on its own.
func (s *server) exited(p *proc.Proc, inc int, state *os.ProcessState) {
	s.mu.Lock()
	mine := s.p == p
	if mine {
		s.p = nil
		s.paused = false
	}
	s.mu.Unlock()
	if !mine {
		return // ended by coup, which records why
	}
	detail := "unknown"
	if state != nil {
		detail = state.String()
	}
	s.r.progress("%s exited on its own: %s", s.id, detail)
	s.r.observed(history.Event{Kind: history.KindProcess, Node: s.id, What: history.ProcExit, Incarnation: inc, Detail: detail})
}

// end kills the current process (SIGKILL, a paused one too), waits until
// it is gone and its output read, and records why it ended.
func (s *server) end(why string) bool {
	s.mu.Lock()
	p, inc, readers := s.p, s.inc, s.readers
	s.p = nil
	s.paused = false
	s.mu.Unlock()
	if p == nil {
		return false
	}
	s.r.obs.ended(s.id)
	_ = p.Kill()
	readers.Wait()
	_, _ = p.Wait() // the port is free once the process is gone
	s.r.Record(history.Event{Kind: history.KindProcess, Node: s.id, What: why, Incarnation: inc})
	return true
}

func (r *run) server(node string) (*server, error) {
	s, ok := r.byID[node]
	if !ok {
		return nil, fmt.Errorf("%w %q", errNoNode, node)
	}
	return s, nil
}

// Crash kills a server with SIGKILL and waits for it to be gone
// (nemesis.Cluster).
func (r *run) Crash(node string) error {
	s, err := r.server(node)
	if err != nil {
		return err
	}
	if !s.end(history.ProcCrash) {
		return errDown
	}
	return nil
}

// Restart starts a server that is down again, on the same data, and
// returns once it accepts connections (nemesis.Cluster).
func (r *run) Restart(node string) error {
	s, err := r.server(node)
	if err != nil {
		return err
	}
	if s.pid() != 0 {
		return errUp
	}
	return r.restart(s, false)
}

func (r *run) restart(s *server, existing bool) error {
	if err := s.start(r.ctx, existing); err != nil {
		r.progress("%s: %v", s.id, err)
		return err
	}
	r.Record(history.Event{Kind: history.KindProcess, Node: s.id, What: history.ProcStart, Incarnation: s.incarnation()})
	return nil
}

// Replace crashes a server, wipes its data, runs the scenario's replace
// command (etcd's preset removes the member and adds it again), and starts
// it again under the same id as a member joining a running cluster
// (nemesis.Replacer).
func (r *run) Replace(node string) error {
	s, err := r.server(node)
	if err != nil {
		return err
	}
	s.end(history.ProcCrash)
	if err := os.RemoveAll(s.data.Data); err != nil {
		return fmt.Errorf("wipe %s: %w", s.data.Data, err)
	}
	r.logf("%s: data wiped (%s)", s.id, s.data.Data)
	if len(r.sv.Replace) > 0 {
		if err := r.runReplace(s); err != nil {
			r.progress("%s: replace command: %v", s.id, err)
		}
	}
	return r.restart(s, true)
}

// runReplace runs the replace command, its output to the node's log.
func (r *run) runReplace(s *server) error {
	s.data.State = "existing"
	rd, err := r.sv.Render(s.data)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.sv.StartTimeout.D)
	defer cancel()
	cmd := exec.CommandContext(ctx, rd.Replace[0], rd.Replace[1:]...)
	cmd.Dir = s.data.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	s.mu.Lock()
	fmt.Fprintf(s.logFile, "--- coup: replace command\n")
	s.mu.Unlock()
	out, err := cmd.CombinedOutput()
	s.mu.Lock()
	s.logFile.Write(out)
	s.mu.Unlock()
	return err
}

// Pause stops a server's process group (SIGSTOP), or a client's when
// the clients run as processes (nemesis.Cluster).
func (r *run) Pause(node string) error { return r.setPaused(node, true) }

// Resume continues a paused server or client (SIGCONT) (nemesis.Cluster).
func (r *run) Resume(node string) error { return r.setPaused(node, false) }

// setPaused pauses or resumes a client's process or a server's, and
// records a server's.
func (r *run) setPaused(node string, pause bool) error {
	what, sig := history.ProcResume, "SIGCONT"
	if pause {
		what, sig = history.ProcPause, "SIGSTOP"
	}
	if a, ok := r.adapters.client(node); ok {
		r.logf("%s: client process: %s (%s)", node, what, sig)
		return a.setPaused(pause)
	}
	s, err := r.server(node)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.p == nil:
		return errDown
	case s.paused == pause && pause:
		return errPaused
	case s.paused == pause:
		return errActive
	}
	s.paused = pause
	r.rec.Record(history.Event{Kind: history.KindProcess, Node: node, What: what, Incarnation: s.inc})
	if pause {
		return s.p.Pause()
	}
	return s.p.Resume()
}

// ClockRate is refused: a real server's clock is its own
// (nemesis.Cluster; validation refuses clock faults for servers).
func (r *run) ClockRate(node string, rate float64) error {
	return errors.New("a real server's clock rate is not coup's to change")
}
