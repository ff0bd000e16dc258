package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/clockfault"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/nodes/algorithms"
	"github.com/coupharness/coup/nodes/wire"
	"github.com/coupharness/coup/verdict"
)

// PauseTimeout bounds how long a pause waits for the stopped node's output
// to be read to the end before it records the pause anyway.
const PauseTimeout = 2 * time.Second

// delivery is a line waiting to be written to a node: a message between
// nodes (msg > 0), or a client request or control message (msg 0).
type delivery struct {
	msg   int64
	src   string
	mtype string
	line  []byte
	// corrupt says how the nemesis altered the body ("" if it did not);
	// body is the altered body and detail what changed, for the history.
	corrupt string
	body    []byte
	detail  string
	// rec says whether the message's events are recorded; capped that
	// the limit on recorded messages had bitten when it was sent (not even
	// its corruption is recorded).
	rec, capped bool
	// recorded is set once the delivery is recorded (and counted): by a
	// direct delivery that found the pipe full and left the write to the
	// writer.
	recorded bool
}

// member is one node of the cluster, across its incarnations.
type member struct {
	name string
	box  *outbox
	// delayed counts this node's deliveries in the delay queue: while
	// there are any, a message due now goes through the queue too, so as
	// not to overtake them.
	delayed atomic.Int64
	// unsummed counts the messages it sent to a node without a checksum
	// while checksums are on: a node that sums nothing is warned of.
	unsummed atomic.Int64

	mu   sync.Mutex
	proc *proc.Proc // the incarnation that takes deliveries; nil when down
	out  *stream    // its output
	inc  int        // incarnations started so far
	rate float64    // the clock rate a fault set, 0 for none
	// clock is the clock skew in force on its processes (a foreign
	// node's, or a jump), kept across incarnations.
	clock clockfault.Node
	// resumed is non-nil while the node is paused, and closed when it is
	// resumed (or ends): the writer holds deliveries until then.
	resumed chan struct{}
	// ending says why the harness is ending the current incarnation
	// ("crash", "stop"), so that its exit is not reported as its own.
	ending string
	// readerDone is closed when the current incarnation's output has been
	// read to the end and the process waited for.
	readerDone chan struct{}
}

var _ nemesis.Cluster = (*run)(nil)

// current returns the incarnation that takes deliveries, if any.
func (m *member) current() *proc.Proc {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc
}

// release ends a pause, if any (called under m.mu).
func (m *member) release() {
	if m.resumed != nil {
		close(m.resumed)
		m.resumed = nil
	}
}

// stream is a node's output, counting the bytes read from the pipe and the
// bytes whose lines have been handled, so that a pause or a crash can wait
// until all the node wrote before it has been recorded.
type stream struct {
	r io.Reader
	// raw is r's descriptor, when r is a pipe: its reads are then made
	// under mu, each with its count, so that what is in the pipe and what
	// has been read from it can be seen together (pending), never a byte
	// taken from the pipe and not yet counted.
	raw     syscall.RawConn
	mu      sync.Mutex
	read    atomic.Int64
	handled atomic.Int64
}

func newStream(r io.Reader) *stream {
	s := &stream{r: r}
	if sc, ok := r.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			s.raw = raw
		}
	}
	return s
}

func (s *stream) Read(b []byte) (int, error) {
	if s.raw == nil || len(b) == 0 {
		return s.readFile(b)
	}
	var n int
	var rerr error
	err := s.raw.Read(func(fd uintptr) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for {
			n, rerr = syscall.Read(int(fd), b)
			if rerr != syscall.EINTR {
				break
			}
		}
		if n > 0 {
			s.read.Add(int64(n))
		}
		return rerr != syscall.EAGAIN
	})
	switch {
	case err != nil: // closed: the file's own read says so in its terms
		return s.readFile(b)
	case rerr != nil:
		return 0, &os.PathError{Op: "read", Path: "stdout", Err: rerr}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readFile reads through r itself, counting what it read.
func (s *stream) readFile(b []byte) (int, error) {
	n, err := s.r.Read(b)
	s.read.Add(int64(n))
	return n, err
}

// pending says whether anything the process wrote is still to be handled:
// bytes in its pipe, or read and not yet handled as lines (a line it left
// unfinished among them).
func (s *stream) pending(p *proc.Proc) (bool, error) {
	s.mu.Lock()
	n, err := p.Unread()
	read := s.read.Load()
	s.mu.Unlock()
	return n > 0 || read != s.handled.Load(), err
}

// startNode starts a new incarnation of m and waits for its init_ok. It
// returns a channel closed once the incarnation is up (recorded and taking
// deliveries), which happens only after the run's gate opens.
func (r *run) startNode(m *member) (<-chan struct{}, error) {
	logf, err := os.OpenFile(filepath.Join(r.dir, m.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: open log: %w", m.name, err)
	}
	defer logf.Close() // the child has its own copy
	p, err := proc.Start(proc.Spec{Argv: r.nodeArgv(), Log: logf, Env: []string{"COUP_RUN=" + r.runID, "COUP_NODE=" + m.name}})
	if err != nil {
		return nil, startError(m.name, err)
	}
	r.clockStarted(m, p.Pid())
	m.mu.Lock()
	m.inc++
	inc, rate := m.inc, m.rate
	m.ending = ""
	done := make(chan struct{})
	m.readerDone = done
	m.mu.Unlock()

	answered, ready, abandoned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	hs := &handshake{}
	go r.read(m, p, inc, hs, answered, ready, abandoned, done)

	line := (&wire.Envelope{Src: wire.Harness, Dest: m.name, Body: r.initBody(m.name, rate)}).Append(nil)
	log, limit := filepath.Join(r.dir, m.name+".log"), r.sc.InitLimit()
	if _, err := p.Stdin.Write(line); err != nil {
		// It exited (or closed its stdin) before reading init.
		_ = p.Kill()
		<-done
		return nil, exitedError(m.name, log, hs)
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-answered:
		return ready, nil
	case <-done:
		return nil, exitedError(m.name, log, hs)
	case <-r.ctx.Done():
		close(abandoned)
		_ = p.Kill()
		<-done
		return nil, lifecycle.ErrInterrupted
	case <-timer.C:
		close(abandoned) // an init_ok that comes now is too late
		_ = p.Kill()
		<-done
		return nil, silentError(m.name, log, limit, hs)
	}
}

// initMessage is the init of node name, under a clock rate (0 for none).
func (r *run) initMessage(name string, rate float64) wire.InitBody {
	init := wire.InitBody{
		Type: "init", MsgID: 1, NodeID: name, NodeIDs: r.names, IDs: r.sc.IDs,
		Algorithm: r.sc.Algorithm, Params: r.sc.Params, Seed: r.sc.Seed, Checksums: r.sc.ChecksumsOn(),
		ClockRate: rate, DeferStart: r.sc.DefersStart(),
	}
	if r.sc.Command != nil {
		init.Algorithm = "" // a foreign node runs what it runs
	}
	return init
}

// initBody is initMessage encoded. Every node's init is the same but for
// its node_id (and its clock_rate under a clock fault), and names every
// node: the rest is encoded once per run and each node's id put in, so
// that a thousand starts do not encode a thousand names each.
func (r *run) initBody(name string, rate float64) []byte {
	r.initOnce.Do(func() {
		body, _ := json.Marshal(r.initMessage("", 0))
		if i := bytes.Index(body, []byte(`"node_id":""`)); i >= 0 {
			r.initHead, r.initTail = body[:i+len(`"node_id":`)], body[i+len(`"node_id":""`):]
		}
	})
	if rate != 0 || r.initHead == nil {
		body, _ := json.Marshal(r.initMessage(name, rate))
		return body
	}
	id, _ := json.Marshal(name) // a string always marshals
	b := make([]byte, 0, len(r.initHead)+len(id)+len(r.initTail))
	return append(append(append(b, r.initHead...), id...), r.initTail...)
}

// nodeArgv is the command line of a node process: the scenario's command,
// the program of an algorithm that is a program of its own, or coup's node
// program.
func (r *run) nodeArgv() []string {
	if r.sc.Command != nil {
		return r.sc.Command
	}
	if r.program != "" {
		return []string{r.program}
	}
	return append(append([]string(nil), r.opts.NodeCommand...), "node", "--algo", r.sc.Algorithm)
}

// findProgram finds the executable of an algorithm that is a program of
// its own (nodes.Spec.Program: memberlist), building it when needed, once
// per run and before any node starts, so that a first build does not count
// against init_timeout.
func (r *run) findProgram() error {
	if r.sc.Command != nil {
		return nil
	}
	spec, ok := algorithms.Lookup(r.sc.Algorithm)
	if !ok || spec.Program == nil {
		return nil
	}
	path, err := spec.Program(r.ctx, r.log.Progress)
	if err != nil {
		return err
	}
	r.program = path
	return nil
}

// read reads one incarnation's output to the end, in order. The first line
// must be init_ok; once the run's gate is open the incarnation is up and
// every line is routed (unless startNode abandoned it, having given up
// waiting). When the output ends it waits for the process and records its
// exit, unless the harness ended it.
func (r *run) read(m *member, p *proc.Proc, inc int, hs *handshake, answered, ready, abandoned, done chan struct{}) {
	defer close(done)
	out := newStream(p.Stdout)
	lines := history.NewLineReader(out, MaxLine)
	var wk wakes
	up, dropped := false, false
	for {
		line, n, long, err := lines.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				r.logf("%s: read output: %v", m.name, err)
				_ = p.Kill() // a node whose output cannot be read is of no use
			}
			break
		}
		switch {
		case long && up:
			r.refuse(m.name, RefusedLine, fmt.Sprintf("a line of %d bytes, longer than the %d a node may write: discarded unread", n, MaxLine))
		case long:
			r.logf("%s: ignoring a line of %d bytes before init_ok", m.name, n)
		case up:
			r.route(m.name, line, &wk)
			if !lines.HasLine() {
				wk.flush(r) // nothing more in hand: the writers fed go now
			}
		case dropped:
		case !isInitOK(line):
			r.logf("%s: ignoring output before init_ok: %s", m.name, quote(line))
			hs.note(line)
		default:
			close(answered)
			select {
			case <-r.gate: // nothing is recorded before the run's zero
			case <-abandoned:
				dropped = true
				out.handled.Add(int64(n))
				continue
			}
			up = true
			m.mu.Lock()
			m.proc, m.out = p, out
			m.mu.Unlock()
			r.rec.Record(history.Event{Kind: history.KindProcess, Node: m.name, What: history.ProcStart, Incarnation: inc, Detail: "pid " + strconv.Itoa(p.Pid())})
			if r.sc.DefersStart() {
				body, _ := json.Marshal(wire.StartBody{Type: "start"})
				r.enqueue(m, delivery{line: (&wire.Envelope{Src: wire.Harness, Dest: m.name, Body: body}).Append(nil)})
			}
			close(ready)
		}
		out.handled.Add(int64(n))
	}
	wk.flush(r)
	state, _ := p.Wait()
	hs.mu.Lock()
	hs.exit = exitDetail(state)
	hs.mu.Unlock()
	m.mu.Lock()
	ending := m.ending
	if m.proc == p {
		m.proc, m.out = nil, nil
		m.release()
	}
	m.mu.Unlock()
	if ending == "" && up {
		// No fault and no end of run ended it: a finding, said at once
		// with the end of its log (the child wrote it directly, so it
		// is whole once the process has been waited for).
		tail, _ := console.LastLines(filepath.Join(r.dir, m.name+".log"))
		e := r.rec.Record(history.Event{Kind: history.KindProcess, Node: m.name, What: history.ProcExit, Incarnation: inc, Detail: exitDetail(state), Tail: tail})
		for _, l := range verdict.ExitLines(&e) {
			if r.stopping.Load() {
				r.logf("%s", l)
			} else {
				r.Progress(time.Duration(e.Time), "%s", l)
			}
		}
	}
}

func isInitOK(line []byte) bool {
	env, err := wire.Parse(line)
	if err != nil {
		return false
	}
	head, err := wire.ParseHead(env.Body)
	return err == nil && head.Type == "init_ok"
}

func exitDetail(s *os.ProcessState) string {
	if s == nil {
		return "unknown"
	}
	return s.String()
}

// end ends a member's current incarnation for a reason ("crash" or "stop")
// with SIGKILL, records it once what the process wrote before has been
// read (killDrained), so that nothing it wrote is recorded after its end,
// and returns once its output has ended and it has been reaped. A paused
// process is killed too.
func (r *run) end(m *member, why string) (bool, error) {
	m.mu.Lock()
	p, out, inc, done := m.proc, m.out, m.inc, m.readerDone
	if p == nil {
		m.mu.Unlock()
		return false, nil
	}
	m.proc, m.out = nil, nil
	m.ending = why
	m.release()
	m.mu.Unlock()
	err := p.Kill()
	if err == nil {
		r.killDrained(p, out, done)
	}
	r.rec.Record(history.Event{Kind: history.KindProcess, Node: m.name, What: why, Incarnation: inc})
	<-done // its output is all read and the process reaped
	return true, err
}

// killDrained waits, once a process has been sent SIGKILL, until what it
// wrote before has all been handled, or its output has ended. A killed
// process runs none of its own code again, so what it wrote is what is in
// its pipe and in the reader's hands: the crash is recorded once that is
// handled, not once the process has died and been reaped, which on a
// loaded machine comes much later (977 ms was seen) and would let a dead
// node's claim outlast its kill. A line it left unfinished ends only with
// the output.
func (r *run) killDrained(p *proc.Proc, out *stream, done <-chan struct{}) {
	if out == nil { // not yet up: nothing it wrote is recorded
		<-done
		return
	}
	for {
		select {
		case <-done:
			return
		default:
		}
		left, err := out.pending(p)
		if err != nil {
			<-done
			return
		}
		if !left {
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func (r *run) member(node string) (*member, error) {
	m, ok := r.members[node]
	if !ok {
		return nil, fmt.Errorf("no node %q", node)
	}
	return m, nil
}

var (
	errDown   = errors.New("the node is down")
	errUp     = errors.New("the node is up")
	errPaused = errors.New("the node is already paused")
	errActive = errors.New("the node is not paused")
)

// Crash kills a node (nemesis.Cluster).
func (r *run) Crash(node string) error {
	m, err := r.member(node)
	if err != nil {
		return err
	}
	up, err := r.end(m, history.ProcCrash)
	if !up {
		return errDown
	}
	return err
}

// Restart starts a fresh incarnation of a node that is down, under the same
// id (nemesis.Cluster). It returns once the node has answered init and is
// taking deliveries.
func (r *run) Restart(node string) error {
	m, err := r.member(node)
	if err != nil {
		return err
	}
	m.mu.Lock()
	up, done := m.proc != nil, m.readerDone
	m.mu.Unlock()
	if up {
		return errUp
	}
	if done != nil {
		<-done // the last incarnation's output is all recorded
	}
	ready, err := r.startNode(m)
	if err != nil {
		return err
	}
	<-ready
	return nil
}

// Pause stops a node (SIGSTOP) and records the pause once everything the
// node wrote before it stopped has been read and recorded, so that nothing
// it did is recorded while it is paused (nemesis.Cluster).
func (r *run) Pause(node string) error {
	m, err := r.member(node)
	if err != nil {
		return err
	}
	m.mu.Lock()
	p, out, inc := m.proc, m.out, m.inc
	switch {
	case p == nil:
		m.mu.Unlock()
		return errDown
	case m.resumed != nil:
		m.mu.Unlock()
		return errPaused
	}
	m.resumed = make(chan struct{})
	m.mu.Unlock()
	if err := p.Pause(); err != nil {
		m.mu.Lock()
		m.release()
		m.mu.Unlock()
		return err
	}
	detail := ""
	if !r.drained(p, out) {
		detail = fmt.Sprintf("not seen stopped and drained within %s", PauseTimeout)
	}
	r.rec.Record(history.Event{Kind: history.KindProcess, Node: node, What: history.ProcPause, Incarnation: inc, Detail: detail})
	return nil
}

// drained waits until a stopped process's output has all been handled.
func (r *run) drained(p *proc.Proc, out *stream) bool {
	deadline := time.Now().Add(PauseTimeout)
	for time.Now().Before(deadline) {
		if p.Stopped() {
			left, err := out.pending(p)
			if err != nil {
				return false
			}
			if !left {
				return true
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	return false
}

// Resume continues a paused node (SIGCONT) and lets its deliveries through
// (nemesis.Cluster).
func (r *run) Resume(node string) error {
	m, err := r.member(node)
	if err != nil {
		return err
	}
	m.mu.Lock()
	p, ch, inc := m.proc, m.resumed, m.inc
	m.mu.Unlock()
	switch {
	case p == nil:
		return errDown
	case ch == nil:
		return errActive
	}
	r.rec.Record(history.Event{Kind: history.KindProcess, Node: node, What: history.ProcResume, Incarnation: inc})
	err = p.Resume()
	m.mu.Lock()
	if m.resumed == ch {
		m.release()
	}
	m.mu.Unlock()
	return err
}

// ClockRate sets a built-in node's clock rate: at once by a control
// message when it is up, and at its next start through init
// (nemesis.Cluster).
func (r *run) ClockRate(node string, rate float64) error {
	m, err := r.member(node)
	if err != nil {
		return err
	}
	if r.sc.Command != nil {
		return errors.New("clock rate is for built-in nodes only")
	}
	m.mu.Lock()
	m.rate = rate
	up := m.proc != nil
	m.mu.Unlock()
	if !up {
		return nil
	}
	body, _ := json.Marshal(wire.ClockRateBody{Type: "clock_rate", Rate: rate})
	r.enqueue(m, delivery{line: (&wire.Envelope{Src: wire.Harness, Dest: node, Body: body}).Append(nil)})
	return nil
}
