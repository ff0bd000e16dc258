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

	"coup/harness"
	"coup/harness/proc"
	"coup/harness/scenario"
)

func runCmd(args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	store := fs.String("store", "store", "the store's root folder")
	repeat := fs.Int("repeat", 1, "run each scenario this many times")
	quiet := fs.Bool("quiet", false, "print only the verdicts")
	if err := fs.Parse(args); err != nil {
		return harness.ExitInput
	}
	if fs.NArg() == 0 || *repeat < 1 {
		fmt.Fprint(os.Stderr, "usage: coup run [--store DIR] [--repeat N] [--quiet] FILE|DIR...\n")
		return harness.ExitInput
	}
	files, err := scenarioFiles(fs.Args())
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return harness.ExitInput
	}
	// Load every scenario before running any, so that a typo in the last
	// file does not wait for the first to finish.
	var scs []*scenario.Scenario
	bad := false
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
			bad = true
			continue
		}
		scs = append(scs, sc)
	}
	if bad {
		return harness.ExitInput
	}

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
		os.Exit(harness.ExitUnknown)
	}()

	opts := harness.Options{Store: *store}
	if !*quiet {
		opts.Progress = os.Stdout
	}
	worst := harness.ExitOK
	tally := map[string]map[int]int{}
	for _, sc := range scs {
		tally[sc.Name] = map[int]int{}
		for i := 0; i < *repeat; i++ {
			if ctx.Err() != nil {
				break
			}
			if *repeat > 1 {
				fmt.Printf("%s (run %d of %d)\n", sc.File, i+1, *repeat)
			} else {
				fmt.Printf("%s\n", sc.File)
			}
			res, dir, err := harness.Run(ctx, sc, opts)
			if err != nil {
				fmt.Fprintf(os.Stderr, "coup: %s: %v\n", sc.File, err)
				worst = combine(worst, harness.ExitUnknown)
				continue
			}
			if res.NotStarted() {
				// One message, the cause, where an error belongs.
				fmt.Fprintf(os.Stderr, "coup: %s: %s\n", sc.File, res.Error)
			} else {
				fmt.Print(res.Summary())
			}
			fmt.Printf("  store: %s\n", dir)
			tally[sc.Name][res.ExitCode]++
			worst = combine(worst, res.ExitCode)
		}
	}
	if *repeat > 1 || len(scs) > 1 {
		printTally(scs, tally, *repeat)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "coup: interrupted; the nodes were stopped and the recorded prefix checked")
		return combine(worst, harness.ExitUnknown)
	}
	return worst
}

// combine keeps the most serious exit code: unexpected beats unknown beats
// as expected (input errors stop before any run).
func combine(a, b int) int {
	rank := map[int]int{harness.ExitOK: 0, harness.ExitUnknown: 1, harness.ExitUnexpected: 2, harness.ExitInput: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func printTally(scs []*scenario.Scenario, tally map[string]map[int]int, repeat int) {
	fmt.Println("\nsummary:")
	for _, sc := range scs {
		t := tally[sc.Name]
		fmt.Printf("  %-40s %d/%d as expected", sc.Name, t[harness.ExitOK], repeat)
		if t[harness.ExitUnexpected] > 0 {
			fmt.Printf(", %d unexpected", t[harness.ExitUnexpected])
		}
		if t[harness.ExitUnknown] > 0 {
			fmt.Printf(", %d unknown", t[harness.ExitUnknown])
		}
		if t[harness.ExitInput] > 0 {
			fmt.Printf(", %d failed to start", t[harness.ExitInput])
		}
		fmt.Println()
	}
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
			return nil, err
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("%s: no *.toml scenarios in this folder", a)
		}
		sort.Strings(matches)
		out = append(out, matches...)
	}
	return out, nil
}
