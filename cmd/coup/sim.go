package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/sim"
	"github.com/coupharness/coup/verdict"
)

const simUsage = `usage: coup sim [flags] FILE
  coup sim FILE                      simulate a scenario with its seed; save it in the store
  coup sim FILE --seed S             replay seed S
  coup sim FILE --seeds N [--first]  sweep seeds S, S+1, ... S+N-1 (S: --seed, or the scenario's)
      [--strategy random|pct[:D]|bias|portfolio] [--shard k/n] [--out RESULTS.jsonl]
  coup sim merge RESULTS.jsonl...    combine a sweep's shards; one replay per kind of failure
  coup sim FILE --seed S --shrink [--budget N] [--out shrunk.toml]
                                     shrink a failing run to a smaller scenario that fails the same way
  coup sim FILE --check-determinism  run a seed twice and compare the history hashes
  coup sim --bench [--seeds N] FILE|DIR...
                                     measure deliveries per second and virtual/real time
flags:
`

// simFlags are the flags of coup sim.
type simFlags struct {
	seed        int64
	seedSet     bool
	seeds       int
	first       bool
	determinism bool
	store       string
	workers     int
	quiet       bool
	bench       bool
	roundTrip   bool
	strategy    sim.Strategy
	shrink      bool
	budget      int
	shard       string
	out         string
	budgetSet   bool
}

func simCmd(args []string) int {
	if len(args) > 0 && args[0] == "merge" {
		return simMerge(args[1:])
	}
	var f simFlags
	fs := newFlags("sim")
	fs.Func("seed", "the seed to run (default: the scenario's)", func(s string) error {
		_, err := fmt.Sscan(s, &f.seed)
		f.seedSet = err == nil
		return err
	})
	fs.IntVar(&f.seeds, "seeds", 0, "sweep this many seeds from the first")
	fs.BoolVar(&f.first, "first", false, "stop a sweep at the first seed not as expected")
	fs.BoolVar(&f.determinism, "check-determinism", false, "run each seed twice and compare the hashes of the histories")
	fs.StringVar(&f.store, "store", defaultStore(), storeUsage)
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "seeds simulated at once in a sweep")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar or progress lines")
	fs.BoolVar(&f.bench, "bench", false, "measure the simulator on scenarios (one core)")
	fs.BoolVar(&f.roundTrip, "round-trip", false, "pass every message through the algorithm's JSON codec, as real nodes do")
	fs.Func("strategy", "how each seed explores the scenario's open choices: random, pct[:D], bias or portfolio (default random)", func(s string) error {
		st, err := sim.ParseStrategy(s)
		f.strategy = st
		return err
	})
	fs.BoolVar(&f.shrink, "shrink", false, "shrink the run of the seed to a smaller scenario that fails the same way, written to --out (default shrunk.toml)")
	fs.IntVar(&f.budget, "budget", sim.DefaultBudget, "the most simulations a shrink spends")
	fs.StringVar(&f.shard, "shard", "", "run only part k of n (k/n, from 1/n to n/n) of the sweep's seeds")
	fs.StringVar(&f.out, "out", "", "a sweep writes each seed's result to this JSON-lines file; a shrink writes the shrunk scenario to it (default shrunk.toml)")
	files, code, ok := parseArgs(fs, simUsage, args)
	if !ok {
		return code
	}
	fs.Visit(func(fl *flag.Flag) { f.budgetSet = f.budgetSet || fl.Name == "budget" })
	if f.bench {
		return simBench(f, files)
	}
	if len(files) != 1 || f.seeds < 0 || f.workers < 1 || f.budget < 1 {
		fs.Usage()
		return verdict.ExitInput
	}
	if msg := f.conflicts(); msg != "" {
		fmt.Fprintf(os.Stderr, "coup sim: %s\n", msg)
		return verdict.ExitInput
	}
	sc, err := scenario.Load(files[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	if _, err := sim.FromScenario(sc, sc.Seed); err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	if !f.seedSet {
		f.seed = sc.Seed
	}
	opts := sim.Options{RoundTrip: f.roundTrip, Strategy: f.strategy}
	switch {
	case f.shrink:
		return sim.ShrinkSeed(sc, sim.ShrinkSeedConfig{Seed: f.seed, Strategy: f.strategy, Budget: f.budget, Out: f.out, Quiet: f.quiet, Stdout: os.Stdout, Stderr: os.Stderr})
	case f.seeds > 0:
		shard, shards := 1, 1
		if f.shard != "" {
			var err error
			if shard, shards, err = explore.ParseShard(f.shard); err != nil {
				fmt.Fprintf(os.Stderr, "coup sim: --shard: %v\n", err)
				return verdict.ExitInput
			}
		}
		return sim.Sweep(sc, sim.SweepConfig{
			Seed: f.seed, Seeds: f.seeds, Shard: shard, Shards: shards, Workers: f.workers,
			First: f.first, Determinism: f.determinism, Strategy: f.strategy, Quiet: f.quiet,
			Out: f.out, Build: build(), Stdout: os.Stdout, Stderr: os.Stderr,
		}, opts)
	case f.determinism:
		return simDeterminism(sc, f, opts)
	}
	return simOne(sc, f, opts)
}

// conflicts says what is wrong with a combination of flags, or "".
func (f *simFlags) conflicts() string {
	switch {
	case f.shrink && (f.seeds > 0 || f.determinism):
		return "--shrink shrinks one seed's run: give --seed, not --seeds or --check-determinism"
	case f.shard != "" && f.seeds == 0:
		return "--shard splits a sweep: give --seeds N too"
	case f.out != "" && !f.shrink && f.seeds == 0:
		return "--out is for a sweep (--seeds N) or a shrink (--shrink)"
	case f.budgetSet && !f.shrink:
		return "--budget bounds a shrink: give --shrink too"
	}
	return ""
}

// simOne simulates one seed, saves it in the store and prints its verdict.
func simOne(sc *scenario.Scenario, f simFlags, opts sim.Options) int {
	opts.Store = f.store
	out, err := sim.Simulate(sc, f.seed, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %s: %v\n", sc.File, err)
		return verdict.ExitUnknown
	}
	strategy := ""
	if turn := f.strategy.For(f.seed); !turn.IsRandom() {
		strategy = ", strategy " + turn.String()
	}
	fmt.Printf("%s (simulated, seed %d%s)\n", sc.File, f.seed, strategy)
	fmt.Print(out.Results.Summary())
	if sig := explore.Signature(out.Results, out.History); sig != "" {
		fmt.Printf("  signature: %s\n", sig)
	}
	fmt.Printf("  store: %s\n", out.Dir)
	fmt.Printf("  history sha256 %s (sha256sum of its history.jsonl)\n", sim.Short(out.Hash))
	fmt.Printf("  simulated %s in %s: %d deliveries\n", out.Stats.Virtual, out.Wall.Round(time.Microsecond), out.Stats.Delivered)
	fmt.Printf("  replay: %s\n", sim.Replay(sc.File, f.seed, f.strategy))
	return out.Results.ExitCode
}

// simDeterminism runs one seed twice and compares the hashes.
func simDeterminism(sc *scenario.Scenario, f simFlags, opts sim.Options) int {
	out, err := sim.Twice(sc, f.seed, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %s: %v\n", sc.File, err)
		return verdict.ExitUnknown
	}
	fmt.Printf("%s, seed %d: valid=%s, %s\n", sc.File, f.seed, out.Results.Valid, out.Results.Outcome)
	fmt.Printf("  first run:  history sha256 %s\n", out.Hash)
	fmt.Printf("  second run: history sha256 %s\n", out.Rehash)
	if out.Hash != out.Rehash {
		fmt.Println("  NOT deterministic: the same seed gave two different histories")
		return verdict.ExitUnexpected
	}
	fmt.Println("  deterministic: the same seed gave the same history")
	return verdict.ExitOK
}

// build names this coup build: its module version or commit (marked
// "+dirty" when built from a changed tree) and the Go release.
func build() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return runtime.Version()
	}
	version := info.Main.Version
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		version = rev
		if dirty {
			version += "+dirty"
		}
	}
	return version + " " + info.GoVersion
}

// simBench simulates scenarios for a few seeds each, on one core, and
// prints deliveries per second and virtual time per real time.
func simBench(f simFlags, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, "usage: coup sim --bench [--seeds N] [--seed S] FILE|DIR...\n")
		return verdict.ExitInput
	}
	files, err := scenarioFiles(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	n := f.seeds
	if n == 0 {
		n = 20
	}
	runtime.GOMAXPROCS(1) // the figures are for one core
	fmt.Println("deliveries per second of processor time on one core (\"with checks\": the checks' time counted too);")
	fmt.Println("virtual time simulated per unit of wall time, checks aside")
	fmt.Printf("%-38s %5s %10s %13s %13s %12s\n", "scenario", "runs", "deliveries", "deliveries/s", "with checks", "virtual/wall")
	var total sim.Figures
	for _, file := range files {
		sc, err := scenario.Load(file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
			return verdict.ExitInput
		}
		from := sc.Seed
		if f.seedSet {
			from = f.seed
		}
		figs, err := sim.Bench(sc, from, n)
		if errors.Is(err, sim.ErrNotSimulable) {
			fmt.Printf("%-38s skipped: not a state machine (a foreign program, or real processes only)\n", sc.Name)
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup: %s: %v\n", file, err)
			return verdict.ExitUnknown
		}
		printFigures(sc.Name, figs)
		total.Add(figs)
	}
	printFigures("total", total)
	return verdict.ExitOK
}

func printFigures(name string, f sim.Figures) {
	fmt.Printf("%-38s %5d %10d %13.0f %13.0f %11.0fx\n", name, f.Runs, f.Delivered, f.DeliveriesPerSecond(), f.DeliveriesPerSecondChecked(), f.Speedup())
}
