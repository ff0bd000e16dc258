package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/coupharness/coup/drivers"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/lifecycle"
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

// runCatalogue runs the scenarios, each o.repeat times, and returns the
// exit code. Everything it prints about a run matches that run's exit
// code, and the last thing it prints matches its own.
func runCatalogue(scs []*scenario.Scenario, o runOptions) int {
	var plan []catalogue.Run
	runs := map[int]*scenario.Scenario{}
	for _, sc := range scs {
		for i := 1; i <= o.repeat; i++ {
			runs[len(plan)] = sc
			plan = append(plan, catalogue.Planned(sc.Name, sc.File, i, o.repeat))
		}
	}
	many := len(plan) > 1
	cat := catalogue.New(time.Now(), plan)
	current := ""
	out := console.NewStatus(os.Stdout, many && console.IsTerminal(os.Stdout), func() string {
		return statusLine(cat, current)
	})
	defer out.Close()
	// Write the files once before the first run: a path that cannot be
	// written is a usage error, found at once.
	save := func() error {
		if many {
			if err := cat.WriteSummary(o.store); err != nil {
				return err
			}
		}
		if o.junit != "" {
			return cat.WriteJUnitFile(o.junit)
		}
		return nil
	}
	if err := save(); err != nil {
		out.Close()
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	saveFailed := false

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

	opts := drivers.Options{Store: o.store}
	if !o.quiet {
		opts.Progress = console.PrintableWriter{W: out}
	}
	// last is the last run carried out: the one a signal cut short, or the
	// one recorded before it came.
	var last *lastRun
	for i, p := range plan {
		if ctx.Err() != nil {
			break
		}
		sc := runs[i]
		out.Set(func() { current = sc.Name })
		if p.Of > 1 {
			out.Printf("%s (run %d of %d)\n", sc.File, p.Repeat, p.Of)
		} else {
			out.Printf("%s\n", sc.File)
		}
		start := time.Now()
		var res *verdict.Results
		var dir string
		var err error
		d, _ := drivers.Choose(sc, drivers.Real) // the real driver is always had
		res, dir, err = d.Run(ctx, sc, opts)
		if err != nil {
			// The run has no verdict to trust: it could not be carried
			// out, or its results could not be saved.
			res = nil
			out.Printf("%s: no verdict: %s (exit %d)\n", console.Printable(sc.Name), console.Printable(err.Error()), verdict.ExitUnknown)
		} else if res.NotStarted() {
			// One message, the cause, where an error belongs: no verdict.
			fmt.Fprintf(os.Stderr, "coup: %s: %s\n", console.Printable(sc.File), console.PrintableLines(res.Error))
		} else {
			out.Printf("%s", res.Summary())
		}
		if dir != "" {
			out.Printf("  store: %s\n", console.Printable(absPath(dir)))
			if report := reportOf(dir); report != "" {
				out.Printf("  report: %s\n", console.Printable(report))
			}
		}
		last = &lastRun{res: res}
		run := p.Finish(res, dir, start, time.Since(start), err)
		out.Set(func() {
			cat.Record(i, run, time.Now())
			current = ""
		})
		if err := save(); err != nil && !saveFailed {
			saveFailed = true
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		}
	}
	interrupted := ctx.Err() != nil
	out.Set(func() { cat.Stop(interrupted, time.Now()) })
	if err := save(); err != nil && !saveFailed {
		saveFailed = true
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
	}
	out.Close()
	code := cat.ExitCode
	if saveFailed {
		code = catalogue.Worst(code, verdict.ExitUnknown)
	}
	if many {
		printTally(&cat.Summary, code, o)
	}
	switch {
	case interrupted:
		line := last.interrupted(cat.Totals.Runs)
		if n := cat.Totals.NotRun; n > 0 {
			line += fmt.Sprintf("; %d of %d runs not carried out", n, cat.Totals.Runs)
		}
		fmt.Fprintf(os.Stderr, "coup: %s (exit %d)\n", line, code)
	case saveFailed:
		fmt.Fprintf(os.Stderr, "coup: the summary or JUnit file could not be written (exit %d)\n", code)
	}
	return code
}

// lastRun is the last run a catalogue carried out; res is nil when it
// has no results (it could not be carried out, or not saved).
type lastRun struct{ res *verdict.Results }

// interrupted says what a signal left of the last run (which, of a
// catalogue of one, is "the run"): cut short and judged on its prefix,
// stopped before its nodes were up, or recorded before the signal came,
// when its verdict stands; a run without a verdict is never said to have
// one.
func (l *lastRun) interrupted(runs int) string {
	the := "the last run"
	if runs == 1 {
		the = "the run"
	}
	switch {
	case l == nil:
		return "interrupted before the first run"
	case l.res == nil:
		return fmt.Sprintf("interrupted; %s has no verdict", the)
	case l.res.StartInterrupted():
		return fmt.Sprintf("interrupted before %s's nodes were up: it has no verdict", the)
	case l.res.NotStarted():
		return fmt.Sprintf("interrupted after %s failed to start: it has no verdict", the)
	case !l.res.Complete:
		return "interrupted: the nodes were stopped and the recorded prefix checked"
	}
	return fmt.Sprintf("interrupted after %s had been recorded; its verdict stands", the)
}

// statusLine is the progress line: runs done of all, the counts, the
// time, the run under way; cut to fit a narrow terminal.
func statusLine(cat *catalogue.Catalogue, current string) string {
	t := cat.Totals
	done := t.Runs - t.NotRun
	s := fmt.Sprintf("[%d/%d] %d as expected", done, t.Runs, t.AsExpected)
	if t.Unexpected > 0 {
		s += fmt.Sprintf(", %d unexpected", t.Unexpected)
	}
	if t.Unknown > 0 {
		s += fmt.Sprintf(", %d unknown", t.Unknown)
	}
	if t.FailedToStart > 0 {
		s += fmt.Sprintf(", %d failed to start", t.FailedToStart)
	}
	s += fmt.Sprintf(" · %s", time.Since(cat.Started).Round(time.Second))
	if current != "" {
		s += " · running " + console.Printable(current)
	}
	const width = 79
	if r := []rune(s); len(r) > width {
		s = string(r[:width-1]) + "…"
	}
	return s
}

// printTally prints, after a catalogue, each scenario's runs by outcome
// and a last line with the totals and the exit code.
func printTally(s *catalogue.Summary, code int, o runOptions) {
	fmt.Println("\nsummary:")
	type count struct {
		name, file                              string
		ok, unexpected, unknown, failed, notRun int
	}
	var order []string
	counts := map[string]*count{}
	for _, r := range s.Runs {
		c, ok := counts[r.File]
		if !ok {
			c = &count{name: r.Scenario, file: r.File}
			counts[r.File] = c
			order = append(order, r.File)
		}
		switch {
		case r.Outcome == catalogue.NotRun:
			c.notRun++
		case r.ExitCode == verdict.ExitOK:
			c.ok++
		case r.ExitCode == verdict.ExitUnexpected:
			c.unexpected++
		case r.ExitCode == verdict.ExitInput:
			c.failed++
		default:
			c.unknown++
		}
	}
	for _, f := range order {
		c := counts[f]
		line := fmt.Sprintf("  %-40s %d/%d as expected", console.Printable(c.name), c.ok, o.repeat)
		for _, part := range []struct {
			n    int
			what string
		}{{c.unexpected, "unexpected"}, {c.unknown, "unknown"}, {c.failed, "failed to start"}, {c.notRun, "not run"}} {
			if part.n > 0 {
				line += fmt.Sprintf(", %d %s", part.n, part.what)
			}
		}
		fmt.Println(line)
	}
	t := s.Totals
	fmt.Printf("%d runs: %d as expected, %d unexpected, %d unknown, %d failed to start, %d not run (exit %d)\n",
		t.Runs, t.AsExpected, t.Unexpected, t.Unknown, t.FailedToStart, t.NotRun, code)
	fmt.Printf("summary.json: %s\n", console.Printable(absPath(filepath.Join(o.store, catalogue.SummaryFile))))
	if o.junit != "" {
		fmt.Printf("JUnit: %s\n", console.Printable(absPath(o.junit)))
	}
	printReports(s.Runs)
}

// printReports ends a catalogue's summary with the reports a person opens
// next: that of each run not as expected, or, when every run was, that of
// the last run. A run without a report (not carried out, or stopped
// before its nodes were up) is left out.
func printReports(runs []catalogue.Run) {
	var odd []string
	last := ""
	for _, r := range runs {
		report := ""
		if r.Store != "" {
			report = reportOf(r.Store)
		}
		if report == "" {
			continue
		}
		last = report
		if r.ExitCode != verdict.ExitOK {
			odd = append(odd, report)
		}
	}
	switch {
	case len(odd) == 1:
		fmt.Printf("report of the run not as expected: %s\n", console.Printable(odd[0]))
	case len(odd) > 1:
		fmt.Printf("reports of the %d runs not as expected:\n", len(odd))
		for _, r := range odd {
			fmt.Printf("  %s\n", console.Printable(r))
		}
	case last != "":
		fmt.Printf("report of the last run: %s\n", console.Printable(last))
	}
}

// reportOf is the absolute path of the report in a run's store folder, or
// "" when the run wrote none.
func reportOf(dir string) string {
	p := absPath(filepath.Join(dir, lifecycle.ReportFile))
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return p
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
