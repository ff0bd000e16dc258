package catalogue

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Options configure a catalogue run (RunAll).
type Options struct {
	// Store is the store's root, where summary.json is written.
	Store string
	// Repeat is how many times each scenario runs.
	Repeat int
	// JUnit, when set, is the JUnit file to write.
	JUnit string
	// Quiet prints the verdicts only, no progress lines.
	Quiet bool
	// Out receives what the catalogue prints, Err its errors; Terminal
	// draws the status line on Out.
	Out, Err io.Writer
	Terminal bool
	// Run runs one scenario once, into the store, and returns its results
	// and its folder; progress, when not nil, receives its progress lines.
	Run func(ctx context.Context, sc *scenario.Scenario, progress io.Writer) (*verdict.Results, string, error)
}

// RunAll runs the scenarios, each o.Repeat times, and returns the exit
// code. Everything it prints about a run matches that run's exit code,
// and the last thing it prints matches its own. A ctx that ends stops the
// catalogue: the run under way is judged on its prefix, and the rest are
// not run.
func RunAll(ctx context.Context, scs []*scenario.Scenario, o Options) int {
	var plan []Run
	runs := map[int]*scenario.Scenario{}
	for _, sc := range scs {
		for i := 1; i <= o.Repeat; i++ {
			runs[len(plan)] = sc
			plan = append(plan, Planned(sc.Name, sc.File, i, o.Repeat))
		}
	}
	many := len(plan) > 1
	cat := New(time.Now(), plan)
	current := ""
	out := console.NewStatus(o.Out, many && o.Terminal, func() string {
		return statusLine(cat, current)
	})
	defer out.Close()
	// Write the files once before the first run: a path that cannot be
	// written is a usage error, found at once.
	save := func() error {
		if many {
			if err := cat.WriteSummary(o.Store); err != nil {
				return err
			}
		}
		if o.JUnit != "" {
			return cat.WriteJUnitFile(o.JUnit)
		}
		return nil
	}
	if err := save(); err != nil {
		out.Close()
		fmt.Fprintf(o.Err, "coup: %v\n", err)
		return verdict.ExitInput
	}
	saveFailed := false

	var progress io.Writer
	if !o.Quiet {
		progress = console.PrintableWriter{W: out}
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
		res, dir, err = o.Run(ctx, sc, progress)
		if err != nil {
			// The run has no verdict to trust: it could not be carried
			// out, or its results could not be saved.
			res = nil
			out.Printf("%s: no verdict: %s (exit %d)\n", console.Printable(sc.Name), console.Printable(err.Error()), verdict.ExitUnknown)
		} else if res.NotStarted() {
			// One message, the cause, where an error belongs: no verdict.
			fmt.Fprintf(o.Err, "coup: %s: %s\n", console.Printable(sc.File), console.PrintableLines(res.Error))
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
			fmt.Fprintf(o.Err, "coup: %v\n", err)
		}
	}
	interrupted := ctx.Err() != nil
	out.Set(func() { cat.Stop(interrupted, time.Now()) })
	if err := save(); err != nil && !saveFailed {
		saveFailed = true
		fmt.Fprintf(o.Err, "coup: %v\n", err)
	}
	out.Close()
	code := cat.ExitCode
	if saveFailed {
		code = Worst(code, verdict.ExitUnknown)
	}
	if many {
		printTally(o.Out, &cat.Summary, code, o)
	}
	switch {
	case interrupted:
		line := last.interrupted(cat.Totals.Runs)
		if n := cat.Totals.NotRun; n > 0 {
			line += fmt.Sprintf("; %d of %d runs not carried out", n, cat.Totals.Runs)
		}
		fmt.Fprintf(o.Err, "coup: %s (exit %d)\n", line, code)
	case saveFailed:
		fmt.Fprintf(o.Err, "coup: the summary or JUnit file could not be written (exit %d)\n", code)
	}
	return code
}
