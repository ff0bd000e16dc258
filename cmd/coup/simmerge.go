package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/sim"
	"github.com/coupharness/coup/verdict"
)

const mergeUsage = `usage: coup sim merge RESULTS.jsonl...
  combine the results files of a sweep's shards (coup sim FILE --seeds N --shard k/n --out FILE):
  the failures by kind (signature), how findable each is, and the command that replays one
flags:
`

// simMerge combines the results files of one sweep and reports its
// failures, deduplicated by signature, with the replay command of each.
func simMerge(args []string) int {
	fs := newFlags("sim merge")
	paths, code, ok := parseArgs(fs, mergeUsage, args)
	if !ok {
		return code
	}
	if len(paths) == 0 {
		fs.Usage()
		return verdict.ExitInput
	}
	var files []*explore.SweepFile
	for _, p := range paths {
		f, err := explore.ReadSweep(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
			return verdict.ExitInput
		}
		files = append(files, f)
	}
	m, err := explore.Merge(files)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		if errors.Is(err, explore.ErrBadResults) {
			return verdict.ExitInput
		}
		return verdict.ExitUnknown
	}
	h := m.Header
	st, err := sim.ParseStrategy(h.Strategy)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %s: strategy: %v\n", paths[0], err)
		return verdict.ExitInput
	}
	fmt.Printf("merged %d files: the sweep of %s, seeds %d..%d, strategy %s\n", len(files), h.File, h.From, h.From+int64(h.Seeds)-1, st)
	asExpected, unexpected, unknown, broken := m.Counts()
	fmt.Printf("%d seeds: %d as expected, %d unexpected, %d unknown", len(m.Seeds), asExpected, unexpected, unknown)
	if broken > 0 {
		fmt.Printf(", %d could not run", broken)
	}
	fmt.Println()
	kinds := make([]*sim.FailureKind, 0, len(m.Groups))
	for _, g := range m.Groups {
		fmt.Printf("seeds that failed as %q: %s\n", g.Signature, sim.SeedList(g.Seeds))
		kinds = append(kinds, &sim.FailureKind{Signature: g.Signature, AsExpected: g.AsExpected, Seeds: len(g.Seeds), First: g.First.Seed, Hash: g.First.Hash})
	}
	sim.PrintFindability(os.Stdout, kinds, len(m.Seeds), func(k *sim.FailureKind) string { return sim.Replay(h.File, k.First, st) })
	if len(m.Missing) > 0 {
		fmt.Printf("MISSING %d of %d seeds (a shard not given, killed, or stopped at its first failure): %s\n", len(m.Missing), h.Seeds, rangeList(m.Missing))
	}
	for _, p := range m.Incomplete {
		fmt.Printf("INCOMPLETE: %s has no end line: its shard did not finish\n", p)
	}
	switch {
	case unexpected > 0:
		return verdict.ExitUnexpected
	case unknown > 0 || broken > 0 || len(m.Missing) > 0 || len(m.Incomplete) > 0:
		return verdict.ExitUnknown
	}
	return verdict.ExitOK
}

// rangeList writes seeds as ranges: "1..250, 501..750".
func rangeList(seeds []int64) string {
	s := ""
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if s != "" {
			s += ", "
		}
		if j > i {
			s += fmt.Sprintf("%d..%d", seeds[i], seeds[j])
		} else {
			s += fmt.Sprint(seeds[i])
		}
		i = j + 1
	}
	return s
}
