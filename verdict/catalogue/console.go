package catalogue

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/verdict"
)

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
func statusLine(cat *Catalogue, current string) string {
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
func printTally(w io.Writer, s *Summary, code int, o Options) {
	fmt.Fprintln(w, "\nsummary:")
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
		case r.Outcome == NotRun:
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
		line := fmt.Sprintf("  %-40s %d/%d as expected", console.Printable(c.name), c.ok, o.Repeat)
		for _, part := range []struct {
			n    int
			what string
		}{{c.unexpected, "unexpected"}, {c.unknown, "unknown"}, {c.failed, "failed to start"}, {c.notRun, "not run"}} {
			if part.n > 0 {
				line += fmt.Sprintf(", %d %s", part.n, part.what)
			}
		}
		fmt.Fprintln(w, line)
	}
	t := s.Totals
	fmt.Fprintf(w, "%d runs: %d as expected, %d unexpected, %d unknown, %d failed to start, %d not run (exit %d)\n",
		t.Runs, t.AsExpected, t.Unexpected, t.Unknown, t.FailedToStart, t.NotRun, code)
	fmt.Fprintf(w, "summary.json: %s\n", console.Printable(absPath(filepath.Join(o.Store, SummaryFile))))
	if o.JUnit != "" {
		fmt.Fprintf(w, "JUnit: %s\n", console.Printable(absPath(o.JUnit)))
	}
	printReports(w, s.Runs)
}

// printReports ends a catalogue's summary with the reports a person opens
// next: that of each run not as expected, or, when every run was, that of
// the last run. A run without a report (not carried out, or stopped
// before its nodes were up) is left out.
func printReports(w io.Writer, runs []Run) {
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
		fmt.Fprintf(w, "report of the run not as expected: %s\n", console.Printable(odd[0]))
	case len(odd) > 1:
		fmt.Fprintf(w, "reports of the %d runs not as expected:\n", len(odd))
		for _, r := range odd {
			fmt.Fprintf(w, "  %s\n", console.Printable(r))
		}
	case last != "":
		fmt.Fprintf(w, "report of the last run: %s\n", console.Printable(last))
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

// absPath is p made absolute, or p when it cannot be.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
