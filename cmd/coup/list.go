package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

const listUsage = `usage: coup list [FILE|DIR...]

Lists scenarios, one a line in aligned columns: the name, the algorithm
(or the foreign node's command), the number of nodes, the faults (kind and
target, in file order) and the expected outcome ("valid", or the checks
that must fail). Without arguments it lists scenarios/. A file that does
not load is reported on stderr, and the exit code is then 2.
`

func listCmd(args []string) int {
	fs := newFlags("list")
	pos, code, ok := parseArgs(fs, listUsage, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		pos = []string{"scenarios"}
	}
	files, err := scenarioFiles(pos)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tALGORITHM\tNODES\tFAULTS\tEXPECTED")
	code = verdict.ExitOK
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			tw.Flush()
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
			code = verdict.ExitInput
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", cell(sc.Name), cell(algorithmOf(sc)), sc.Nodes, cell(faultsOf(sc)), cell(expectedOf(sc)))
	}
	tw.Flush()
	return code
}

// cell makes a value safe for a column: printable, and with no tab.
func cell(s string) string {
	return strings.ReplaceAll(console.Printable(s), `\t`, " ")
}

func algorithmOf(sc *scenario.Scenario) string {
	if sc.Command != nil {
		a := "command " + strings.Join(shortPaths(sc.Command), " ")
		if sc.Algorithm != "" {
			a = sc.Algorithm + " (" + a + ")"
		}
		return a
	}
	return sc.Algorithm
}

// shortPaths shows the absolute paths a loaded command holds (resolved
// beside its scenario) relative to the current directory where they lie
// under it, as a user would type them.
func shortPaths(args []string) []string {
	wd, err := os.Getwd()
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if err != nil || !filepath.IsAbs(a) {
			continue
		}
		if rel, err := filepath.Rel(wd, a); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			out[i] = rel
		}
	}
	return out
}

// faultsOf writes the faults as "kind target", in file order: "pause n5,
// partition groups".
func faultsOf(sc *scenario.Scenario) string {
	fs := sc.NemesisFaults()
	if len(fs) == 0 {
		return "none"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		p := string(f.Kind)
		switch {
		case f.Kind == nemesis.Partition && f.Shape != "":
			p += " " + string(f.Shape)
			if !f.Target.IsZero() && f.Shape != nemesis.Groups && f.Shape != nemesis.Halves && f.Shape != nemesis.MajoritiesRing {
				p += " " + f.Target.String()
			}
		case !f.Target.IsZero():
			p += " " + f.Target.String()
		}
		if f.When != nil {
			p += " (triggered)"
		}
		parts[i] = p
	}
	return strings.Join(parts, ", ")
}

func expectedOf(sc *scenario.Scenario) string {
	e := &sc.Expect
	switch {
	case e.ExpectValid():
		return "valid"
	case len(e.Violations) > 0:
		return "invalid: " + strings.Join(e.Violations, ", ") + " fail"
	}
	return "invalid (any check)"
}
