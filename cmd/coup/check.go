package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

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
		for _, b := range h.Bad {
			fmt.Printf("  skipped line %d: %s\n", b.Line, console.Printable(b.Err))
		}
	}
	return res.ExitCode
}
