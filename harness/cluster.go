package harness

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"coup/harness/history"
	"coup/harness/proc"
	"coup/nemesis"
	"coup/nodes/wire"
)

// OutboxSize bounds each node's queue of messages waiting to be written to
// it. A message that finds the queue full is dropped as an overflow.
const OutboxSize = 4096

// InitTimeout is how long a node has to answer init.
const InitTimeout = 10 * time.Second

// delivery is a line waiting to be written to a node: a message between
// nodes (msg > 0) or a client request.
type delivery struct {
	msg   int64
	src   string
	mtype string
	line  []byte
}

// member is one node of the cluster, across its incarnations.
type member struct {
	name   string
	outbox chan delivery

	mu   sync.Mutex
	proc *proc.Proc // the incarnation that takes deliveries; nil when down
	inc  int        // incarnations started so far
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

// startNode starts a new incarnation of m and waits for its init_ok.
func (r *run) startNode(m *member) error {
	logf, err := os.OpenFile(filepath.Join(r.dir, m.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: open log: %w", m.name, err)
	}
	defer logf.Close() // the child has its own copy
	p, err := proc.Start(proc.Spec{Argv: r.nodeArgv(), Log: logf, Env: []string{"COUP_RUN=" + r.runID, "COUP_NODE=" + m.name}})
	if err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	m.mu.Lock()
	m.inc++
	inc := m.inc
	m.ending = ""
	done := make(chan struct{})
	m.readerDone = done
	m.mu.Unlock()

	ready := make(chan struct{})
	go r.read(m, p, inc, ready, done)

	init := wire.InitBody{
		Type: "init", MsgID: 1, NodeID: m.name, NodeIDs: r.names, IDs: r.sc.IDs,
		Algorithm: r.sc.Algorithm, Params: r.sc.Params, Seed: r.sc.Seed, Checksums: r.sc.ChecksumsOn(),
	}
	if r.sc.Command != nil {
		init.Algorithm = "" // a foreign node runs what it runs
	}
	body, _ := json.Marshal(init)
	line := (&wire.Envelope{Src: wire.Harness, Dest: m.name, Body: body}).Append(nil)
	if _, err := p.Stdin.Write(line); err != nil {
		_ = p.Kill()
		<-done
		return fmt.Errorf("%s: write init: %w (see %s.log)", m.name, err, m.name)
	}
	select {
	case <-ready:
		return nil
	case <-done:
		return fmt.Errorf("%s exited before answering init (see %s)", m.name, filepath.Join(r.dir, m.name+".log"))
	case <-time.After(InitTimeout):
		_ = p.Kill()
		<-done
		return fmt.Errorf("%s did not answer init within %s (see %s)", m.name, InitTimeout, filepath.Join(r.dir, m.name+".log"))
	}
}

// nodeArgv is the command line of a node process.
func (r *run) nodeArgv() []string {
	if r.sc.Command != nil {
		return r.sc.Command
	}
	return append(append([]string(nil), r.opts.NodeCommand...), "node", "--algo", r.sc.Algorithm)
}

// read reads one incarnation's output to the end, in order. The first line
// must be init_ok; from then on the incarnation is up and every line is
// routed. When the output ends it waits for the process and records its
// exit, unless the harness ended it.
func (r *run) read(m *member, p *proc.Proc, inc int, ready, done chan struct{}) {
	defer close(done)
	sc := bufio.NewScanner(p.Stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	up := false
	for sc.Scan() {
		line := sc.Bytes()
		if !up {
			if !isInitOK(line) {
				r.logf("%s: ignoring output before init_ok: %.200s", m.name, line)
				continue
			}
			up = true
			m.mu.Lock()
			m.proc = p
			m.mu.Unlock()
			r.rec.Record(history.Event{Kind: history.KindProcess, Node: m.name, What: history.ProcStart, Incarnation: inc, Detail: "pid " + strconv.Itoa(p.Pid())})
			close(ready)
			continue
		}
		r.route(m.name, line)
	}
	if err := sc.Err(); err != nil {
		r.logf("%s: read output: %v", m.name, err)
		_ = p.Kill() // a node whose output we cannot read is of no use
	}
	state, _ := p.Wait()
	m.mu.Lock()
	ending := m.ending
	if m.proc == p {
		m.proc = nil
	}
	m.mu.Unlock()
	if ending == "" && up {
		r.rec.Record(history.Event{Kind: history.KindProcess, Node: m.name, What: history.ProcExit, Incarnation: inc, Detail: exitDetail(state)})
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

// write hands a member's queued deliveries to whichever incarnation is up.
// It runs for the whole run, one goroutine per member.
func (r *run) write(m *member) {
	for d := range m.outbox {
		p := m.current()
		if d.msg == 0 { // a client request
			if p != nil {
				_, _ = p.Stdin.Write(d.line)
			}
			continue
		}
		if p == nil {
			r.dropped(d, m.name, "down")
			continue
		}
		r.delivered(d, m.name)
		if _, err := p.Stdin.Write(d.line); err != nil {
			r.dropped(d, m.name, "write-failed")
		}
	}
}

// end ends a member's current incarnation for a reason ("crash" or "stop")
// and records it once its output has been read to the end, so that nothing
// it wrote is recorded after its end.
func (r *run) end(m *member, why string) (bool, error) {
	m.mu.Lock()
	p, inc, done := m.proc, m.inc, m.readerDone
	if p == nil {
		m.mu.Unlock()
		return false, nil
	}
	m.proc = nil
	m.ending = why
	m.mu.Unlock()
	err := p.Kill()
	<-done
	r.rec.Record(history.Event{Kind: history.KindProcess, Node: m.name, What: why, Incarnation: inc})
	return true, err
}

// Crash kills a node (nemesis.Cluster).
func (r *run) Crash(node string) error {
	m, ok := r.members[node]
	if !ok {
		return fmt.Errorf("no node %q", node)
	}
	up, err := r.end(m, history.ProcCrash)
	if !up {
		return errors.New("already down")
	}
	return err
}
