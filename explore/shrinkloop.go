package explore

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// ShrinkLoopConfig configures coup shrink's loop (ShrinkLoop).
type ShrinkLoopConfig struct {
	// Runs is how many runs find the failure, and how many fresh runs
	// measure the shrunk scenario (one each on an exact runner).
	Runs int
	// BudgetRuns bounds every run of the loop, those that find the
	// failure and the fresh ones included (0: the default budget of
	// candidates); BudgetTime, when set, bounds its wall time instead.
	BudgetRuns int
	BudgetTime time.Duration
	// Out is the shrunk scenario's file; its failing history goes
	// beside it (FILE.history.jsonl for FILE.toml).
	Out string
	// Quiet shows no run's or candidate's line.
	Quiet bool
	// Sim says the runner is the simulator (the header's command says
	// --sim); Fresh, when set, runs the fresh runs instead of the
	// runner (the simulator's, into a store).
	Sim   bool
	Fresh Runner
	// Stdout receives the progress and the outcome, Stderr the errors;
	// Terminal draws a status line on Stdout.
	Stdout, Stderr io.Writer
	Terminal       bool
}

// shrunkHistory is the failing history written beside a shrunk
// scenario: its name with .history.jsonl for .toml.
func shrunkHistory(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".history.jsonl"
}

// ShrinkLoop is coup shrink: it finds the scenario's failure (the
// commonest in c.Runs runs of r, one on an exact runner), shrinks it
// (Shrink), writes the shrunk scenario to c.Out with a header that says
// how it fails, measures it in as many fresh runs, and returns the exit
// code. It shows its progress on c.Stdout, a status line on a terminal.
func ShrinkLoop(ctx context.Context, sc *scenario.Scenario, r Runner, c ShrinkLoopConfig) int {
	f := c
	exact := r.Exact()
	line := ""
	out := console.NewStatus(f.Stdout, !f.Quiet && f.Terminal, func() string { return line })
	defer out.Close()
	show := func(s string) { out.Set(func() { line = s }) }
	start := time.Now()

	// The failure: the commonest in --runs runs (one on the simulator).
	n := f.Runs
	if exact {
		n = 1
	}
	// The budget counts every run: those that find the failure, the
	// candidates' and the fresh runs that confirm the shrunk scenario.
	if f.BudgetRuns > 0 && f.BudgetRuns <= 2*n {
		out.Close()
		fmt.Fprintf(f.Stderr, "coup shrink: --budget %d: the budget counts the %d runs that find the failure and the %d fresh runs that confirm the shrunk scenario; give more than %d\n", f.BudgetRuns, n, n, 2*n)
		return verdict.ExitInput
	}
	kept := keptSignature(sc.File)
	out.Printf("%s: finding its failure in %d %s (%s)\n", console.Printable(sc.File), n, plural(n, "run"), r.Name())
	m, err := Measure(ctx, r, sc, n, "", kept, func(i int, sig string, err error) {
		show(fmt.Sprintf("run %d of %d · %s", i, n, time.Since(start).Round(time.Second)))
		if !f.Quiet && !exact {
			out.Printf("  run %d: %s\n", i, runOutcome(sig, err))
		}
	})
	if err != nil {
		out.Close()
		fmt.Fprintf(f.Stderr, "coup shrink: %s: no run could be carried out: %s\n", console.Printable(sc.File), console.Printable(err.Error()))
		return verdict.ExitUnknown
	}
	if ctx.Err() != nil {
		out.Close()
		fmt.Fprintf(f.Stderr, "coup shrink: interrupted before a failure was found; nothing written (exit 3)\n")
		return verdict.ExitUnknown
	}
	if m.Run == nil {
		out.Close()
		fmt.Fprintf(f.Stderr, "coup shrink: %s: no run of %d found a violation: nothing to shrink; more --runs may show a rare failure, coup explore finds one\n", console.Printable(sc.File), m.Rate.Runs)
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

	opts := ShrinkOptions{
		Budget: f.BudgetRuns - 2*n, RunTime: time.Since(start) / time.Duration(max(m.Rate.Runs, 1)),
		Signature: m.Signature, First: m.Run, Rate: m.Rate,
		Log: func(step string) { out.Printf("  %s\n", step) },
		Tried: func(t Trial) {
			if f.Quiet || exact {
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
		Progress: func(p Progress) {
			s := fmt.Sprintf("[%d/%d runs] candidate %d", p.Runs, p.Budget, p.Candidates)
			if !exact {
				s += fmt.Sprintf(": %d of %d the same way", p.Same, p.Tried)
			}
			show(s + fmt.Sprintf(" · %d faults, %d nodes · %s", p.Faults, p.Nodes, time.Since(start).Round(time.Second)))
		},
	}
	if f.BudgetRuns == 0 {
		opts.Budget = 0 // the default: DefaultRealBudget (DefaultBudget on the simulator) candidates' runs
	}
	if f.BudgetTime > 0 {
		// The time bounds the shrink, its fresh runs included: as many as
		// the runs that found the failure, each as long on average.
		opts.Budget = math.MaxInt32
		opts.Time = f.BudgetTime - time.Since(start) - time.Duration(n)*opts.RunTime
		if opts.Time <= 0 {
			opts.Time = time.Nanosecond // no candidate: straight to the fresh runs
		}
	}
	var budget string
	switch {
	case f.BudgetTime > 0:
		budget = fmt.Sprintf("%s in all, the %d fresh runs included: %s for candidates", f.BudgetTime, n, opts.Time.Round(time.Second))
	case f.BudgetRuns > 0:
		budget = fmt.Sprintf("%d runs in all, the %d that found the failure and the %d fresh runs included: %d for candidates", f.BudgetRuns, n, n, opts.Budget)
	default:
		c := DefaultRealBudget
		if exact {
			c = DefaultBudget
		}
		budget = fmt.Sprintf("%d runs for candidates", c)
	}
	out.Printf("shrinking (budget %s)\n", budget)
	res, err := Shrink(ctx, r, sc, opts)
	if err != nil {
		out.Close()
		fmt.Fprintf(f.Stderr, "coup shrink: %s: %v\n", console.Printable(sc.File), err)
		return verdict.ExitUnknown
	}
	res.Finish(sc.Name)
	res.Scenario.Command = scenario.CommandMovedTo(sc.File, res.Scenario.Command, f.Out)
	out.Printf("shrunk in %d runs (%s from the first run)", res.Runs, time.Since(start).Round(time.Second))
	switch {
	case res.Interrupted:
		out.Printf(": interrupted; the best scenario so far follows")
	case res.Exhausted:
		out.Printf(": the budget ran out; a larger --budget may shrink further")
	}
	out.Printf("\n%s", res.SizeTable("  "))

	// The file as written, run as a user will run it: loaded from disk.
	head := shrinkHeader{sc: sc, res: res, runner: r.Name(), path: f.Out, flags: f}
	if err := head.write(); err != nil {
		out.Close()
		fmt.Fprintf(f.Stderr, "coup shrink: write the shrunk scenario: %v\n", err)
		return verdict.ExitUnknown
	}
	if res.Interrupted {
		copyHistory(res.Run, shrunkHistory(f.Out))
		out.Close()
		fmt.Fprintf(f.Stdout, "wrote %s, not measured (interrupted)\n", f.Out)
		return verdict.ExitUnknown
	}
	written, err := scenario.Load(f.Out)
	if err != nil {
		out.Close()
		fmt.Fprintf(f.Stderr, "coup shrink: the shrunk scenario does not load: %v\n", err)
		return verdict.ExitUnknown
	}
	out.Printf("measuring: %d fresh %s of %s\n", n, plural(n, "run"), f.Out)
	start = time.Now()
	if f.Fresh != nil {
		r = f.Fresh // the simulator's run is stored, its history copied
	}
	fresh, err := Measure(ctx, r, written, n, res.Signature, "", func(i int, sig string, err error) {
		show(fmt.Sprintf("fresh run %d of %d · %s", i, n, time.Since(start).Round(time.Second)))
		if !f.Quiet && !exact {
			out.Printf("  run %d: %s\n", i, runOutcome(sig, err))
		}
	})
	if err != nil && ctx.Err() == nil {
		out.Close()
		fmt.Fprintf(f.Stderr, "coup shrink: %s: no fresh run could be carried out: %s\n", f.Out, console.Printable(err.Error()))
		return verdict.ExitUnknown
	}
	if fresh != nil {
		head.fresh = &fresh.Rate
		head.interrupted = ctx.Err() != nil
		if fresh.Run != nil {
			head.history = shrunkHistory(f.Out)
			copyHistory(fresh.Run, head.history)
		}
		if err := head.write(); err != nil {
			out.Close()
			fmt.Fprintf(f.Stderr, "coup shrink: write the shrunk scenario: %v\n", err)
			return verdict.ExitUnknown
		}
	}
	out.Close()
	switch {
	case fresh == nil || ctx.Err() != nil:
		fmt.Fprintf(f.Stdout, "wrote %s; the fresh runs were interrupted\n", f.Out)
		return verdict.ExitUnknown
	case fresh.Rate.Same == 0:
		fmt.Fprintf(f.Stdout, "wrote %s; it did NOT fail the same way in %d fresh %s\n", f.Out, n, plural(n, "run"))
		return verdict.ExitUnexpected
	case exact:
		fmt.Fprintf(f.Stdout, "wrote %s (seed %d); it fails the same way: coup sim %s\n", f.Out, written.Seed, console.ShellQuote(f.Out))
	default:
		fmt.Fprintf(f.Stdout, "wrote %s; it fails the same way in %s fresh runs; a failing history is %s\n", f.Out, fresh.Rate, head.history)
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
	case !Violated(sig):
		return "no verdict: " + console.Printable(sig)
	}
	return "fails as " + console.Printable(sig)
}

// otherWays counts the ways a measure's runs failed besides the one it
// keeps: as often (a tie), and less often.
func otherWays(m *Measured) (tied, less int) {
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
func copyHistory(run *Run, path string) {
	if run == nil || run.Dir == "" {
		return
	}
	src, err := os.Open(filepath.Join(run.Dir, "history.jsonl"))
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
	res         *ShrinkResult
	runner      string
	path        string
	flags       ShrinkLoopConfig
	fresh       *Rate  // the fresh runs' rate, once measured
	interrupted bool   // the fresh runs were interrupted
	history     string // the failing history beside it
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
	if h.flags.Sim {
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
		fmt.Fprintf(&b, "\nRun it again: coup run --repeat %d %s", max(h.flags.Runs, 1), console.ShellQuote(h.path))
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
