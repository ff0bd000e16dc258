package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"coup/harness"
	"coup/harness/history"
)

func checkCmd(args []string) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the results as JSON (the shape of results.json)")
	report := fs.String("report", "", "also write the HTML report (the run's report.html) to this file")
	if err := fs.Parse(args); err != nil {
		return harness.ExitInput
	}
	if fs.NArg() != 1 {
		fmt.Fprint(os.Stderr, "usage: coup check [--json] [--report FILE] HISTORY\n")
		return harness.ExitInput
	}
	h, err := history.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return harness.ExitInput
	}
	res, err := harness.Evaluate(h)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %s: %v\n", fs.Arg(0), err)
		return harness.ExitInput
	}
	if *report != "" {
		if err := harness.WriteReportFile(*report, res, h); err != nil {
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
			return harness.ExitInput
		}
	}
	if *asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Println(string(b))
	} else {
		fmt.Print(res.Summary())
		for _, b := range h.Bad {
			fmt.Printf("  skipped line %d: %s\n", b.Line, b.Err)
		}
	}
	return res.ExitCode
}
