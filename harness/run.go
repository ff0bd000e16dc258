package harness

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Options configure a run.
type Options struct {
	// Store is the store's root folder (default "store").
	Store string
	// NodeCommand runs the built-in node program; "node --algo NAME" is
	// appended. Default: this executable.
	NodeCommand []string
	// Progress receives a line per phase of the run (nil: none).
	Progress io.Writer
}

// run is one run of a scenario.
type run struct {
	sc   *scenario.Scenario
	opts Options
	// checksums is the scenario's checksums setting: messages sent
	// without a sum are counted while it is on.
	checksums bool
	// stopping is set once the run's end has begun: an exit from then on
	// may be the end's doing, and is logged, not said on the console
	// (verdict.Exit).
	stopping atomic.Bool
	ctx      context.Context // ends when the run is interrupted
	dir      string
	runID    string
	rec      *history.Recorder
	// zero is when every node is up: the time origin of the history, of
	// the scenario's times, of the nemesis and of harness.log and the
	// console (log). It is set once, before the gate opens.
	zero time.Time
	// gate is closed at zero, once the meta event is recorded: node
	// readers record nothing before.
	gate chan struct{}

	names   []string
	members map[string]*member
	router  *router
	clients *clients
	life    *lifecycle.Run
	gc      int // the collector's setting before the run
	refused refusals
	writers sync.WaitGroup // the members' writers

	log *lifecycle.Log // harness.log and the console

	// program is the executable of an algorithm that is a program of its
	// own (memberlist), found before any node starts; "" for the others.
	program string

	// initHead and initTail are every node's init body before and after
	// its node_id, encoded once (initBody).
	initOnce           sync.Once
	initHead, initTail []byte
}

// Run runs a scenario with real processes and returns its results and its
// store folder. Its lifecycle is the one every driver shares
// (lifecycle.Execute); this driver carries the messages and the process
// faults. The error is for a run that could not be carried out at all (no
// store); a run whose nodes fail to start still returns results, with
// Error set. When ctx is cancelled (Ctrl-C), the run stops early, its
// processes are killed, and the prefix it recorded is checked.
func Run(ctx context.Context, sc *scenario.Scenario, opts Options) (*verdict.Results, string, error) {
	if opts.Store == "" {
		opts.Store = "store"
	}
	if opts.NodeCommand == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, "", fmt.Errorf("find the coup executable: %w", err)
		}
		opts.NodeCommand = []string{exe}
	}
	out, err := lifecycle.Execute(ctx, opts.Store, sc, func(f *lifecycle.Files, p *lifecycle.Parts) (*lifecycle.Run, error) {
		return newRun(sc, opts, f, p), nil
	})
	if out == nil {
		return nil, "", err
	}
	return out.Results, out.Dir, err
}

// newRun builds the pipe driver of a run over its store folder's files,
// and the run's lifecycle from its parts.
func newRun(sc *scenario.Scenario, opts Options, f *lifecycle.Files, p *lifecycle.Parts) *lifecycle.Run {
	r := &run{sc: sc, opts: opts, dir: f.Dir, runID: newRunID(), members: map[string]*member{}, gate: make(chan struct{}), checksums: sc.ChecksumsOn()}
	r.log = f.NewLog(opts.Progress)
	// The recorder keeps nothing: whatever the nodes send, the run's memory
	// does not grow with its history. The history is read back from the
	// file for the checks, at disk speed.
	r.rec = history.NewRecorder(f.History, func() int64 { return int64(time.Since(r.zero)) }, false)
	r.names = sc.NodeNames()
	for _, n := range r.names {
		r.members[n] = &member{name: n, box: newOutbox(lifecycle.OutboxSize)}
	}
	r.life = p.New(r, lifecycle.Config{})
	r.rec.Subscribe(func(e history.Event) { r.life.Watch(&e) })
	r.router = &router{r: r, record: sc.RecordMessages(), limit: sc.MessageLimit(), counts: map[string]int64{}, sentBy: map[string]int64{}, nem: r.life.Nemesis(), queue: newDelayQueue()}
	r.clients = &clients{r: r, w: p.Workload, timeout: p.OpTimeout, pending: map[int]*pendingOp{}, known: map[string]bool{}, ended: map[int]*pendingOp{}}
	return r.life
}

var _ lifecycle.Driver = (*run)(nil)

// Start starts every node's writer, then every node (lifecycle.Driver).
func (r *run) Start(ctx context.Context, zero func(took time.Duration)) error {
	r.ctx = ctx
	// The router allocates a little per message and keeps almost nothing:
	// a heap allowed to grow further between collections costs the
	// messages less. Reading the history back keeps a great deal, so the
	// usual setting is back by then (Stop).
	r.gc = debug.SetGCPercent(400)
	for _, m := range r.members {
		r.writers.Add(1)
		go func() {
			defer r.writers.Done()
			r.write(m)
		}()
	}
	if err := r.startAll(zero); err != nil {
		if ctx.Err() != nil {
			return lifecycle.ErrInterrupted
		}
		return fmt.Errorf("%w: %w", lifecycle.ErrNodeStart, err)
	}
	return nil
}

// Begin starts the workload's clients (lifecycle.Driver).
func (r *run) Begin() { r.clients.start() }

// Now is the time since the run's zero (lifecycle.Driver).
func (r *run) Now() time.Duration { return time.Since(r.zero) }

// Wait sleeps until t after the run's zero, or until the run has events
// for the nemesis (lifecycle.Driver): the nodes' readers, the router and
// the clients go on meanwhile on their own goroutines.
func (r *run) Wait(ctx context.Context, t time.Duration) bool {
	return r.life.Sleep(ctx, time.Until(r.zero.Add(t)))
}

// Lock and Unlock hold the router's lock, under which every message's fate
// is decided (lifecycle.Driver).
func (r *run) Lock()   { r.router.mu.Lock() }
func (r *run) Unlock() { r.router.mu.Unlock() }

// Record records an event (lifecycle.Driver).
func (r *run) Record(e history.Event) history.Event { return r.rec.Record(e) }

// Close closes the history and reads it back from its file
// (lifecycle.Driver).
func (r *run) Close() (*history.History, error) {
	if err := r.rec.Close(); err != nil {
		return nil, err
	}
	return history.ReadFile(filepath.Join(r.dir, lifecycle.HistoryFile))
}

// Logf writes a line to harness.log (lifecycle.Driver).
func (r *run) Logf(format string, args ...any) { r.log.Logf(format, args...) }

// Progress writes a line to harness.log and the console, at a time on the
// history's clock (lifecycle.Driver).
func (r *run) Progress(at time.Duration, format string, args ...any) {
	r.log.ProgressAt(at, format, args...)
}

// startAll starts every node and does the init handshakes. When all have
// answered (or one has failed), that moment is the run's zero: the meta
// event is recorded, the gate opens, and each node's start is recorded.
func (r *run) startAll(zero func(took time.Duration)) error {
	if err := r.findProgram(); err != nil {
		r.openGate(zero)
		return err
	}
	if err := r.checkClock(); err != nil {
		r.openGate(zero)
		return err
	}
	r.log.Progress("starting %d nodes", len(r.names))
	type started struct {
		i     int
		ready <-chan struct{}
		err   error
	}
	results := make(chan started, len(r.names))
	for i, n := range r.names {
		go func(m *member) {
			ready, err := r.startNode(m)
			results <- started{i, ready, err}
		}(r.members[n])
	}
	errs := make([]error, len(r.names))
	var readies []<-chan struct{}
	for range r.names {
		s := <-results
		errs[s.i] = s.err
		if s.ready != nil {
			readies = append(readies, s.ready)
		}
	}
	// One message, about the first node in ring order that failed, so that
	// the same failure always reads the same; the others are only named.
	var first error
	var others []string
	for i, err := range errs {
		switch {
		case err == nil:
		case first == nil:
			first = err
		default:
			others = append(others, r.names[i])
		}
	}
	if len(others) > 0 {
		first = fmt.Errorf("%w\n  %s failed to start too", first, nameList(others))
	}
	r.openGate(zero)
	for _, ready := range readies {
		<-ready
	}
	return first
}

// openGate makes now the run's zero: the meta event is recorded and the
// nodes' readers may record.
func (r *run) openGate(zero func(took time.Duration)) {
	// The reaper is told of the nodes' groups without their starts
	// waiting; a coup killed once they are up leaves none behind.
	proc.SyncReaper()
	r.zero = time.Now()
	zero(r.log.SetZero(r.zero))
	close(r.gate)
}

// Stop stops the workload and every process, drops what is still in
// flight, and returns the router's counters (lifecycle.Driver).
func (r *run) Stop() map[string]int64 {
	r.stopping.Store(true)
	r.clients.stop()
	var wg sync.WaitGroup
	for _, n := range r.names {
		wg.Add(1)
		go func(m *member) {
			defer wg.Done()
			_, _ = r.end(m, history.ProcStop)
		}(r.members[n])
	}
	wg.Wait()
	left := r.router.queue.close()
	for _, n := range r.names {
		left += r.members[n].box.close()
	}
	r.writers.Wait() // nothing is recorded after the run's end
	if left > 0 {
		r.router.mu.Lock()
		r.router.counts[history.CountInFlight] += int64(left)
		r.router.mu.Unlock()
	}
	debug.SetGCPercent(r.gc)
	return r.router.snapshot()
}

func (rt *router) snapshot() map[string]int64 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make(map[string]int64, len(rt.counts)+len(rt.sentBy)+1)
	for k, v := range rt.counts {
		out[k] = v
	}
	if rt.sent > 0 {
		out[history.CountSent] = rt.sent
	}
	for t, v := range rt.sentBy {
		out[history.CountSent+"."+t] = v
	}
	for name, m := range rt.r.members {
		if n := m.unsummed.Load(); n > 0 {
			out[history.CountUnsummed+"."+name] = n
		}
	}
	return out
}

func newRunID() string {
	var b [8]byte
	_, _ = cryptoRead(b[:])
	return hex.EncodeToString(b[:])
}

var cryptoRead = crand.Read

// logf writes a line to harness.log, on the history's clock once the run
// has its zero.
func (r *run) logf(format string, args ...any) { r.log.Logf(format, args...) }
