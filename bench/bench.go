package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The parts of the benchmark.
const (
	PartRouter  = "router"  // the probe without faults: relay, coup, coup recorded
	PartFaults  = "faults"  // the probe with the fault mix
	PartStartup = "startup" // many built-in nodes start and elect
	PartHistory = "history" // a large history read and checked
	PartProxy   = "proxy"   // round trips over TCP: direct, a plain forwarder, coup's fault proxy
	PartServers = "servers" // real etcd and ZooKeeper clusters: start to leader, without and with coup
)

// Parts lists every part, in the order they run.
var Parts = []string{PartRouter, PartFaults, PartProxy, PartStartup, PartSim, PartHistory, PartServers, PartEpisodes, PartExplore, PartHosts, PartDisk}

// DefaultParts are the parts that run when none are named: all but the
// servers and episodes parts, which need etcd and ZooKeeper installed
// and take tens of seconds of real elections and a few minutes of real
// runs, the explore part, whose campaigns take many minutes, and the
// disk part, which needs FUSE.
var DefaultParts = []string{PartRouter, PartFaults, PartProxy, PartStartup, PartSim, PartHistory}

// Config says what the benchmark measures and at what scale. The zero
// value of a field is its default.
type Config struct {
	// Coup is the command line of the coup program: the probe runs as
	// Coup + "bench-probe", the startup as Coup + "run", the history check
	// as Coup + "check".
	Coup []string
	// Probe, when set, is the probe's command line instead of Coup +
	// "bench-probe" (a test runs its own binary as the probe).
	Probe []string
	// ProxyProbe, when set, is the command line (Probe's shape) whose
	// tcp-proxy is the proxy part's fault proxy (default Probe): another
	// build's, with Baseline.
	ProxyProbe []string
	// Baseline, when set, is the command line of another build of coup:
	// the parts run with it too, in turns, and each figure it makes is
	// printed as a ratio (baseline.go). Only the parts that run coup as a
	// process can: startup, history and proxy, and sim, which runs the
	// other build's own sim part.
	Baseline []string
	// Parts are the parts to run (default: DefaultParts).
	Parts []string
	// Rounds is how many times each probe runs on each path, the paths
	// taking turns (default 3); the table gives medians.
	Rounds int
	// Warmup runs before each probe's measured Time (defaults 100ms and
	// 500ms); SteadyTime is the measured time at a steady rate (default
	// 1s, so that p99 rests on enough round trips).
	Warmup, Time, SteadyTime time.Duration
	// Window is the pipelined probe's number of pings outstanding
	// (default 64).
	Window int
	// Rate is the steady rows' messages per second through the router,
	// pings and echoes together (default 5000).
	Rate float64
	// Faults is the fault mix (default DefaultFaults).
	Faults *FaultMix
	// Nodes are the cluster sizes of the startup part (default 100, 300,
	// 1000); Algorithm the election they run (default chang-roberts).
	Nodes     []int
	Algorithm string
	// SimDir is the catalogue's folder (default scenarios), whose
	// scenarios and sim/ scenarios the sim part simulates, SimSeeds seeds
	// each (default 5).
	SimDir   string
	SimSeeds int
	// Events is the length of the history the history part generates
	// (default one million).
	Events int
	// Dir is the work folder (default a temporary one, removed at the
	// end). When it is given, the history part's history.jsonl is kept
	// in it.
	Dir string
	// Profile, when set, is a folder that receives CPU profiles: of the
	// harness during a pipelined probe without and with recording (one
	// more run of each), of the fault proxy's process and of the plain
	// forwarder's over the whole proxy part, of the harness starting the
	// startup part's largest cluster (to every node up), and of reading and
	// checking the history.
	Profile string
	// Progress receives a line per measurement (nil: none).
	Progress io.Writer
	// Runner makes the explore part's runners (coup bench gives the
	// drivers' own, drivers.Choose); ZooDir is the zoo's folder (default
	// scenarios/zoo), Zoo its bugs (default Zoo).
	Runner RunnerFunc
	ZooDir string
	Zoo    []ZooBug

	// simOther runs the sim part with Coup's own benchmark, as a child
	// process (a baseline's run: runSimOther).
	simOther bool
}

func (c *Config) defaults() error {
	if len(c.Coup) == 0 {
		return fmt.Errorf("no coup command")
	}
	if len(c.Probe) == 0 {
		c.Probe = append(append([]string(nil), c.Coup...), "bench-probe")
	}
	if len(c.ProxyProbe) == 0 {
		c.ProxyProbe = c.Probe
	}
	if len(c.Parts) == 0 {
		c.Parts = DefaultParts
	}
	for _, p := range c.Parts {
		if !slices.Contains(Parts, p) {
			return fmt.Errorf("unknown part %q (known: %s)", p, strings.Join(Parts, ", "))
		}
	}
	set := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	set(&c.Warmup, 100*time.Millisecond)
	set(&c.Time, 500*time.Millisecond)
	set(&c.SteadyTime, time.Second)
	if c.Rounds == 0 {
		c.Rounds = 3
	}
	if c.Window == 0 {
		c.Window = 64
	}
	if c.Rate == 0 {
		c.Rate = 5000
	}
	if c.Faults == nil {
		f := DefaultFaults
		c.Faults = &f
	}
	if len(c.Nodes) == 0 {
		c.Nodes = []int{100, 300, 1000}
	}
	if c.Algorithm == "" {
		c.Algorithm = "chang-roberts"
	}
	if c.Events == 0 {
		c.Events = 1_000_000
	}
	if c.SimDir == "" {
		c.SimDir = "scenarios"
	}
	if c.SimSeeds == 0 {
		c.SimSeeds = 5
	}
	if c.ZooDir == "" {
		c.ZooDir = filepath.Join("scenarios", "zoo")
	}
	if len(c.Zoo) == 0 {
		c.Zoo = Zoo
	}
	switch {
	case c.Rounds < 1:
		return fmt.Errorf("rounds: want at least 1, got %d", c.Rounds)
	case c.Window < 1 || c.Window > maxWindow:
		return fmt.Errorf("window: want 1 to %d, got %d", maxWindow, c.Window)
	case c.Rate < 2 || c.Rate > 1e6:
		return fmt.Errorf("rate: want 2 to 1000000 messages per second, got %g", c.Rate)
	case c.Events < 1000:
		return fmt.Errorf("events: want at least 1000, got %d", c.Events)
	case c.Time < 0 || c.Warmup < 0 || c.SteadyTime < 0:
		return fmt.Errorf("times must not be negative")
	}
	for _, n := range c.Nodes {
		if n < 1 {
			return fmt.Errorf("nodes: want at least 1, got %d", n)
		}
	}
	return nil
}

func (c *Config) has(part string) bool { return slices.Contains(c.Parts, part) }

// proxyProbe is the command line whose tcp-proxy is the fault proxy.
func (c *Config) proxyProbe() []string { return c.ProxyProbe }

// Results are everything one run of the benchmark measured.
type Results struct {
	Config Config
	Router []Case
	// Timer is how long a timer set for the fault mix's mean delay took
	// to fire in this process, idle but for it (median and p99 of
	// timerSamples): the floor under any delayed message.
	Timer [2]time.Duration

	// Proxy holds the proxy part's probes.
	Proxy []ProxyCase

	Startup []Startup
	// Sim holds the sim part's scenarios; SimOther, in a baseline's
	// results, the figures the other build printed.
	Sim      []SimCase
	SimOther *SimRates
	History  *HistoryFigures

	// Servers holds the servers part's programs, measured or skipped.
	Servers []ServerCase

	// Episodes holds the episodes part's programs, measured or skipped.
	Episodes []EpisodeCase

	// Explore holds the explore part's bugs.
	Explore []ZooCase

	// Hosts holds the hosts part's figures (nil when it did not run).
	Hosts *HostsCase
	// Disk holds the disk part's figures (disk.go).
	Disk *DiskCase
	// Baseline holds the figures of this build and of Config.Baseline's.
	Baseline []BaselineFigure
}

// Run runs the benchmark's parts and returns what they measured. The
// processes it starts are all ended when it returns. On an error, the
// results hold what was measured before it.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := cfg.checkBaseline(); err != nil {
		return nil, err
	}
	if len(cfg.Baseline) > 0 {
		return runBaseline(ctx, cfg)
	}
	res := &Results{Config: cfg}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "coup-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		// A server that runs as another user (Patroni's PostgreSQL, as
		// postgres) must reach its folder under this one: MkdirTemp's
		// 0700 kept every run of the zoo's Patroni bug from starting.
		if err := os.Chmod(d, 0o755); err != nil {
			return nil, err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if cfg.Profile != "" {
		if err := os.MkdirAll(cfg.Profile, 0o755); err != nil {
			return nil, err
		}
	}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	var cases []Case
	if cfg.has(PartRouter) {
		cases = append(cases, routerCases(&cfg, nil)...)
	}
	if cfg.has(PartFaults) {
		cases = append(cases, routerCases(&cfg, cfg.Faults)...)
		res.Timer = timerLateness(cfg.Faults.Delay + cfg.Faults.Jitter/2)
	}
	for i := range cases {
		if err := runCase(ctx, &cfg, &cases[i], dir, progress); err != nil {
			return res, err
		}
		res.Router = append(res.Router, cases[i])
	}
	if cfg.Profile != "" && cfg.has(PartRouter) {
		if err := profileRouter(ctx, &cfg, dir, progress); err != nil {
			return res, err
		}
	}
	if cfg.has(PartProxy) {
		pc, err := runProxyPart(ctx, &cfg, dir, progress)
		res.Proxy = pc
		if err != nil {
			return res, err
		}
	}
	if cfg.has(PartStartup) {
		for _, n := range cfg.Nodes {
			s, err := measureStartup(ctx, &cfg, n, dir)
			if err != nil {
				return res, fmt.Errorf("startup of %d nodes: %w", n, err)
			}
			progress("startup: %d nodes up in %s (%.2f× the bare start, %s); harness CPU %s (the launcher's %s); harness peak %s; %d nodes seen, %d left behind",
				n, s.Up().Round(time.Millisecond), s.Ratio(), s.BareUp().Round(time.Millisecond), s.CPU(), s.BareCPU(), mb(s.HarnessPeak()), len(s.NodePeaks()), s.LeftBehind())
			res.Startup = append(res.Startup, s)
		}
		if cfg.Profile != "" {
			n := slices.Max(cfg.Nodes)
			if err := profileStartup(ctx, &cfg, n, dir, filepath.Join(cfg.Profile, "startup.pprof")); err != nil {
				return res, fmt.Errorf("profile the startup of %d nodes: %w", n, err)
			}
		}
	}
	if cfg.has(PartSim) {
		var stop func()
		if cfg.Profile != "" {
			var err error
			if stop, err = startCPUProfile(filepath.Join(cfg.Profile, "sim.pprof")); err != nil {
				return res, err
			}
		}
		var err error
		if cfg.simOther {
			var r SimRates
			r, err = runSimOther(ctx, &cfg, progress)
			res.SimOther = &r
		} else {
			res.Sim, err = runSimPart(ctx, &cfg, progress)
		}
		if stop != nil {
			stop()
		}
		if err != nil {
			return res, fmt.Errorf("sim: %w", err)
		}
	}
	if cfg.has(PartHistory) {
		profile := ""
		if cfg.Profile != "" {
			profile = filepath.Join(cfg.Profile, "history-check.pprof")
		}
		h, err := runHistory(ctx, cfg.Coup, cfg.Probe, cfg.Events, dir, profile, cfg.Dir != "", progress)
		if err != nil {
			return res, fmt.Errorf("history: %w", err)
		}
		res.History = h
	}
	if cfg.has(PartServers) {
		sc, err := runServersPart(ctx, &cfg, dir, progress)
		res.Servers = sc
		if err != nil {
			return res, err
		}
	}
	if cfg.has(PartEpisodes) {
		ec, err := runEpisodesPart(ctx, &cfg, dir, progress)
		res.Episodes = ec
		if err != nil {
			return res, err
		}
	}
	if cfg.has(PartExplore) {
		zc, err := runExplorePart(ctx, &cfg, dir, progress)
		res.Explore = zc
		if err != nil {
			return res, err
		}
	}
	if cfg.has(PartHosts) {
		hc, err := runHostsPart(ctx, &cfg, progress)
		res.Hosts = hc
		if err != nil {
			return res, err
		}
	}
	if cfg.has(PartDisk) {
		dc, err := runDiskPart(ctx, dir, progress)
		res.Disk = dc
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// timerSamples is how many timers timerLateness sets.
const timerSamples = 200

// timerLateness sets timers for d, one after another, and returns the
// median and the 99th percentile of how long each took to fire.
func timerLateness(d time.Duration) [2]time.Duration {
	took := make([]int64, timerSamples)
	for i := range took {
		start := time.Now()
		time.Sleep(d)
		took[i] = int64(time.Since(start))
	}
	slices.Sort(took)
	return [2]time.Duration{time.Duration(percentile(took, 0.5)), time.Duration(percentile(took, 0.99))}
}

// mb writes bytes as megabytes, kb as kilobytes.
func mb(b int64) string   { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
func kb(b float64) string { return fmt.Sprintf("%.0f KB", b/1e3) }
