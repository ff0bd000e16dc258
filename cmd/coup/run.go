package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/coupharness/coup/drivers"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
	"github.com/coupharness/coup/verdict/catalogue"
)

const runUsage = `usage: coup run [flags] FILE|DIR...

Runs each scenario with real node processes (a DIR runs every *.toml in
it, in name order), checks its history, prints the verdict and stores the
run in STORE/<scenario>/<timestamp>/, and ends with the absolute path of
its report.html. A run over several scenarios, or with --repeat, also
writes STORE/summary.json; --junit writes a JUnit XML file for CI
(docs/ci.md). STORE is --store, else $COUP_STORE, else store/ at the root
of the git checkout (or Go module) that holds the working folder, else
./store.

--seed and --set override the scenario files' keys, and are validated as
the files are:
  coup run --seed 3 scenarios/bully-coordinator-paused.toml
  coup run --set nodes=9 --set network.latency=5ms scenarios/chang-roberts.toml
  coup run --set faults[0].at=100ms --set workload.rate=50 FILE

Ctrl-C stops the run, kills every node and checks the recorded prefix (exit
3); before every node is up, there is nothing to check (exit 3); a second
Ctrl-C stops at once.

exit codes: 0 every run as expected, 1 one was not, 2 usage or input error
(or a run whose nodes did not all start: the error says why), 3 no verdict.

flags:
`

// setFlag is a --seed or --set as the command line wrote it, in order.
type setFlag struct{ key, value, flag string }

// runOptions are coup run's flags.
type runOptions struct {
	store  string
	repeat int
	quiet  bool
	junit  string
	sets   []setFlag
}

// newRunFlags makes coup run's flag set, bound to the options it fills.
func newRunFlags() (*flag.FlagSet, *runOptions) {
	fs := newFlags("run")
	o := &runOptions{}
	fs.StringVar(&o.store, "store", defaultStore(), storeUsage)
	fs.IntVar(&o.repeat, "repeat", 1, "run each scenario `N` times")
	fs.BoolVar(&o.quiet, "quiet", false, "print only the verdicts, no progress lines")
	fs.StringVar(&o.junit, "junit", "", "write a JUnit XML `file`: one test case per run")
	fs.Func("seed", "run with seed `S` instead of the scenario's (same as --set seed=S)", func(v string) error {
		o.sets = append(o.sets, setFlag{"seed", v, "--seed " + v})
		return nil
	})
	fs.Func("set", "set a scenario `key=value` over the file's (dotted for tables: network.latency=5ms, faults[0].at=1s); repeatable", func(v string) error {
		o.sets = append(o.sets, setFlag{"", v, "--set " + v})
		return nil
	})
	return fs, o
}

func runCmd(args []string) int {
	fs, o := newRunFlags()
	files, code, ok := parseArgs(fs, runUsage, args)
	if !ok {
		return code
	}
	if len(files) == 0 {
		return usageError(fs, runUsage, "no scenario given")
	}
	if o.repeat < 1 {
		return usageError(fs, runUsage, "--repeat %d: want at least 1", o.repeat)
	}
	overrides, err := o.overrides()
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	paths, err := scenarioFiles(files)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	// Load every scenario before running any, so that a typo in the last
	// file does not wait for the first to finish.
	var scs []*scenario.Scenario
	bad := false
	for _, f := range paths {
		sc, err := scenario.Load(f, overrides...)
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
			bad = true
			continue
		}
		scs = append(scs, sc)
	}
	if bad {
		return verdict.ExitInput
	}
	return runCatalogue(scs, *o)
}

// overrides checks the --seed and --set flags, in order.
func (o *runOptions) overrides() ([]scenario.Override, error) {
	var out []scenario.Override
	for _, s := range o.sets {
		var ov scenario.Override
		var err error
		if s.key != "" {
			ov, err = scenario.NewOverride(s.key, s.value, s.flag)
		} else {
			ov, err = scenario.ParseSet(s.value)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ov)
	}
	return out, nil
}

// runCatalogue runs the scenarios, each o.repeat times, on their real
// drivers (catalogue.RunAll), and returns the exit code. A first signal
// stops the catalogue; a second kills the nodes and leaves at once.
func runCatalogue(scs []*scenario.Scenario, o runOptions) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A second signal kills the nodes and leaves at once; the history
		// on disk is still a checkable prefix.
		<-ctx.Done()
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		<-again
		proc.KillAll()
		fmt.Fprintln(os.Stderr, "\ncoup: a second signal: the nodes were killed; stopping now, without a verdict (exit 3)")
		os.Exit(verdict.ExitUnknown)
	}()
	return catalogue.RunAll(ctx, scs, catalogue.Options{
		Store: o.store, Repeat: o.repeat, JUnit: o.junit, Quiet: o.quiet,
		Out: os.Stdout, Err: os.Stderr, Terminal: isTerminal(os.Stdout),
		Run: func(ctx context.Context, sc *scenario.Scenario, progress io.Writer) (*verdict.Results, string, error) {
			d, _ := drivers.Choose(sc, drivers.Real) // the real driver is always had
			return d.Run(ctx, sc, drivers.Options{Store: o.store, Progress: progress})
		},
	})
}

// scenarioFiles expands directories into their *.toml files, sorted.
func scenarioFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("%s: no such file or directory", a)
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(a, "*.toml"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("%s: no *.toml scenarios in this folder", a)
		}
		sort.Strings(matches)
		out = append(out, matches...)
	}
	return out, nil
}
