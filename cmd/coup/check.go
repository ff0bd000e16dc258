package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/report"
	"github.com/coupharness/coup/verdict"
)

const checkUsage = `usage: coup check [flags] HISTORY

Re-runs the checks on a stored history (a run's history.jsonl) and prints
the verdict, as coup run did; the history carries everything the checks
need. The exit code is the run's: 0 as expected, 1 unexpected, 3 unknown
(2 for a history that cannot be read).

flags:
`

func checkCmd(args []string) int {
	fs := newFlags("check")
	asJSON := fs.Bool("json", false, "print the results as JSON (the shape of results.json)")
	reportFile := fs.String("report", "", "also write the HTML report (the run's report.html) to this `file`, with the pages it links (porcupine's) beside it")
	pos, code, ok := parseArgs(fs, checkUsage, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(fs, checkUsage, "want one history, got %d arguments", len(pos))
	}
	h, err := history.ReadFile(pos[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %s\n", console.Printable(err.Error()))
		return verdict.ExitInput
	}
	res, err := verdict.Evaluate(h)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %s: %s\n", pos[0], console.Printable(err.Error()))
		return verdict.ExitInput
	}
	if *reportFile != "" {
		if err := report.WriteFile(*reportFile, res, h); err != nil {
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
			return verdict.ExitInput
		}
		// The page links the checks' own documents (porcupine's) by
		// name: they go beside it.
		if err := report.WriteCheckFiles(filepath.Dir(*reportFile), res); err != nil {
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
			return verdict.ExitInput
		}
	}
	if *asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Println(string(b))
	} else {
		fmt.Print(res.Summary())
		fmt.Print(readingsText(res))
		for _, b := range h.Bad {
			fmt.Printf("  skipped line %d: %s\n", b.Line, console.Printable(b.Err))
		}
	}
	return res.ExitCode
}

// maxReadViolations bounds the violations of one check whose readings
// coup check prints; results.json (--json) and the report list them all.
const maxReadViolations = 5

// readingsText is, under the summary, what each violation's claims were
// read from on real servers: for every violation of a false check whose
// evidence carries readings (history.Evidence: a log line with its file
// and number, or a poll's question and answer), one line per reading, so
// that a person can check the finding without opening a log. It is ""
// for a history without readings (protocol nodes send their reports).
func readingsText(res *verdict.Results) string {
	var b strings.Builder
	for _, name := range res.Order {
		c := res.Checks[name]
		if c.Valid != checks.False {
			continue
		}
		list := c.Violations
		if len(list) == 0 && len(c.Evidence) > 0 {
			list = []checks.Violation{{Nodes: c.Nodes, Evidence: c.Evidence}}
			if c.Interval != nil {
				list[0].Interval = *c.Interval
			}
		}
		shown := 0
		for k, v := range list {
			if !hasReadings(v.Evidence) {
				continue
			}
			if shown == maxReadViolations {
				fmt.Fprintf(&b, "  %s: the readings of %d more violations are in coup check --json and the report\n", console.Printable(name), len(list)-k)
				break
			}
			shown++
			fmt.Fprintf(&b, "  %s violation %d of %d (%s, %s to %s) was read from:\n", console.Printable(name), k+1, max(c.ViolationCount, len(list)),
				console.Printable(strings.Join(v.Nodes, ", ")), fmtSecs(v.Interval.From), fmtSecs(v.Interval.To))
			for i := range v.Evidence {
				e := &v.Evidence[i]
				for _, ev := range e.Evidence {
					fmt.Fprintf(&b, "    event %d at %s, %s: %s\n", e.Index, fmtSecs(e.Time), console.Printable(reportWords(e)), console.Printable(readingText(ev)))
				}
			}
		}
	}
	return b.String()
}

// hasReadings reports whether any event carries evidence.
func hasReadings(es []history.Event) bool {
	for i := range es {
		if len(es[i].Evidence) > 0 {
			return true
		}
	}
	return false
}

// reportWords says what a leader report said: "n1 believes it is the
// leader in term 2", "n1's belief is unknown".
func reportWords(e *history.Event) string {
	if e.Kind != history.KindReport || e.What != history.ReportLeader {
		return e.Node + " " + string(e.Kind) + " " + e.What
	}
	var s string
	switch {
	case e.Value == "" && e.Detail == history.LeaderUnknown:
		return e.Node + "'s belief is unknown"
	case e.Value == "":
		s = e.Node + " believes in no leader"
	case e.Value == e.Node:
		s = e.Node + " believes it is the leader"
	default:
		s = e.Node + " believes in " + e.Value
	}
	if e.Term != nil {
		s += fmt.Sprintf(" in term %d", *e.Term)
	}
	return s
}

// readingText is one reading: "n1.etcd.log:57: LINE", or a poll's
// "QUESTION answered: ANSWER".
func readingText(ev history.Evidence) string {
	s := ev.From + ":"
	if ev.Line > 0 {
		s = fmt.Sprintf("%s:%d:", ev.From, ev.Line)
	} else if ev.From != "" {
		s = ev.From + " answered:"
	}
	s += " " + ev.Text
	if ev.Cut {
		s += " … (cut)"
	}
	return s
}

// fmtSecs formats a history time: "1.203s".
func fmtSecs(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }
