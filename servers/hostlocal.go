package servers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/scenario"
)

// localHost runs a node's processes on this machine, held together in a
// box (isolation.go): a cgroup of the host's own as root, a PID
// namespace as a user who is not root, else one process group. One
// action (freeze, thaw, kill) reaches every process of the host at once,
// as a machine's power switch or a container's freezer would, and what a
// process starts goes with it. The server's end is the host's: when it
// exits, its box is killed, its sidecars with it. A sidecar that exits
// alone is said and logged, and the host runs on without it until its
// next start.
//
// Each process writes its own log (n1.log for the server, n1.NAME.log for
// a sidecar), read line by line through its own patterns, from pipes of
// the host's own: once a process has ended and its host is killed, coup
// reads what is left for pipeGrace at most, so that a pipe that a
// process outside the host holds open (a daemon that left a process
// group) never holds up the end of a run.
type localHost struct {
	id   string
	node *scenario.ServerNode
	sv   *scenario.Server
	dir  string // the run's folder, where the logs go
	ev   hostEvents
	iso  *isolation
	// netns is the path of a network namespace that every process of the
	// host starts in, entered by the box itself (nsenter, or the
	// namespace's init); "" for none. enter is the other way in, the one
	// coup's network uses: it runs f inside the host's network namespace
	// (hostnet.Host.Do), so that every box, process and command of the
	// host (start, Exec) is made from a thread inside it; dial is how the
	// host dials (its ready probes), from inside. On the proxy's network,
	// enter runs f as it is and dial is net.Dialer's.
	netns string
	enter func(f func() error) error
	dial  dialFunc

	mu     sync.Mutex
	box    box            // the host's, while it runs; nil when down
	procs  []*hostProcess // running, the server first; nil when down
	inc    int
	execs  int // counts the commands run on the host (Exec)
	paused bool
	logs   map[string]*os.File // by file name, opened at the first start
	lines  map[string]int      // each log's lines so far, by file name
	logMu  sync.Mutex          // one line at a time in each log
}

var _ Host = (*localHost)(nil)

// pipeGrace is how long the output of a host's process is still read
// once the host is killed: a pipe still open then is held by a process
// outside the host, and is closed.
const pipeGrace = 2 * time.Second

// hostProcess is one running process of a host.
type hostProcess struct {
	name     string // "server", or the sidecar's name
	label    string // how messages name it: n1, or n1's sentinel
	p        boxed
	log      *os.File
	patterns []scenario.Pattern
	ready    scenario.RenderedProbe
	// reads are the read ends of its stdout and stderr, closed to end
	// their readers (closeReads).
	reads     []*os.File
	readsDone chan struct{}
	// ready is closed once its probe has answered; exited once it has
	// ended and its output has been read.
	isReady, exited chan struct{}
}

// closeReads ends the reading of the process's output.
func (hp *hostProcess) closeReads() {
	for _, f := range hp.reads {
		_ = f.Close()
	}
}

func newLocalHost(node *scenario.ServerNode, sv *scenario.Server, dir string, iso *isolation, ev hostEvents) *localHost {
	var d net.Dialer
	return &localHost{id: node.ID, node: node, sv: sv, dir: dir, ev: ev, iso: iso, logs: map[string]*os.File{}, lines: map[string]int{},
		enter: func(f func() error) error { return f() }, dial: d.DialContext}
}

// processSpec is what starts one process of the host.
type processSpec struct {
	name, label, logName string
	argv                 []string
	patterns             []scenario.Pattern
	ready                scenario.RenderedProbe
	// after is the index of the process it starts after, once that one
	// is ready (-1 for none: the server).
	after int
}

// specs are the host's processes, the server first, as rendered.
func (h *localHost) specs(rd *scenario.Rendered) []processSpec {
	out := []processSpec{{name: "server", label: h.id, logName: h.id + ".log", argv: rd.Command,
		patterns: h.sv.Log, ready: rd.Ready, after: -1}}
	for k, sc := range rd.Sidecars {
		side := &h.sv.Sidecars[k]
		ps := processSpec{name: sc.Name, label: h.id + "'s " + sc.Name, logName: h.id + "." + sc.Name + ".log",
			argv: sc.Command, patterns: side.Log, ready: sc.Ready, after: k}
		for j, before := range out {
			if before.name == sc.After {
				ps.after = j
			}
		}
		out = append(out, ps)
	}
	return out
}

// Start writes the node's files and starts its processes in the order
// written, each once the one it starts after is ready, and returns once
// every one is (Host).
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
	serverLog, err := h.log(h.id + ".log")
	if err != nil {
		return fmt.Errorf("%s: %w", h.id, err)
	}
	h.mu.Lock()
	if len(h.procs) > 0 || h.box != nil {
		h.mu.Unlock()
		return errUp
	}
	h.inc++
	inc := h.inc
	var bx box
	err = h.enter(func() (err error) { // a namespace's init starts inside the host's network
		bx, err = h.iso.newBox(boxSpec{host: h.id, inc: inc, netns: h.netns, log: serverLog})
		return err
	})
	if err != nil {
		h.mu.Unlock()
		return fmt.Errorf("%s: %w", h.id, err)
	}
	h.box = bx
	h.mu.Unlock()
	if h.ev.starting != nil {
		h.ev.starting(inc)
	}
	deadline := time.Now().Add(h.sv.StartTimeout.D)
	var started []*hostProcess
	fail := func(err error) error {
		h.Stop()
		return err
	}
	for _, ps := range h.specs(rd) {
		if ps.after >= 0 {
			if err := h.waitReady(ctx, started[ps.after], env, deadline); err != nil {
				return fail(err)
			}
			if !h.Up() {
				return fail(fmt.Errorf("%s exited before its sidecar %s started (its log: %s.log)", h.id, ps.name, h.id))
			}
		}
		hp, err := h.startProcess(bx, ps, env, inc)
		if err != nil {
			return fail(err)
		}
		started = append(started, hp)
	}
	for _, hp := range started {
		if err := h.waitReady(ctx, hp, env, deadline); err != nil {
			return fail(err)
		}
	}
	return nil
}

// writeFiles makes the node's data folder and writes its files; when
// the hosts run as a user of their own, the node's folder is made
// theirs.
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
	if c := h.iso.cred; c != nil {
		if err := reachable(h.node.Dir, c); err != nil {
			return fmt.Errorf("user = %q cannot reach the node's folder: %w", h.sv.User, err)
		}
		return filepath.WalkDir(h.node.Dir, func(path string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(path, int(c.Uid), int(c.Gid))
		})
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

// startProcess starts one process of the host in its box, and reads its
// output.
func (h *localHost) startProcess(bx box, ps processSpec, env []string, inc int) (*hostProcess, error) {
	log, err := h.log(ps.logName)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ps.label, err)
	}
	// stdout and stderr go through pipes of the host's own, so that
	// their lines are read through the patterns before they reach the
	// log, and so that the host can give up on them (closeReads).
	or, ow, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ps.label, err)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		or.Close()
		ow.Close()
		return nil, fmt.Errorf("%s: %w", ps.label, err)
	}
	var p boxed
	err = h.enter(func() (err error) { // in the host's network namespace
		p, err = bx.launch(launchSpec{argv: ps.argv, env: env, dir: h.node.Dir, stdout: ow, stderr: ew, leader: ps.after < 0})
		return err
	})
	ow.Close()
	ew.Close()
	if err != nil {
		or.Close()
		er.Close()
		return nil, fmt.Errorf("%s: %w", ps.label, err)
	}
	hp := &hostProcess{name: ps.name, label: ps.label, p: p, log: log, patterns: ps.patterns, ready: ps.ready,
		reads: []*os.File{or, er}, readsDone: make(chan struct{}), isReady: make(chan struct{}), exited: make(chan struct{})}
	h.mu.Lock()
	if h.box != bx {
		// The host ended (its server exited) while this one started.
		h.mu.Unlock()
		bx.kill()
		or.Close()
		er.Close()
		p.Wait()
		return nil, fmt.Errorf("%s: its host ended as it started", ps.label)
	}
	h.procs = append(h.procs, hp)
	h.mu.Unlock()
	h.logMu.Lock()
	fmt.Fprintf(log, "--- coup: incarnation %d, pid %d: %q\n", inc, p.Pid(), ps.argv)
	h.lines[filepath.Base(log.Name())]++
	h.logMu.Unlock()
	h.ev.logf("%s: started incarnation %d, pid %d", ps.label, inc, p.Pid())
	if h.ev.launched != nil {
		h.ev.launched()
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go h.read(hp, or, &readers)
	go h.read(hp, er, &readers)
	go func() {
		readers.Wait()
		close(hp.readsDone)
	}()
	go func() {
		detail := p.Wait()
		if ps.after < 0 {
			bx.kill() // the server's end is the host's
		}
		h.awaitOutput(hp)
		close(hp.exited)
		h.processExited(hp, inc, detail)
	}()
	return hp, nil
}

// awaitOutput waits until a process's output is read to its end, for
// pipeGrace at most once its host is killed: a pipe held open longer is
// held by a process outside the host, and coup stops reading it.
func (h *localHost) awaitOutput(hp *hostProcess) {
	select {
	case <-hp.readsDone:
		return
	case <-time.After(pipeGrace):
	}
	h.ev.logf("%s: its output is still held open %s after it ended, by a process outside the host (one that left its process group): coup stops reading it", hp.label, pipeGrace)
	hp.closeReads()
	<-hp.readsDone
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
		name := filepath.Base(hp.log.Name())
		h.lines[name]++
		n := h.lines[name]
		h.logMu.Unlock()
		h.ev.line(hp.patterns, line, name, n)
	}
}

// waitReady waits until the process's probe answers (probe.go), it
// exits, the deadline passes or ctx ends; the process is then ready.
func (h *localHost) waitReady(ctx context.Context, hp *hostProcess, env []string, deadline time.Time) error {
	select {
	case <-hp.isReady:
		return nil
	default:
	}
	if hp.ready.IsZero() {
		close(hp.isReady)
		return nil
	}
	pr := &prober{probe: hp.ready, dir: h.node.Dir, env: env, dial: h.dial, enter: h.enter}
	every := 20 * time.Millisecond
	if hp.ready.Addr == "" {
		every = 100 * time.Millisecond // a command or a GET costs more than a connect
	}
	for {
		if pr.try(ctx, deadline) {
			close(hp.isReady)
			return nil
		}
		select {
		case <-hp.exited:
			// Its output is all in its log by now: the cause is usually
			// at its end.
			if hp.ready.Addr != "" {
				return fmt.Errorf("%s exited before it accepted connections on %s%s", hp.label, hp.ready.Addr, console.LogTail(hp.log.Name()))
			}
			return fmt.Errorf("%s exited before it was ready (%s%s)%s", hp.label, hp.ready.What, pr.lastSaid(), console.LogTail(hp.log.Name()))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
		if time.Now().After(deadline) {
			if hp.ready.Addr != "" {
				return fmt.Errorf("%s did not accept connections on %s within %s (its last answer: %s)%s", hp.label, hp.ready.Addr, h.sv.StartTimeout.D, pr.last, console.LogTail(hp.log.Name()))
			}
			return fmt.Errorf("%s was not ready within start_timeout %s: %s never answered as ready (its last answer: %s)%s", hp.label, h.sv.StartTimeout.D, hp.ready.What, pr.last, console.LogTail(hp.log.Name()))
		}
	}
}

// processExited handles a process that ended, by coup's hand or its own.
func (h *localHost) processExited(hp *hostProcess, inc int, detail string) {
	h.mu.Lock()
	i := slices.Index(h.procs, hp)
	if i < 0 {
		h.mu.Unlock()
		return // ended by coup (Stop), which says why
	}
	if i > 0 {
		// A sidecar killed with the box of a server that exited: the
		// server's own end says the host's.
		select {
		case <-h.procs[0].exited:
			h.mu.Unlock()
			return
		default:
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", h.procs[0].p.Pid())); err != nil {
			h.mu.Unlock()
			return
		}
		h.procs = slices.Delete(h.procs, i, i+1)
		h.mu.Unlock()
		h.ev.sidecarExited(hp.name, detail)
		return
	}
	if len(h.procs) > 1 {
		detail += "; its sidecars ended with it"
	}
	procs, bx := h.procs, h.box
	h.procs, h.paused, h.box = nil, false, nil
	h.mu.Unlock()
	h.endBox(bx, procs[1:])
	h.ev.exited(inc, detail)
}

// endBox kills a box that holds procs, waits until each has ended (and
// its output is read, or given up on), and removes the box.
func (h *localHost) endBox(bx box, procs []*hostProcess) {
	if bx == nil {
		return
	}
	bx.kill()
	for _, hp := range procs {
		<-hp.exited // its ports are free once it is gone
	}
	if err := bx.close(); err != nil {
		h.ev.logf("%s: %v", h.id, err)
	}
}

// Stop kills every process of the host at once and waits until each is
// gone and its output read (Host).
func (h *localHost) Stop() bool {
	h.mu.Lock()
	procs, bx := h.procs, h.box
	h.procs, h.paused, h.box = nil, false, nil
	h.mu.Unlock()
	h.endBox(bx, procs)
	return len(procs) > 0
}

// Pause freezes the host's box (Host).
func (h *localHost) Pause(mark func()) error { return h.setPaused(true, mark) }

// Resume thaws the host's box (Host).
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
	if pause {
		return h.box.freeze()
	}
	return h.box.thaw()
}

// Pids lists every process of the host, as pids on this machine (Host).
func (h *localHost) Pids() []int {
	h.mu.Lock()
	bx := h.box
	h.mu.Unlock()
	if bx == nil {
		return nil
	}
	return bx.pids()
}

// Isolation says what holds the host's processes (Host).
func (h *localHost) Isolation() string { return h.iso.kind }

// Exec runs a command on the host, in a box of its own held as the
// host's processes are (its cgroup or namespace, its user), in the
// node's folder, its output written to the server's log; when ctx ends
// first, every process it started is killed (Host).
func (h *localHost) Exec(ctx context.Context, argv []string) error {
	log, err := h.log(h.id + ".log")
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.execs++
	n := h.execs
	h.mu.Unlock()
	var bx box
	err = h.enter(func() (err error) {
		bx, err = h.iso.newBox(boxSpec{host: h.id + "-exec", inc: n, netns: h.netns, log: log})
		return err
	})
	if err != nil {
		return err
	}
	defer func() {
		bx.kill()
		if err := bx.close(); err != nil {
			h.ev.logf("%s: %v", h.id, err)
		}
	}()
	h.logMu.Lock()
	fmt.Fprintf(log, "--- coup: %q\n", argv)
	h.logMu.Unlock()
	var p boxed
	err = h.enter(func() (err error) { // in the host's network namespace
		p, err = bx.launch(launchSpec{argv: argv, dir: h.node.Dir, stdout: log, stderr: log, leader: true})
		return err
	})
	if err != nil {
		return err
	}
	done := make(chan string, 1)
	go func() { done <- p.Wait() }()
	// The command wrote to the log itself: its lines are counted again,
	// so that a reading's evidence still gives its line's number.
	defer h.recount(log)
	select {
	case detail := <-done:
		if detail != "exit status 0" {
			return fmt.Errorf("%q: %s", argv, detail)
		}
		return nil
	case <-ctx.Done():
		bx.kill()
		<-done
		return fmt.Errorf("%q: %w", argv, ctx.Err())
	}
}

// recount counts the lines of log again, for a writer that is not coup.
func (h *localHost) recount(log *os.File) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	b, err := os.ReadFile(log.Name())
	if err == nil {
		h.lines[filepath.Base(log.Name())] = bytes.Count(b, []byte{'\n'})
	}
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
	select {
	case <-h.procs[0].exited:
		return 0
	default:
	}
	return h.procs[0].p.Pid()
}
