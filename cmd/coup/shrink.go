package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coupharness/coup/drivers"
	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/lifecycle"
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

// DefaultShrunkHistory is the failing history written beside a shrunk
// scenario: its name with .history.jsonl for .toml.
func shrunkHistory(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".history.jsonl"
}

func shrinkCmd(args []string) int {
	var f shrinkFlags
	fs := newFlags("shrink")
	fs.IntVar(&f.runs, "runs", explore.DefaultRuns, "runs that find the failure first, and fresh runs that measure the shrunk scenario at the end")
	fs.Var(&f.budget, "budget", fmt.Sprintf("the most runs the shrink spends in all, `N` (the runs that find the failure and the fresh runs at the end included), or its wall time such as 30m, the fresh runs included (default: %d runs for candidates, %d with --sim, and those on top)", explore.DefaultRealBudget, explore.DefaultBudget))
	fs.StringVar(&f.out, "out", DefaultShrunk, "where to write the shrunk scenario")
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
	return shrinkRun(ctx, sc, r, f)
}

// shrinkRun finds the scenario's failure, shrinks it, writes the shrunk
// scenario and measures it.
func shrinkRun(ctx context.Context, sc *scenario.Scenario, r explore.Runner, f shrinkFlags) int {
	exact := r.Exact()
	line := ""
	out := console.NewStatus(os.Stdout, !f.quiet && console.IsTerminal(os.Stdout), func() string { return line })
	defer out.Close()
	show := func(s string) { out.Set(func() { line = s }) }
	start := time.Now()

	// The failure: the commonest in --runs runs (one on the simulator).
	n := f.runs
	if exact {
		n = 1
	}
	// The budget counts every run: those that find the failure, the
	// candidates' and the fresh runs that confirm the shrunk scenario.
	if f.budget.runs > 0 && f.budget.runs <= 2*n {
		out.Close()
		fmt.Fprintf(os.Stderr, "coup shrink: --budget %d: the budget counts the %d runs that find the failure and the %d fresh runs that confirm the shrunk scenario; give more than %d\n", f.budget.runs, n, n, 2*n)
		return verdict.ExitInput
	}
	kept := keptSignature(sc.File)
	out.Printf("%s: finding its failure in %d %s (%s)\n", console.Printable(sc.File), n, plural(n, "run"), r.Name())
	m, err := explore.Measure(ctx, r, sc, n, "", kept, func(i int, sig string, err error) {
		show(fmt.Sprintf("run %d of %d · %s", i, n, time.Since(start).Round(time.Second)))
		if !f.quiet && !exact {
			out.Printf("  run %d: %s\n", i, runOutcome(sig, err))
		}
	})
	if err != nil {
		out.Close()
		fmt.Fprintf(os.Stderr, "coup shrink: %s: no run could be carried out: %s\n", console.Printable(sc.File), console.Printable(err.Error()))
		return verdict.ExitUnknown
	}
	if ctx.Err() != nil {
		out.Close()
		fmt.Fprintf(os.Stderr, "coup shrink: interrupted before a failure was found; nothing written (exit 3)\n")
		return verdict.ExitUnknown
	}
	if m.Run == nil {
		out.Close()
		fmt.Fprintf(os.Stderr, "coup shrink: %s: no run of %d found a violation: nothing to shrink; more --runs may show a rare failure, coup explore finds one\n", console.Printable(sc.File), m.Rate.Runs)
		return verdict.ExitInput
	}
	out.Printf("it fails as: %s, in %s runs\n", console.Printable(m.Signature), m.Rate)
	if tied, less := otherWays(m); tied+less > 0 {
		var parts []string
		if tied > 0 {
			why := "the first seen"
			if m.Signature == kept {
				why = "the one " + filepath.Base(sc.File) + " was kept for"
			}
			parts = append(parts, fmt.Sprintf("%d other %s as often: shrinking %s", tied, plural(tied, "way"), why))
		}
		if less > 0 {
			parts = append(parts, fmt.Sprintf("%d other %s less often", less, plural(less, "way")))
		}
		out.Printf("  (and %s)\n", strings.Join(parts, "; "))
	}
	if kept != "" && m.Signature != kept {
		out.Printf("  (%s was kept for %s, which these runs showed less often or not at all)\n", filepath.Base(sc.File), console.Printable(kept))
	}

	opts := explore.ShrinkOptions{
		Budget: f.budget.runs - 2*n, RunTime: time.Since(start) / time.Duration(max(m.Rate.Runs, 1)),
		Signature: m.Signature, First: m.Run, Rate: m.Rate,
		Log: func(step string) { out.Printf("  %s\n", step) },
		Tried: func(t explore.Trial) {
			if f.quiet || exact {
				return
			}
			what := "dropped"
			switch {
			case t.Undecided:
				what = "undecided (the shrink stopped), dropped"
			case t.Kept:
				what = "kept"
			}
			out.Printf("  candidate %d: %s, %s, %s: %s, %d of %d %s the same way · %d runs, %s\n", t.Candidate,
				console.Plural(t.Faults, "fault", "faults"), console.Plural(t.Nodes, "node", "nodes"), t.Duration, what,
				t.Same, t.Tried, plural(t.Tried, "run"), t.Runs, (time.Since(start)).Round(time.Second))
		},
		Progress: func(p explore.Progress) {
			s := fmt.Sprintf("[%d/%d runs] candidate %d", p.Runs, p.Budget, p.Candidates)
			if !exact {
				s += fmt.Sprintf(": %d of %d the same way", p.Same, p.Tried)
			}
			show(s + fmt.Sprintf(" · %d faults, %d nodes · %s", p.Faults, p.Nodes, time.Since(start).Round(time.Second)))
		},
	}
	if f.budget.runs == 0 {
		opts.Budget = 0 // the default: DefaultRealBudget (DefaultBudget on the simulator) candidates' runs
	}
	if f.budget.time > 0 {
		// The time bounds the shrink, its fresh runs included: as many as
		// the runs that found the failure, each as long on average.
		opts.Budget = math.MaxInt32
		opts.Time = f.budget.time - time.Since(start) - time.Duration(n)*opts.RunTime
		if opts.Time <= 0 {
			opts.Time = time.Nanosecond // no candidate: straight to the fresh runs
		}
	}
	var budget string
	switch {
	case f.budget.time > 0:
		budget = fmt.Sprintf("%s in all, the %d fresh runs included: %s for candidates", f.budget.time, n, opts.Time.Round(time.Second))
	case f.budget.runs > 0:
		budget = fmt.Sprintf("%d runs in all, the %d that found the failure and the %d fresh runs included: %d for candidates", f.budget.runs, n, n, opts.Budget)
	default:
		c := explore.DefaultRealBudget
		if exact {
			c = explore.DefaultBudget
		}
		budget = fmt.Sprintf("%d runs for candidates", c)
	}
	out.Printf("shrinking (budget %s)\n", budget)
	res, err := explore.Shrink(ctx, r, sc, opts)
	if err != nil {
		out.Close()
		fmt.Fprintf(os.Stderr, "coup shrink: %s: %v\n", console.Printable(sc.File), err)
		return verdict.ExitUnknown
	}
	res.Finish(sc.Name)
	res.Scenario.Command = scenario.CommandMovedTo(sc.File, res.Scenario.Command, f.out)
	out.Printf("shrunk in %d runs (%s from the first run)", res.Runs, time.Since(start).Round(time.Second))
	switch {
	case res.Interrupted:
		out.Printf(": interrupted; the best scenario so far follows")
	case res.Exhausted:
		out.Printf(": the budget ran out; a larger --budget may shrink further")
	}
	out.Printf("\n%s", res.SizeTable("  "))

	// The file as written, run as a user will run it: loaded from disk.
	head := shrinkHeader{sc: sc, res: res, runner: r.Name(), path: f.out, flags: f}
	if err := head.write(); err != nil {
		out.Close()
		fmt.Fprintf(os.Stderr, "coup shrink: write the shrunk scenario: %v\n", err)
		return verdict.ExitUnknown
	}
	if res.Interrupted {
		copyHistory(res.Run, shrunkHistory(f.out))
		out.Close()
		fmt.Printf("wrote %s, not measured (interrupted)\n", f.out)
		return verdict.ExitUnknown
	}
	written, err := scenario.Load(f.out)
	if err != nil {
		out.Close()
		fmt.Fprintf(os.Stderr, "coup shrink: the shrunk scenario does not load: %v\n", err)
		return verdict.ExitUnknown
	}
	out.Printf("measuring: %d fresh %s of %s\n", n, plural(n, "run"), f.out)
	start = time.Now()
	if exact {
		r = &sim.Runner{Options: sim.Options{Store: f.store}} // this run is stored, its history copied
	}
	fresh, err := explore.Measure(ctx, r, written, n, res.Signature, "", func(i int, sig string, err error) {
		show(fmt.Sprintf("fresh run %d of %d · %s", i, n, time.Since(start).Round(time.Second)))
		if !f.quiet && !exact {
			out.Printf("  run %d: %s\n", i, runOutcome(sig, err))
		}
	})
	if err != nil && ctx.Err() == nil {
		out.Close()
		fmt.Fprintf(os.Stderr, "coup shrink: %s: no fresh run could be carried out: %s\n", f.out, console.Printable(err.Error()))
		return verdict.ExitUnknown
	}
	if fresh != nil {
		head.fresh = &fresh.Rate
		head.interrupted = ctx.Err() != nil
		if fresh.Run != nil {
			head.history = shrunkHistory(f.out)
			copyHistory(fresh.Run, head.history)
		}
		if err := head.write(); err != nil {
			out.Close()
			fmt.Fprintf(os.Stderr, "coup shrink: write the shrunk scenario: %v\n", err)
			return verdict.ExitUnknown
		}
	}
	out.Close()
	switch {
	case fresh == nil || ctx.Err() != nil:
		fmt.Printf("wrote %s; the fresh runs were interrupted\n", f.out)
		return verdict.ExitUnknown
	case fresh.Rate.Same == 0:
		fmt.Printf("wrote %s; it did NOT fail the same way in %d fresh %s\n", f.out, n, plural(n, "run"))
		return verdict.ExitUnexpected
	case exact:
		fmt.Printf("wrote %s (seed %d); it fails the same way: coup sim %s\n", f.out, written.Seed, console.ShellQuote(f.out))
	default:
		fmt.Printf("wrote %s; it fails the same way in %s fresh runs; a failing history is %s\n", f.out, fresh.Rate, head.history)
	}
	return verdict.ExitOK
}

// runOutcome says how a run ended, for a progress line: plainly, when it
// did not fail (it was as expected, or failed only the expectation).
func runOutcome(sig string, err error) string {
	switch {
	case err != nil:
		return "not carried out: " + console.Printable(err.Error())
	case sig == "":
		return "as expected, no violation"
	case strings.HasPrefix(sig, "no violation: "):
		return "did not fail: " + console.Printable(strings.TrimPrefix(sig, "no violation: "))
	case strings.HasPrefix(sig, "no violation"):
		return "did not fail: no check found a violation, and one was expected"
	case !explore.Violated(sig):
		return "no verdict: " + console.Printable(sig)
	}
	return "fails as " + console.Printable(sig)
}

// otherWays counts the ways a measure's runs failed besides the one it
// keeps: as often (a tie), and less often.
func otherWays(m *explore.Measured) (tied, less int) {
	for sig, k := range m.Failures {
		switch {
		case sig == m.Signature:
		case k == m.Rate.Same:
			tied++
		default:
			less++
		}
	}
	return tied, less
}

// keptSignature is the failure a scenario file says it was kept for, in
// its leading comment: a campaign's kept run ("# signature: …") or a
// shrunk scenario ("# It fails as the original failed: …"); "" when it
// says none.
func keptSignature(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "#") {
			if line == "" {
				continue
			}
			break // the comment that heads the file is over
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "#"))
		for _, p := range []string{"signature: ", "It fails as the original failed: "} {
			if sig, ok := strings.CutPrefix(line, p); ok {
				return strings.TrimSpace(sig)
			}
		}
	}
	return ""
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// copyHistory copies a run's stored history to path; a run with no
// store folder has none to copy.
func copyHistory(run *explore.Run, path string) {
	if run == nil || run.Dir == "" {
		return
	}
	src, err := os.Open(filepath.Join(run.Dir, lifecycle.HistoryFile))
	if err != nil {
		return
	}
	defer src.Close()
	dst, err := os.Create(path)
	if err != nil {
		return
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		os.Remove(path)
		return
	}
	dst.Close()
}

// shrinkHeader is the comment that heads a shrunk scenario: where it
// comes from, how it fails and how often, what shrank.
type shrinkHeader struct {
	sc          *scenario.Scenario
	res         *explore.ShrinkResult
	runner      string
	path        string
	flags       shrinkFlags
	fresh       *explore.Rate // the fresh runs' rate, once measured
	interrupted bool          // the fresh runs were interrupted
	history     string        // the failing history beside it
}

func (h shrinkHeader) write() error {
	text := h.res.Scenario.Encode(h.text())
	text = scenarioMovedTo(text, h.sc.File, h.path)
	return os.WriteFile(h.path, text, 0o644)
}

func (h shrinkHeader) text() string {
	var b strings.Builder
	res := h.res
	cmd := "coup shrink " + console.ShellQuote(h.sc.File)
	if h.flags.sim {
		cmd += " --sim"
	}
	fmt.Fprintf(&b, "Shrunk by coup from %s, on %s:\n  %s\n", h.sc.File, h.runner, cmd)
	fmt.Fprintf(&b, "It fails as the original failed: %s\n", res.Signature)
	switch {
	case res.Exact:
		fmt.Fprintf(&b, "It fails so at its seed, %d, every time: the simulator replays a seed.\n", res.Scenario.Seed)
	case h.fresh != nil && h.interrupted:
		fmt.Fprintf(&b, "The original failed so in %s runs.\nThis file fails the same way in %s fresh runs, before they were interrupted.\n", res.Rate, h.fresh)
	case h.fresh != nil:
		fmt.Fprintf(&b, "The original failed so in %s runs.\nThis file fails the same way in %s fresh runs.\n", res.Rate, h.fresh)
	default:
		fmt.Fprintf(&b, "The original failed so in %s runs. The shrink was interrupted: this file\nis the best found so far, not measured; it failed the same way in %s runs\nof the trial that kept it.\n", res.Rate, res.Kept)
	}
	if h.history != "" {
		fmt.Fprintf(&b, "One of its failing histories: %s (coup check %s).\n", filepath.Base(h.history), filepath.Base(h.history))
	}
	b.WriteString("\nSizes (of one failing run each):\n")
	b.WriteString(res.SizeTable("  "))
	fmt.Fprintf(&b, "\nWhat shrank, in %d runs:\n", res.Runs)
	for _, s := range res.Steps {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	if len(res.Steps) == 0 {
		b.WriteString("  nothing: no smaller scenario failed the same way often enough\n")
	}
	if h.sc.Expect.ExpectValid() && !res.Scenario.Expect.ExpectValid() {
		fmt.Fprintf(&b, "\n%s claims valid = true; this file expects the violation it shows.\nOnce the bug is fixed, set valid = true and drop violations: the file then\nguards against its return.\n", h.sc.File)
	}
	if res.Exact {
		fmt.Fprintf(&b, "\nReplay (the seed is the file's): coup sim %s", console.ShellQuote(h.path))
	} else {
		fmt.Fprintf(&b, "\nRun it again: coup run --repeat %d %s", max(h.flags.runs, 1), console.ShellQuote(h.path))
	}
	return b.String()
}

// scenarioFolder is a server template's reference to the scenario's
// folder.
var scenarioFolder = regexp.MustCompile(`\{\{-?\s*\$?\.Scenario\s*-?\}\}`)

// scenarioMovedTo rewrites a shrunk scenario's text written to path, when
// its folder differs from the original's: the [server] templates' paths
// from the scenario's folder ({{.Scenario}}/...) then go through the
// original's folder, relative to the new one.
func scenarioMovedTo(text []byte, original, path string) []byte {
	from, err1 := filepath.Abs(filepath.Dir(path))
	to, err2 := filepath.Abs(filepath.Dir(original))
	if err1 != nil || err2 != nil || from == to {
		return text
	}
	rel, err := filepath.Rel(from, to)
	if err != nil {
		return text
	}
	return scenarioFolder.ReplaceAllFunc(text, func(m []byte) []byte { return append(slices.Clone(m), "/"+filepath.ToSlash(rel)...) })
}
