package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/coupharness/coup/drivers"
	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/sim"
	"github.com/coupharness/coup/verdict"
)

const shrinkUsage = `usage: coup shrink [flags] FILE

Shrinks a failing scenario to a smaller one that fails the same way (the
same signature), on the driver coup run would use: real node processes,
or real servers for a scenario with [server]; --sim shrinks on the
simulator instead, as coup sim --shrink does.

It first runs the scenario --runs times and takes the failure seen most
often. Then it tries smaller scenarios: fewer faults, repeated faults made
into their occurrences, a fault's time made into the event that explains
it (a leader change, a lock grant), fewer nodes and clients, shorter and
weaker faults, a shorter run. Real runs do not replay, so each candidate
runs several times, and is kept when it fails the same way often enough,
by a sequential rule (docs/explore.md, "Shrinking"). At the end the shrunk
scenario, read back from --out, runs --runs fresh times: its header says
how often it failed the same way, and one failing history is written
beside it (FILE.history.jsonl for FILE.toml).

Every real run is kept in the store. Ctrl-C stops the shrink and writes the
best scenario so far, unmeasured (exit 3); a second Ctrl-C stops at once.

exit codes: 0 shrunk, and the shrunk scenario failed the same way in a
fresh run; 1 it did not; 2 usage or input error, or no run failed; 3
interrupted, or no run could be carried out.

flags:
`

// shrinkFlags are coup shrink's flags.
type shrinkFlags struct {
	runs   int
	budget shrinkBudget
	out    string
	store  string
	quiet  bool
	sim    bool
}

// shrinkBudget is --budget: a number of runs, or a wall time.
type shrinkBudget struct {
	runs int
	time time.Duration
}

func (b *shrinkBudget) String() string {
	switch {
	case b == nil || (b.runs == 0 && b.time == 0):
		return ""
	case b.time > 0:
		return b.time.String()
	}
	return strconv.Itoa(b.runs)
}

func (b *shrinkBudget) Set(s string) error {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return fmt.Errorf("%d runs: want at least 1", n)
		}
		*b = shrinkBudget{runs: n}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: want a number of runs (150) or a positive wall time (30m)", s)
	}
	*b = shrinkBudget{time: d}
	return nil
}

func shrinkCmd(args []string) int {
	var f shrinkFlags
	fs := newFlags("shrink")
	fs.IntVar(&f.runs, "runs", explore.DefaultRuns, "runs that find the failure first, and fresh runs that measure the shrunk scenario at the end")
	fs.Var(&f.budget, "budget", fmt.Sprintf("the most runs the shrink spends in all, `N` (the runs that find the failure and the fresh runs at the end included), or its wall time such as 30m, the fresh runs included (default: %d runs for candidates, %d with --sim, and those on top)", explore.DefaultRealBudget, explore.DefaultBudget))
	fs.StringVar(&f.out, "out", sim.DefaultShrunk, "where to write the shrunk scenario")
	fs.StringVar(&f.store, "store", defaultStore(), storeUsage)
	fs.BoolVar(&f.quiet, "quiet", false, "print no progress, only the steps and the outcome")
	fs.BoolVar(&f.sim, "sim", false, "shrink on the simulator (built-in algorithms): exact, one run per candidate and seed")
	files, code, ok := parseArgs(fs, shrinkUsage, args)
	if !ok {
		return code
	}
	if len(files) != 1 {
		return usageError(fs, shrinkUsage, "one scenario file at a time")
	}
	if f.runs < 1 {
		return usageError(fs, shrinkUsage, "--runs %d: want at least 1", f.runs)
	}
	sc, err := scenario.Load(files[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	d, _ := drivers.Choose(sc, drivers.Real) // the real driver is always had
	opts := drivers.Options{Store: f.store}
	if f.sim {
		if _, err := sim.FromScenario(sc, sc.Seed); err != nil {
			fmt.Fprintf(os.Stderr, "coup shrink: %v\n", err)
			return verdict.ExitInput
		}
		d, opts = drivers.Driver{Name: drivers.Sim}, drivers.Options{} // a thousand candidates are not stored
	}
	r, err := d.Runner(sc, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup shrink: %v\n", err)
		return verdict.ExitInput
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A second signal kills every process and leaves at once.
		<-ctx.Done()
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		<-again
		proc.KillAll()
		fmt.Fprintln(os.Stderr, "\ncoup shrink: a second signal: every process was killed; stopping now (exit 3)")
		os.Exit(verdict.ExitUnknown)
	}()
	c := explore.ShrinkLoopConfig{
		Runs: f.runs, BudgetRuns: f.budget.runs, BudgetTime: f.budget.time, Out: f.out, Quiet: f.quiet, Sim: f.sim,
		Stdout: os.Stdout, Stderr: os.Stderr, Terminal: isTerminal(os.Stdout),
	}
	if f.sim {
		c.Fresh = &sim.Runner{Options: sim.Options{Store: f.store}} // this run is stored, its history copied
	}
	return explore.ShrinkLoop(ctx, sc, r, c)
}
