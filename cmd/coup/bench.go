package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/coupharness/coup/bench"
	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

const benchUsage = `usage: coup bench [flags]
  measure coup's own speed: the router against a minimal relay (with and
  without recording, and with a fault mix), the fault proxy against a plain
  TCP forwarder, the start of many nodes, and reading and checking a large
  history; with --only servers, how long real etcd and ZooKeeper clusters
  take to elect a leader without and with coup; with --only episodes, the
  runs per hour of etcd and ZooKeeper with a fresh cluster per run against
  episodes on one long-lived cluster; with --only explore, the runs random
  and guided campaigns take to find each bug of the zoo (scenarios/zoo/),
  with --zoo only the bugs named; with --only hosts (root), a TCP stream
  and a UDP ping-pong between two hosts through coup's network against a
  veth pair, and how long a host takes to make; with --only disk, fsync
  latency and sequential write throughput through coup's storage layer
  against the same folder directly; with --baseline PATH and --only, the
  same parts with another build of coup too, in turns, each figure as a
  ratio to its; docs/performance.md explains the tables
flags:
`

func benchCmd(args []string) int {
	fs := newFlags("bench")
	only := fs.String("only", "", "run only these parts, comma-separated: "+strings.Join(bench.Parts, ", ")+" (default: all but servers, episodes, explore, hosts and disk)")
	rounds := fs.Int("rounds", 3, "rounds of each probe on each path (the table gives medians)")
	warmup := fs.Duration("warmup", 0, "warm-up before each probe's measured time (default 100ms)")
	measure := fs.Duration("time", 0, "measured time of each pipelined and one-at-a-time probe (default 500ms)")
	steady := fs.Duration("steady-time", 0, "measured time of each steady-rate probe (default 1s)")
	window := fs.Int("window", 64, "pings outstanding in the pipelined probe")
	rate := fs.Float64("rate", 5000, "messages per second through the router in the steady-rate probe (pings and echoes)")
	nodes := fs.String("nodes", "100,300,1000", "cluster sizes of the startup part, comma-separated")
	algo := fs.String("algorithm", "chang-roberts", "the election the startup part's nodes run")
	catalogue := fs.String("scenarios", "scenarios", "the catalogue's folder, whose scenarios (and sim/ scenarios) the sim part simulates")
	simSeeds := fs.Int("sim-seeds", 5, "seeds of each scenario the sim part simulates")
	events := fs.Int("events", 1_000_000, "events in the history of the history part")
	dir := fs.String("dir", "", "work folder, kept with the history the history part generates (default: a temporary one, removed)")
	profile := fs.String("cpuprofile", "", "write CPU profiles of the harness and of reading and checking the history to this folder")
	quiet := fs.Bool("quiet", false, "print only the table, not a line per measurement")
	zoo := fs.String("zoo", "", "the explore part's bugs, comma-separated file names of the zoo (scenarios/zoo/, e.g. redis-power-failure-everysec.toml); needs --only explore (default: every bug)")
	baseline := fs.String("baseline", "", "another coup executable: run the parts named with --only (startup, history, proxy, sim) with it too, in turns, and print each figure as a ratio to its")
	pos, code, ok := parseArgs(fs, benchUsage, args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return usageError(fs, benchUsage, "coup bench takes no files: %s", strings.Join(pos, " "))
	}
	for _, c := range []struct {
		name string
		bad  bool
	}{
		{"--rounds", *rounds < 1}, {"--sim-seeds", *simSeeds < 1}, {"--window", *window < 1}, {"--rate", !(*rate > 0)}, {"--events", *events < 1},
		{"--warmup", *warmup < 0}, {"--time", *measure < 0}, {"--steady-time", *steady < 0},
	} {
		if c.bad {
			fmt.Fprintf(os.Stderr, "coup: bench: %s must be positive\n%s", c.name, benchUsage)
			return verdict.ExitInput
		}
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: find the coup executable: %v\n", err)
		return verdict.ExitUnknown
	}
	cfg := bench.Config{
		Coup: []string{exe}, Rounds: *rounds, Warmup: *warmup, Time: *measure, SteadyTime: *steady,
		Window: *window, Rate: *rate, Algorithm: *algo, SimDir: *catalogue, SimSeeds: *simSeeds, Events: *events, Dir: *dir, Profile: *profile,
		Runner: func(sc *scenario.Scenario, store string) (explore.Runner, error) {
			return pickRunner(sc, exploreFlags{store: store})
		},
	}
	if *only != "" {
		cfg.Parts = strings.Split(*only, ",")
	}
	if *zoo != "" {
		if !slices.Contains(cfg.Parts, bench.PartExplore) {
			return usageError(fs, benchUsage, "--zoo needs --only explore: it chooses the explore part's bugs")
		}
		bugs, err := bench.ZooNamed(strings.Split(*zoo, ","))
		if err != nil {
			return usageError(fs, benchUsage, "--zoo: %v", err)
		}
		cfg.Zoo = bugs
	}
	if *baseline != "" {
		if *only == "" {
			return usageError(fs, benchUsage, "--baseline needs --only: the parts to run with both builds (startup, history, proxy, sim)")
		}
		path, err := exec.LookPath(*baseline)
		if err != nil {
			return usageError(fs, benchUsage, "--baseline: %v", err)
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		cfg.Baseline = []string{path}
	}
	for _, f := range strings.Split(*nodes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup: --nodes: %q is not a number\n", f)
			return verdict.ExitInput
		}
		cfg.Nodes = append(cfg.Nodes, n)
	}
	if !*quiet {
		cfg.Progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Run(ctx, cfg)
	if res != nil {
		res.Print(os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: bench: %v\n", err)
		if res == nil {
			return verdict.ExitInput
		}
		return verdict.ExitUnknown
	}
	return verdict.ExitOK
}

func benchProbeCmd(args []string) int { return bench.ProbeMain(args) }
