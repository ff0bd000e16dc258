package harness

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

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
	dir   string
	runID string
	rec   *history.Recorder
	start time.Time // the history's time origin
	zero  time.Time // the scenario's time origin: every node is up

	names   []string
	members map[string]*member
	router  *router
	clients *clients

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
	dir, err := newRunDir(opts.Store, sc.Name, time.Now())
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

	r := &run{sc: sc, opts: opts, dir: dir, runID: newRunID(), log: logf, members: map[string]*member{}}
	r.start = time.Now()
	r.rec = history.NewRecorder(hf, func() int64 { return int64(time.Since(r.start)) }, true)
	r.names = sc.NodeNames()
	for _, n := range r.names {
		r.members[n] = &member{name: n, outbox: make(chan delivery, OutboxSize)}
	}
	src := rand.New(rand.NewPCG(uint64(sc.Seed), 0x6e6574)) // the network's stream
	r.router = &router{
		r: r, record: sc.RecordMessages(), counts: map[string]int64{},
		net:   nemesis.NewNet(sc.Network.Latency.D, sc.Network.Jitter.D, sc.Network.IsFIFO(), src),
		queue: newDelayQueue(),
	}
	w, timeout := newWorkload(sc)
	r.clients = &clients{r: r, w: w, timeout: timeout, pending: map[int]*pendingOp{}}

	r.rec.Record(history.Event{Kind: history.KindMeta, Meta: meta(sc)})
	runErr := r.execute(ctx)
	r.shutdown()
	if runErr == nil {
		r.rec.Record(history.Event{Kind: history.KindEnd, Counts: r.router.snapshot()})
	}
	if err := r.rec.Close(); err != nil {
		return nil, dir, err
	}
	h, err := history.FromEvents(r.rec.Events())
	if err != nil {
		return nil, dir, err
	}
	res, err := Evaluate(h)
	if err != nil {
		return nil, dir, err
	}
	if runErr != nil {
		res.Error = runErr.Error()
		res.compare()
		if errors.Is(runErr, errNodeStart) {
			res.ExitCode = ExitInput
		}
	}
	if err := writeResults(dir, res); err != nil {
		return res, dir, err
	}
	if err := writeCheckFiles(dir, res); err != nil {
		return res, dir, err
	}
	if err := linkLatest(dir); err != nil {
		return res, dir, err
	}
	return res, dir, nil
}

// errNodeStart wraps the failure of a node to start or to answer init:
// the node program is missing or does not speak the protocol.
var errNodeStart = errors.New("a node failed to start")

// errInterrupted is the run's error when its context was cancelled.
var errInterrupted = fmt.Errorf("interrupted")

// execute starts the nodes, runs the workload and the faults, heals and
// waits out the recovery window.
func (r *run) execute(ctx context.Context) error {
	for _, m := range r.members {
		go r.write(m)
	}
	r.progress("starting %d nodes", len(r.names))
	errs := make(chan error, len(r.names))
	for _, n := range r.names {
		go func(m *member) { errs <- r.startNode(m) }(r.members[n])
	}
	var first error
	for range r.names {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return fmt.Errorf("%w: %w", errNodeStart, first)
	}
	r.zero = time.Now()
	r.progress("nodes up; running for %s", r.sc.Duration.D)
	r.clients.start()
	plan := nemesis.Plan(faults(r.sc))
	if err := r.perform(ctx, plan); err != nil {
		return err
	}
	if !sleepUntil(ctx, r.zero.Add(r.sc.Duration.D)) {
		return errInterrupted
	}
	r.progress("healing; recovery window %s", r.sc.Recovery.D)
	if !sleepUntil(ctx, r.zero.Add(r.sc.Duration.D+r.sc.Recovery.D)) {
		return errInterrupted
	}
	return nil
}

// perform carries out the nemesis's plan, in time order.
func (r *run) perform(ctx context.Context, plan []nemesis.Action) error {
	for _, a := range plan {
		if !sleepUntil(ctx, r.zero.Add(a.At)) {
			return errInterrupted
		}
		r.rec.Record(history.Event{Kind: history.KindNemesis, What: a.Kind, Phase: history.PhaseStart, Nodes: a.Nodes})
		if err := nemesis.Apply(a, r); err != nil {
			r.logf("nemesis: %s: %v", a, err)
		}
		r.progress("nemesis: %s", a)
	}
	return nil
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
	if left := r.router.queue.close(); left > 0 {
		r.router.mu.Lock()
		r.router.counts["messages.in_flight_at_end"] += int64(left)
		r.router.mu.Unlock()
	}
}

func (rt *router) snapshot() map[string]int64 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make(map[string]int64, len(rt.counts))
	for k, v := range rt.counts {
		out[k] = v
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

func meta(sc *scenario.Scenario) *history.Meta {
	m := &history.Meta{
		Scenario: sc.Name, File: sc.File, Algorithm: sc.Algorithm,
		Nodes: sc.NodeNames(), IDs: sc.IDs, Seed: sc.Seed,
		Termination: int64(sc.Checks.Termination.D), Progress: int64(sc.Checks.Progress.D), Checks: sc.Checks.Run, Params: sc.Params,
		Checksums: sc.ChecksumsOn(),
		Expect:    &history.Expect{Valid: sc.Expect.ExpectValid(), Violations: sc.Expect.Violations},
	}
	if spec, ok := lookupSpec(sc); ok {
		m.Elects = spec.Elects
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

func faults(sc *scenario.Scenario) []nemesis.Fault {
	out := make([]nemesis.Fault, len(sc.Faults))
	for i, f := range sc.Faults {
		out[i] = nemesis.Fault{Kind: f.Kind, Nodes: []string{f.Target}, At: f.At.D}
	}
	return out
}

// newWorkload returns the scenario's workload and how long its clients
// wait for an answer.
func newWorkload(sc *scenario.Scenario) (workloads.Workload, time.Duration) {
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

func writeResults(dir string, res *Results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, ResultsFile), append(b, '\n'), 0o644)
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
