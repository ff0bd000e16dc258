package servers

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers/hostnet"
	"github.com/coupharness/coup/servers/proxy"
	"github.com/coupharness/coup/verdict"
)

// Options configure a run of real servers.
type Options struct {
	// Store is the store's root folder (default "store").
	Store string
	// Progress receives a line per phase of the run (nil: none).
	Progress io.Writer
	// Coup is the command that runs coup itself (default: this program),
	// for the built-in client's processes ("coup adapter etcd") when the
	// scenario asks for them (client_processes).
	Coup []string

	// sampler, when set, runs beside the polls from the run's zero until
	// it stops: a test's independent reading of the servers (the oracle
	// tests, oracle_test.go), asked from inside each host.
	sampler func(r *run)
}

// run is one run of a scenario of real servers: the driver of its
// lifecycle.
type run struct {
	sc   *scenario.Scenario
	sv   *scenario.Server
	opts Options
	ctx  context.Context
	dir  string
	rec  *history.Recorder
	life *lifecycle.Run
	nem  *nemesis.Nemesis
	// parts are the current run's (or episode's), as the lifecycle
	// assembled them: its clients' workload is theirs.
	parts *lifecycle.Parts

	// mu is the driver's lock: the nemesis's net (Cut, Decide) is read
	// under it by the proxies' policy, and changed under it by the
	// lifecycle.
	mu sync.Mutex

	// zero is the run's time origin, set once every server is up;
	// before it, observations wait in early.
	zeroMu  sync.Mutex
	zero    time.Time
	started bool
	early   []history.Event

	layout  *layout
	sockets string // the hosts' socket folders' parent (sockets.go)
	servers []*server
	byID    map[string]*server
	proxies []*proxy.Proxy

	// network is what carries the packets between hosts (netNamespaces
	// or netProxy), chosen as the run is made; netErr says why a scenario
	// that asks for namespaces cannot have them. net is coup's network
	// when it is the namespaces'.
	network string
	netErr  error
	net     *hostnet.Network

	obs      *observer
	clients  *clients  // nil without a workload
	adapters *adapters // the clients' processes, when they run as such
	stats    linkStats
	links    linkCounts // what each link carried since last recorded, under mu
	disks    diskCounts // what storage faults did (disk.go)
	polls    sync.WaitGroup
	stop     chan struct{}
	stopped  bool
	down     chan struct{} // a host went down on its own (hostDown)
	// prefix comes before every key the built-in clients use ("" in a
	// run of its own; an episode's, in a Session).
	prefix string

	log *lifecycle.Log // harness.log and the console

	// iso is what holds each host's processes, chosen once for the run;
	// isoErr says why the scenario's isolation cannot be had here.
	iso    *isolation
	isoErr error
	// unattributed is the last connection the proxies could not
	// attribute, as they said it (a failed start names it).
	unattributed atomic.Pointer[string]

	// A run that a Session keeps (keep) outlives its first lifecycle:
	// its Stop ends only the clients, and the cluster serves the next
	// episode (episode, resume). hist is the history's path (the
	// episode's); closed, between episodes, drops what is observed
	// (the observer still learns it); between is the log then.
	keep    bool
	up      bool
	closed  bool
	hist    string
	between *lifecycle.Log
}

// Run runs a scenario of real servers and returns its results and its
// store folder. Its lifecycle is the one every driver shares
// (lifecycle.Execute); this driver starts the servers, puts a fault proxy
// on every directed link between them, carries out the process faults
// with signals, and turns what the servers say of their leaders into the
// history's reports. When ctx is cancelled (Ctrl-C), the servers are
// stopped and the prefix recorded is checked.
func Run(ctx context.Context, sc *scenario.Scenario, opts Options) (*verdict.Results, string, error) {
	if sc.Server == nil {
		return nil, "", fmt.Errorf("scenario %s has no [server]: it runs under the pipe driver", sc.Name)
	}
	if opts.Store == "" {
		opts.Store = "store"
	}
	out, err := lifecycle.Execute(ctx, opts.Store, sc, func(f *lifecycle.Files, p *lifecycle.Parts) (*lifecycle.Run, error) {
		return newRun(sc, opts, f, p, f.Dir).life, nil
	})
	if out == nil {
		return nil, "", err
	}
	return out.Results, out.Dir, err
}

// newRun is the run of sc over its files, made of its parts; its servers
// keep their data and logs in dir (the run's folder; a Session's cluster
// folder).
func newRun(sc *scenario.Scenario, opts Options, f *lifecycle.Files, p *lifecycle.Parts, dir string) *run {
	r := &run{sc: sc, sv: sc.Server, opts: opts, dir: dir, byID: map[string]*server{}, stop: make(chan struct{}), down: make(chan struct{}, 1)}
	r.log = f.NewLog(opts.Progress)
	r.hist = filepath.Join(f.Dir, lifecycle.HistoryFile)
	r.rec = history.NewRecorder(f.History, func() int64 { return int64(r.Now()) }, false)
	r.iso, r.isoErr = chooseIsolation(sc.Server)
	r.network, r.netErr = chooseNetwork(sc.Server)
	p.Meta.Network = r.network
	r.life = r.newLife(sc, p)
	r.rec.Subscribe(func(e history.Event) { r.life.Watch(&e) })
	r.obs = newObserver(r)
	return r
}

// newLife builds the lifecycle of a run (or an episode) of sc from its
// parts, whose meta says what only this driver knows: the ready state it
// waits for and the isolation its hosts have (none when it cannot be
// had). The nemesis is the driver's from now on.
func (r *run) newLife(sc *scenario.Scenario, p *lifecycle.Parts) *lifecycle.Run {
	p.Meta.Ready = sc.Server.ReadyState // and the cluster's forming is watched (ready.go)
	if r.iso != nil {
		p.Meta.Isolation = r.iso.kind
	}
	life := p.New(r, lifecycle.Config{})
	r.mu.Lock()
	r.nem, r.parts = life.Nemesis(), p
	r.mu.Unlock()
	return life
}

var _ lifecycle.Driver = (*run)(nil)

// Start lays out the addresses, starts the client processes (when the
// clients are processes), the proxies and every node's host, and waits
// until each process accepts connections on its ready port
// (lifecycle.Driver). That moment, or the moment one of these steps
// failed, is the run's zero: a start that failed returns why, in coup's
// words or the server's (the end of its log), or that it was interrupted,
// and in which step. It then waits, when the scenario asks, until the
// cluster is seen ready (awaitReady).
func (r *run) Start(ctx context.Context, zero func(took time.Duration)) error {
	r.ctx = ctx
	if r.up {
		r.resume(zero) // a Session's cluster, up already
		return nil
	}
	step, err := r.startAll(ctx)
	proc.SyncReaper() // a coup killed once the servers are up leaves none behind
	r.zeroMu.Lock()
	r.zero = time.Now()
	r.zeroMu.Unlock()
	zero(r.logger().SetZero(r.zero))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w while %s", lifecycle.ErrInterrupted, step)
		}
		return fmt.Errorf("%w: %w%s", lifecycle.ErrNodeStart, err, r.startNote())
	}
	r.up = true
	for _, s := range r.servers {
		r.Record(history.Event{Kind: history.KindProcess, Node: s.id, What: history.ProcStart, Incarnation: s.incarnation()})
	}
	r.zeroMu.Lock()
	early := r.early
	r.early, r.started = nil, true
	r.zeroMu.Unlock()
	for _, e := range early {
		e.Time = 0
		r.rec.Record(e)
	}
	r.startPolls()
	if r.opts.sampler != nil {
		r.polls.Add(1)
		go func() {
			defer r.polls.Done()
			r.opts.sampler(r)
		}()
	}
	r.startLinkCounts()
	if err := r.setUp(ctx); err != nil {
		return fmt.Errorf("%w: %w", lifecycle.ErrNodeStart, err)
	}
	return r.awaitReady(ctx)
}

// startAll does Start's steps in order, up to the first that fails, and
// returns that step ("starting 3 servers (etcd)") with its error.
func (r *run) startAll(ctx context.Context) (string, error) {
	if step, err := r.buildServer(ctx); err != nil {
		return step, err
	}
	step := "checking that the storage layer can be had"
	if err := r.checkDisks(); err != nil {
		return step, err
	}
	step = "laying out the addresses"
	var err error
	switch {
	case r.netErr != nil:
		return step, r.netErr
	case r.network == netNamespaces:
		step = "making coup's network"
		if err := r.startNetwork(); err != nil {
			return step, fmt.Errorf("make coup's network (network = \"proxy\" runs without it): %w", err)
		}
		r.progress("network: coup's, a namespace and an address per host (%s); every packet between hosts crosses coup", hostnet.Subnet)
		if r.layout, err = newNetLayout(r.sc, r.dir, r.net); err != nil {
			return step, err
		}
	default:
		if r.layout, err = newLayout(r.sc, r.dir); err != nil {
			return step, err
		}
		why := "the scenario's network = \"proxy\""
		if r.sv.Network != netProxy {
			why = "namespaces cannot be had here: " + hostnet.Available().Error()
		}
		r.progress("network: loopback addresses, a TCP proxy per link (%s): %s", why, verdict.ProxyLoses)
	}
	r.obs.learnAddresses(r.layout.nodes)
	step = "making the hosts' socket folders"
	if err := r.makeSockets(); err != nil {
		return step, err
	}
	step = "choosing what holds the hosts' processes"
	if r.isoErr != nil {
		return step, r.isoErr
	}
	r.progress("hosts: %s isolation (%s)", r.iso.kind, r.iso.why)
	for i, node := range r.layout.nodes {
		s := newServer(r, node)
		if s.disk, err = r.newDisk(node, i); err != nil {
			return step, fmt.Errorf("%s's disk: %w", node.ID, err)
		}
		r.servers = append(r.servers, s)
		r.byID[node.ID] = s
	}
	step = "checking that the clock faults reach the servers"
	if err := r.checkClock(); err != nil {
		return step, err
	}
	r.clients = newClients(r)
	if r.clients != nil && r.sv.ClientsAreProcesses() {
		step = fmt.Sprintf("starting %s", console.Plural(r.sc.Workload.Clients, "client process", "client processes"))
		r.progress("%s", step)
		ads, err := r.startAdapters(ctx, r.sc.Workload.Clients)
		if err != nil {
			return step, err
		}
		r.adapters = ads
		r.clients.kv = ads
	}
	if r.net == nil {
		step = "starting the proxies"
		if err := r.startProxies(); err != nil {
			return step, fmt.Errorf("start the proxies: %w", err)
		}
	}
	step = fmt.Sprintf("starting %d servers (%s)", len(r.servers), r.sc.Algorithm)
	if n := len(r.sv.Sidecars); n > 0 {
		step = fmt.Sprintf("starting %d hosts (%s): a server and %s each", len(r.servers), r.sc.Algorithm, console.Plural(n, "sidecar", "sidecars"))
	}
	r.progress("%s", step)
	errs := make(chan error, len(r.servers))
	for _, s := range r.servers {
		go func() { errs <- s.start(ctx, false) }()
	}
	var first error
	for range r.servers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return step, first
}

// observed records an observation: at once once the run has started,
// else at its zero, after the servers' starts.
// Between a Session's episodes it is dropped.
func (r *run) observed(e history.Event) {
	r.zeroMu.Lock()
	if r.closed {
		r.zeroMu.Unlock()
		return
	}
	if !r.started {
		r.early = append(r.early, e)
		r.zeroMu.Unlock()
		return
	}
	rec := r.rec
	r.zeroMu.Unlock()
	rec.Record(e)
}

// Begin starts the workload's clients, when the scenario has a client for
// its servers (lifecycle.Driver).
func (r *run) Begin() {
	if r.clients != nil {
		r.clients.start()
	}
}

// Now is the time since the run's zero (lifecycle.Driver).
func (r *run) Now() time.Duration {
	r.zeroMu.Lock()
	z := r.zero
	r.zeroMu.Unlock()
	if z.IsZero() {
		return 0
	}
	return time.Since(z)
}

// Wait sleeps until t, or until the run has events for the nemesis
// (lifecycle.Driver).
func (r *run) Wait(ctx context.Context, t time.Duration) bool {
	return r.life.Sleep(ctx, t-r.Now())
}

// Lock and Unlock guard the nemesis's net, which the proxies read
// (lifecycle.Driver).
func (r *run) Lock() { r.mu.Lock() }

// Unlock releases the lock and, since the lifecycle may have changed the
// net under it, tells every proxy to look again at the links.
func (r *run) Unlock() {
	r.mu.Unlock()
	for _, p := range r.proxies {
		p.Changed()
	}
}

// Record records an event (lifecycle.Driver); between a Session's
// episodes, when there is no history, it records nothing.
func (r *run) Record(e history.Event) history.Event {
	r.zeroMu.Lock()
	rec := r.rec
	r.zeroMu.Unlock()
	if rec == nil {
		return e
	}
	return rec.Record(e)
}

// Stop stops the polls, every server and every proxy, and returns the
// counters of the end event (lifecycle.Driver). A run that a Session
// keeps stops only its clients: the cluster stays up for the next
// episode.
func (r *run) Stop() map[string]int64 {
	if r.keep {
		if r.clients != nil {
			r.clients.stop()
		}
		r.recordLinks()
		return r.stats.counts()
	}
	return r.shutdown()
}

// shutdown stops the polls, the clients, every server and every proxy,
// and returns the counters.
func (r *run) shutdown() map[string]int64 {
	r.zeroMu.Lock()
	if !r.stopped {
		r.stopped = true
		close(r.stop)
	}
	r.zeroMu.Unlock()
	r.polls.Wait()
	if r.clients != nil {
		r.clients.stop()
	}
	var wg sync.WaitGroup
	for _, s := range r.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.end(history.ProcStop)
		}()
	}
	wg.Wait()
	r.recordLinks() // the last part of a period, the counts' ticker stopped with the polls
	r.closeDisks()
	counts := r.stats.counts()
	r.disks.into(counts, r.sc.StorageFaults())
	// Closing a proxy resets what it holds, and ends the attributions
	// still under way (a connection of a server just killed): what is
	// then still open and unattributed is what the proxy failed to end.
	for _, p := range r.proxies {
		_ = p.Close()
		counts[history.CountLinkUnattributedOpen] += p.Stats().OpenUnattributed
	}
	if n := counts[history.CountLinkUnattributedOpen]; n > 0 {
		r.progress("WARNING: %s could not be attributed to a node and was still open at the end: faults may have missed it", console.Plural(int(n), "connection", "connections"))
	}
	r.netCounts(counts)
	r.closeNetwork()
	r.removeSockets()
	return counts
}

// Close closes the history and reads it back (lifecycle.Driver). A run
// that a Session keeps then records nothing until its next episode.
func (r *run) Close() (*history.History, error) {
	r.zeroMu.Lock()
	rec := r.rec
	if r.keep {
		r.rec, r.closed, r.log = nil, true, r.between
	}
	r.zeroMu.Unlock()
	if err := rec.Close(); err != nil {
		return nil, err
	}
	return history.ReadFile(r.hist)
}

// logger is the run's log: the episode's, or between a Session's
// episodes the Session's.
func (r *run) logger() *lifecycle.Log {
	r.zeroMu.Lock()
	defer r.zeroMu.Unlock()
	return r.log
}

// Logf writes a line to harness.log (lifecycle.Driver).
func (r *run) Logf(format string, args ...any) { r.logger().Logf(format, args...) }

// Progress writes a line to harness.log and the console, at a time on the
// history's clock (lifecycle.Driver).
func (r *run) Progress(at time.Duration, format string, args ...any) {
	r.logger().ProgressAt(at, format, args...)
}

// logf writes a line to harness.log, and progress there and to the
// console, stamped now: on the history's clock once the run has its zero.
func (r *run) logf(format string, args ...any)     { r.logger().Logf(format, args...) }
func (r *run) progress(format string, args ...any) { r.logger().Progress(format, args...) }
