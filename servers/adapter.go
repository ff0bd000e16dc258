package servers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/nodes/wire"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/workloads"
)

// MaxAdapterLine is the longest line a client adapter may write, newline
// excluded: a longer one is discarded unread.
const MaxAdapterLine = 1 << 20

// adapters are the workload's clients as processes of their own, one per
// client (c1, c2, …), each speaking coup's client protocol on its stdin
// and stdout (docs/servers.md): a user's adapter for a service coup has no
// client for, or coup's own client ("coup adapter etcd"), so that a fault
// can pause a client. They carry operations as an opClient.
type adapters struct {
	r  *run
	by map[string]*adapter // by client name
}

var _ opClient = (*adapters)(nil)

// adapter is one client's process.
type adapter struct {
	name string
	p    *proc.Proc
	log  *os.File
	// gone is closed when its output has ended (it exited, or was killed).
	gone chan struct{}
	// closing is set once coup ends the process (close); exited records
	// an end it did not cause, once the process had answered its init.
	closing atomic.Bool
	exited  func(detail string)

	wmu sync.Mutex // one line at a time on its stdin

	logMu sync.Mutex // its log, and the notes written to it
	notes int

	mu     sync.Mutex
	next   int
	waits  map[int]waiter
	paused bool
}

// waiter is a request waiting for its answer: of type f+"_ok", or an
// error.
type waiter struct {
	f  string
	ch chan []byte
}

// adapterArgv is the command of client name's process: the scenario's
// adapter, or coup's own for its built-in client.
func (r *run) adapterArgv(name string) ([]string, error) {
	if len(r.sv.Adapter) > 0 {
		return r.sv.RenderAdapter(&scenario.AdapterClient{Client: name, Dir: r.dir, Scenario: r.layout.nodes[0].Scenario})
	}
	coup := r.opts.Coup
	if len(coup) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the coup executable: %w", err)
		}
		coup = []string{exe}
	}
	argv := append(append([]string{}, coup...), "adapter", r.sv.Client, "--timeout", r.sc.Workload.Timeout.D.String())
	if r.sv.Reads != "" {
		argv = append(argv, "--reads", r.sv.Reads)
	}
	if r.sc.Workload.Kind == scenario.WorkloadMutex {
		argv = append(argv, "--lock-ttl", r.sv.LockTTL.D.String())
	}
	return argv, nil
}

// startAdapters starts every client's process and waits for each to
// answer its init within the start timeout.
func (r *run) startAdapters(ctx context.Context, clients int) (*adapters, error) {
	ads := &adapters{r: r, by: map[string]*adapter{}}
	init := r.adapterInit()
	errs := make(chan error, clients)
	for i := 1; i <= clients; i++ {
		name := fmt.Sprintf("c%d", i)
		a, err := r.startAdapter(name)
		if err != nil {
			ads.close()
			return nil, err
		}
		ads.by[name] = a
		go func() { errs <- a.handshake(ctx, init(name), r.sv.StartTimeout.D) }()
	}
	var first error
	for range clients {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		ads.close()
		return nil, first
	}
	return ads, nil
}

// adapterInit is the init line of each client: its name, its host, the
// members, and each member's ports as its host reaches them (placement.go:
// through coup's proxy, but for its own host's member).
func (r *run) adapterInit() func(name string) []byte {
	var ids []string
	for _, n := range r.layout.nodes {
		ids = append(ids, n.ID)
	}
	return func(name string) []byte {
		host := r.hostOf(name)
		body, _ := json.Marshal(map[string]any{"type": "init", "msg_id": 0, "node_id": name, "host": host, "node_ids": ids, "addrs": r.reachFrom(host)})
		return envelope("coup", name, body)
	}
}

// envelope is a line of coup's client protocol.
func envelope(src, dest string, body []byte) []byte {
	b, _ := json.Marshal(wire.Envelope{Src: src, Dest: dest, Body: body})
	return append(b, '\n')
}

func (r *run) startAdapter(name string) (*adapter, error) {
	argv, err := r.adapterArgv(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	log, err := os.OpenFile(filepath.Join(r.dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(log, "--- coup: client process: %q\n", argv)
	// A client lives on its host: on coup's network, its process starts
	// in the host's namespace.
	var p *proc.Proc
	err = r.enter(r.hostOf(name))(func() (err error) {
		p, err = proc.Start(proc.Spec{Argv: argv, Log: log, Dir: r.dir})
		return err
	})
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.logf("%s: client process started, pid %d", name, p.Pid())
	a := &adapter{name: name, p: p, log: log, gone: make(chan struct{}), waits: map[int]waiter{}, next: 1}
	a.exited = func(detail string) {
		r.processExited(history.Event{Kind: history.KindProcess, What: history.ProcPartExit, Process: name, Node: r.hostOf(name), Detail: detail}, name+".log")
	}
	return a, nil
}

// handshake sends the init and reads the process's output from then on:
// the first init_ok ends the handshake; each later line is an answer.
func (a *adapter) handshake(ctx context.Context, init []byte, timeout time.Duration) error {
	ok := make(chan struct{})
	go a.read(ok)
	t := time.NewTimer(timeout)
	defer t.Stop()
	if err := a.write(init); err != nil {
		// Most often the process has exited already: wait to say so,
		// with the end of its log.
		select {
		case <-a.gone:
			return fmt.Errorf("client process %s exited before it answered its init%s", a.name, console.LogTail(a.log.Name()))
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		return fmt.Errorf("client process %s: write its init: %w%s", a.name, err, console.LogTail(a.log.Name()))
	}
	select {
	case <-ok:
		return nil
	case <-a.gone:
		return fmt.Errorf("client process %s exited before it answered its init%s", a.name, console.LogTail(a.log.Name()))
	case <-t.C:
		return fmt.Errorf("client process %s did not answer its init within %s%s", a.name, timeout, console.LogTail(a.log.Name()))
	case <-ctx.Done():
		return ctx.Err()
	}
}

// read reads the process's stdout to its end. Before init_ok it looks for
// init_ok alone; after, each line that is an answer (a body with an
// in_reply_to coup is waiting for) goes to its waiter. Anything else is
// written to the client's log, quoted, and otherwise ignored.
func (a *adapter) read(initOK chan struct{}) {
	defer close(a.gone)
	lines := history.NewLineReader(a.p.Stdout, MaxAdapterLine)
	up := false
	for {
		line, n, long, err := lines.Next()
		if err != nil {
			break
		}
		if long {
			a.note("a line of %d bytes, longer than the %d a client may write: discarded unread", n, MaxAdapterLine)
			continue
		}
		env, err := wire.Parse(line)
		var head wire.ReplyHead
		if err == nil {
			err = json.Unmarshal(env.Body, &head)
		}
		switch {
		case err != nil:
			a.note("ignoring a line that is not a message: %s", quoteLine(line))
		case !up && head.Type == "init_ok":
			up = true
			close(initOK)
		case !up:
			a.note("ignoring output before init_ok: %s", quoteLine(line))
		default:
			a.mu.Lock()
			w, ok := a.waits[head.InReplyTo]
			fits := ok && (head.Type == w.f+"_ok" || head.Type == "error")
			if fits {
				delete(a.waits, head.InReplyTo)
			}
			a.mu.Unlock()
			switch {
			case !ok:
				a.note("ignoring an answer to no request waiting (in_reply_to %d): %s", head.InReplyTo, quoteLine(line))
			case !fits:
				a.note("ignoring an answer of type %q to a %s request (in_reply_to %d): %s", head.Type, w.f, head.InReplyTo, quoteLine(line))
			default:
				w.ch <- append([]byte(nil), env.Body...)
			}
		}
	}
	state, _ := a.p.Wait()
	if up && !a.closing.Load() {
		detail := "unknown"
		if state != nil {
			detail = state.String()
		}
		a.exited(detail) // a finding: no fault ends a client's process
	}
}

// maxNotes bounds the lines of coup's own in a client's log: a process
// that writes nothing but noise does not fill the disk.
const maxNotes = 1000

// note writes a line of coup's own to the client's log, up to maxNotes.
func (a *adapter) note(format string, args ...any) {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	a.notes++
	switch {
	case a.notes < maxNotes:
		fmt.Fprintf(a.log, "--- coup: %s\n", fmt.Sprintf(format, args...))
	case a.notes == maxNotes:
		fmt.Fprintf(a.log, "--- coup: %d lines skipped so far; the rest are skipped without a note\n", maxNotes)
	}
}

func quoteLine(line []byte) string {
	const most = 200
	if len(line) > most {
		return strconv.Quote(string(line[:most])) + "…"
	}
	return strconv.Quote(string(line))
}

func (a *adapter) write(line []byte) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	_, err := a.p.Stdin.Write(line)
	return err
}

// Do sends an operation to its client's process and waits for the answer
// (opClient). A request that could not be written surely did not happen;
// a process that ends before it answers leaves the operation unknown.
func (ads *adapters) Do(ctx context.Context, node string, op workloads.Op) ([]byte, error) {
	name := workloads.ClientOf(op)
	a, ok := ads.by[name]
	if !ok {
		return nil, fmt.Errorf("%w: no client process %s", errDefinite, name)
	}
	ch := make(chan []byte, 1)
	a.mu.Lock()
	id := a.next
	a.next++
	a.waits[id] = waiter{f: op.F, ch: ch}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.waits, id)
		a.mu.Unlock()
	}()
	if err := a.write(envelope(op.Process, node, workloads.RequestBody(op, id))); err != nil {
		return nil, fmt.Errorf("%w: client process %s: %v", errDefinite, name, err)
	}
	select {
	case body := <-ch:
		return body, nil
	case <-a.gone:
		return nil, fmt.Errorf("client process %s ended before it answered", name)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// client is the process of a client, if it is one.
func (ads *adapters) client(name string) (*adapter, bool) {
	if ads == nil {
		return nil, false
	}
	a, ok := ads.by[name]
	return a, ok
}

// setPaused stops a client's process group (SIGSTOP), or continues it
// (SIGCONT).
func (a *adapter) setPaused(pause bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.paused == pause && pause:
		return errPaused
	case a.paused == pause:
		return errActive
	}
	a.paused = pause
	if pause {
		return a.p.Pause()
	}
	return a.p.Resume()
}

// close ends every client's process (SIGKILL, a paused one too) and waits
// until each is gone and its output read.
func (ads *adapters) close() {
	for _, a := range ads.by {
		a.closing.Store(true)
		_ = a.p.Kill()
	}
	for _, a := range ads.by {
		<-a.gone
		a.logMu.Lock()
		a.log.Close()
		a.logMu.Unlock()
	}
}
