package harness

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"coup/checks"
	"coup/harness/history"
	"coup/harness/scenario"
	"coup/nemesis"
	"coup/nodes"
	"coup/nodes/algorithms"
	"coup/workloads"
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
	sc    *scenario.Scenario
	opts  Options
	ctx   context.Context // ends when the run is interrupted
	dir   string
	runID string
	rec   *history.Recorder
	start time.Time // when the run began, for the harness's log
	// zero is when every node is up: the time origin of the history, of
	// the scenario's times and of the nemesis. It is set once, before the
	// gate opens.
	zero time.Time
	// gate is closed at zero, once the meta event is recorded: node
	// readers record nothing before.
	gate chan struct{}

	names   []string
	members map[string]*member
	router  *router
	clients *clients
	nem     *nemesis.Nemesis
	watch   *watcher
	refused refusals
	writers sync.WaitGroup // the members' writers

	logMu sync.Mutex
	log   *os.File
}

// Run runs a scenario with real processes and returns its results. The
// error is for a run that could not be carried out at all (no store); a run
// whose nodes fail to start still returns results, with Error set. When ctx
// is cancelled (Ctrl-C), the run stops early, its processes are killed, and
// the prefix it recorded is checked.
func Run(ctx context.Context, sc *scenario.Scenario, opts Options) (*Results, string, error) {
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
	dir, err := NewRunDir(opts.Store, sc.Name, time.Now())
	if err != nil {
		return nil, "", err
	}
	hf, err := os.Create(filepath.Join(dir, HistoryFile))
	if err != nil {
		return nil, dir, fmt.Errorf("create history: %w", err)
	}
	defer hf.Close()
	logf, err := os.Create(filepath.Join(dir, HarnessLog))
	if err != nil {
		return nil, dir, fmt.Errorf("create harness log: %w", err)
	}
	defer logf.Close()

	r := &run{sc: sc, opts: opts, ctx: ctx, dir: dir, runID: newRunID(), log: logf, members: map[string]*member{}, gate: make(chan struct{})}
	r.start = time.Now()
	// The recorder keeps nothing: whatever the nodes send, the run's memory
	// does not grow with its history. The history is read back from the
	// file for the checks, at disk speed.
	r.rec = history.NewRecorder(hf, func() int64 { return int64(time.Since(r.zero)) }, false)
	r.names = sc.NodeNames()
	for _, n := range r.names {
		r.members[n] = &member{name: n, box: newOutbox(OutboxSize)}
	}
	r.nem = nemesis.New(nemesis.Config{
		Nodes: r.names, Faults: sc.NemesisFaults(), Duration: sc.Duration.D, Seed: sc.Seed,
		Latency: sc.Network.Latency.D, Jitter: sc.Network.Jitter.D, FIFO: sc.Network.IsFIFO(),
	})
	r.watch = newWatcher()
	r.rec.Subscribe(r.watch.push)
	r.router = &router{r: r, record: sc.RecordMessages(), limit: sc.MessageLimit(), counts: map[string]int64{}, sentBy: map[string]int64{}, nem: r.nem, queue: newDelayQueue()}
	w, timeout := NewWorkload(sc)
	r.clients = &clients{r: r, w: w, timeout: timeout, pending: map[int]*pendingOp{}, known: map[string]bool{}, ended: map[int]*pendingOp{}}

	// The router allocates a little per message and keeps almost nothing:
	// a heap allowed to grow further between collections costs the
	// messages less. Reading the history back keeps a great deal, so the
	// usual setting is back by then.
	gc := debug.SetGCPercent(400)
	runErr := r.execute(ctx)
	r.shutdown()
	debug.SetGCPercent(gc)
	if runErr == nil {
		r.rec.Record(history.Event{Kind: history.KindEnd, Counts: r.router.snapshot()})
	}
	if err := r.rec.Close(); err != nil {
		return nil, dir, err
	}
	h, err := history.ReadFile(filepath.Join(dir, HistoryFile))
	if err != nil {
		return nil, dir, err
	}
	var res *Results
	if errors.Is(runErr, errNodeStart) {
		// Nothing ran, so there is nothing to judge: verdicts here would
		// only hide the cause.
		res = notStarted(h, runErr)
	} else {
		res, err = Evaluate(h)
		if err != nil {
			return nil, dir, err
		}
		if runErr != nil {
			res.Error = runErr.Error()
			res.compare()
		}
	}
	if err := Save(dir, res, h, r.logf); err != nil {
		return res, dir, err
	}
	return res, dir, nil
}

// errNodeStart marks the failure of a node to start or to answer init:
// the node program is missing or does not speak the protocol.
var errNodeStart = errors.New("a node failed to start")

// notStarted is the results of a run whose nodes did not all start: no
// check judged it, the outcome is unknown and the exit code is an input
// error's. Error holds the one message that says why.
func notStarted(h *history.History, err error) *Results {
	m := &h.Meta
	res := &Results{
		Schema: ResultsSchema, Scenario: m.Scenario, File: m.File, Algorithm: m.Algorithm, Seed: m.Seed,
		Valid: checks.Unknown, Expected: history.Expect{Valid: true}, Outcome: Unknown, ExitCode: ExitInput,
		Checks: map[string]checks.Result{}, Order: []string{}, Stats: computeStats(h), Complete: h.Ended,
		Skipped: h.Bad, Error: strings.TrimPrefix(err.Error(), errNodeStart.Error()+": "),
	}
	if m.Expect != nil {
		res.Expected = *m.Expect
	}
	return res
}

// NotStarted reports whether the run could not be carried out because a
// node failed to start: no check judged it, and Error says why.
func (r *Results) NotStarted() bool { return r.Error != "" && len(r.Order) == 0 }

// errInterrupted is the run's error when its context was cancelled.
var errInterrupted = fmt.Errorf("interrupted")

// execute starts the nodes, runs the workload and the faults, heals and
// waits out the recovery window.
func (r *run) execute(ctx context.Context) error {
	for _, m := range r.members {
		r.writers.Add(1)
		go func() {
			defer r.writers.Done()
			r.write(m)
		}()
	}
	if err := r.startAll(); err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return fmt.Errorf("%w: %w", errNodeStart, err)
	}
	r.progress("nodes up; running for %s", r.sc.Duration.D)
	if err := r.inject(ctx, r.clients.start); err != nil {
		return err
	}
	// The recovery window counts from the end of the heal, so that every
	// nemesis event is at least a window before the end of the run.
	healed := max(r.now(), r.sc.Duration.D)
	r.progress("healed; recovery window %s", r.sc.Recovery.D)
	if !sleepUntil(ctx, r.zero.Add(healed+r.sc.Recovery.D)) {
		return errInterrupted
	}
	return nil
}

// startAll starts every node and does the init handshakes. When all have
// answered (or one has failed), that moment is the run's zero: the meta
// event is recorded, the gate opens, and each node's start is recorded.
func (r *run) startAll() error {
	r.progress("starting %d nodes", len(r.names))
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
	r.zero = time.Now()
	r.rec.Record(history.Event{Kind: history.KindMeta, Meta: RunMeta(r.sc)})
	close(r.gate)
	for _, ready := range readies {
		<-ready
	}
	return first
}

// shutdown stops the workload and every process, and drops what is still in
// flight.
func (r *run) shutdown() {
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
		r.router.counts[CountInFlight] += int64(left)
		r.router.mu.Unlock()
	}
}

func (rt *router) snapshot() map[string]int64 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make(map[string]int64, len(rt.counts)+len(rt.sentBy)+1)
	for k, v := range rt.counts {
		out[k] = v
	}
	if rt.sent > 0 {
		out[CountSent] = rt.sent
	}
	for t, v := range rt.sentBy {
		out[CountSent+"."+t] = v
	}
	return out
}

// sleepUntil waits until t, and reports false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// RunMeta is the meta event of a run of sc (real or simulated). The
// history's time origin is the run's zero, so the GST is the timely fault's
// at, as it is.
func RunMeta(sc *scenario.Scenario) *history.Meta {
	m := &history.Meta{
		Scenario: sc.Name, File: sc.File, Algorithm: sc.Algorithm, Workload: sc.Workload.Kind,
		Nodes: sc.NodeNames(), IDs: sc.IDs, Seed: sc.Seed,
		Termination: int64(sc.Checks.Termination.D), Progress: int64(sc.Checks.Progress.D), Checks: sc.Checks.Run, Params: sc.Params,
		Checksums:     sc.ChecksumsOn(),
		Stabilisation: int64(sc.Checks.Stabilisation.D),
		StaleLeader:   int64(sc.Checks.StaleLeader.D),
		Expect:        &history.Expect{Valid: sc.Expect.ExpectValid(), Violations: sc.Expect.Violations},
	}
	if gst, ok := sc.GST(); ok {
		m.GST = int64(gst)
	}
	m.Elects = sc.ElectsRule()
	if spec, ok := lookupSpec(sc); ok && sc.Command == nil {
		if spec.Bound != nil {
			initiators := 0
			if sc.Workload.Kind == "election" {
				initiators = len(sc.Workload.Initiators)
			}
			m.MessageBound = int64(spec.Bound(sc.Nodes, initiators))
		}
	}
	return m
}

// NewWorkload returns the scenario's workload and how long its clients
// wait for an answer (for real runs and simulated ones).
func NewWorkload(sc *scenario.Scenario) (workloads.Workload, time.Duration) {
	w, timeout := &sc.Workload, sc.Workload.Timeout.D
	if timeout <= 0 {
		timeout = scenario.DefaultOpTimeout
	}
	switch w.Kind {
	case "election":
		return &workloads.Election{Initiators: w.Initiators, At: w.At.D}, timeout
	case "mutex":
		return &workloads.Mutex{Clients: w.Clients, Nodes: w.Targets, Rate: w.Rate, Hold: w.Hold.D,
			At: w.At.D, Until: sc.Duration.D, Seed: sc.Seed}, timeout
	case scenario.WorkloadLinKV:
		mix := workloads.Mix{Read: 1, Write: 1, Cas: 1}
		if w.Mix != nil {
			mix = workloads.Mix{Read: w.Mix.Read, Write: w.Mix.Write, Cas: w.Mix.Cas}
		}
		return &workloads.KV{Clients: w.Clients, Nodes: w.Targets, Rate: w.Rate, Keys: w.Keys, Values: w.Values, Mix: mix,
			At: w.At.D, Until: sc.Duration.D, Seed: sc.Seed}, timeout
	case scenario.WorkloadEcho:
		return &workloads.Echo{Clients: w.Clients, Nodes: w.Targets, Rate: w.Rate,
			At: w.At.D, Until: sc.Duration.D, Seed: sc.Seed}, timeout
	}
	return workloads.None{}, timeout
}

func newRunID() string {
	var b [8]byte
	_, _ = cryptoRead(b[:])
	return hex.EncodeToString(b[:])
}

var cryptoRead = crand.Read

// lookupSpec finds the built-in algorithm a scenario names, if any.
func lookupSpec(sc *scenario.Scenario) (nodes.Spec, bool) {
	return algorithms.Lookup(sc.Algorithm)
}

func (r *run) logf(format string, args ...any) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	fmt.Fprintf(r.log, "%s "+format+"\n", append([]any{time.Since(r.start).Round(time.Microsecond)}, args...)...)
}

func (r *run) progress(format string, args ...any) {
	r.logf(format, args...)
	if r.opts.Progress != nil {
		fmt.Fprintf(r.opts.Progress, "  [%6.3fs] %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
	}
}
