package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/sim"
	"github.com/coupharness/coup/verdict"
)

// DefaultShrunk is where a shrink writes its scenario without --out.
const DefaultShrunk = "shrunk.toml"

// simShrink shrinks the run of one seed to a smaller scenario that fails
// the same way, writes it, and checks that the written file does.
func simShrink(sc *scenario.Scenario, f simFlags) int {
	path := f.out
	if path == "" {
		path = DefaultShrunk
	}
	st := f.strategy.For(f.seed) // every candidate runs the strategy of the seed that failed
	strategy := ""
	if !st.IsRandom() {
		strategy = ", strategy " + st.String()
	}
	fmt.Printf("%s, seed %d%s: shrinking (budget %d simulations)\n", sc.File, f.seed, strategy, f.budget)
	start := time.Now()
	res, err := sim.Shrink(sc, f.seed, sim.ShrinkOptions{Budget: f.budget, Strategy: st, Log: func(step string) {
		if !f.quiet {
			fmt.Printf("  %s\n", step)
		}
	}})
	if errors.Is(err, sim.ErrNothingToShrink) {
		fmt.Fprintf(os.Stderr, "coup sim: %s, seed %d: %v; a sweep (--seeds N) finds seeds that fail\n", sc.File, f.seed, err)
		return verdict.ExitInput
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup sim: %s: %v\n", sc.File, err)
		return verdict.ExitUnknown
	}
	res.Finish(sc.Name)
	header := shrunkHeader(sc, f.seed, st, res, path)
	if err := os.WriteFile(path, res.Scenario.Encode(header), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "coup sim: write the shrunk scenario: %v\n", err)
		return verdict.ExitUnknown
	}
	fmt.Printf("it fails as: %s\n", res.Signature)
	fmt.Printf("shrunk in %d simulations (%s)", res.Sims, time.Since(start).Round(time.Millisecond))
	if res.Exhausted {
		fmt.Printf(": the budget ran out; a larger --budget may shrink further")
	}
	fmt.Println()
	fmt.Print(res.SizeTable("  "))

	// The file as written must fail the same way when simulated as a user
	// will: loaded from disk, with its own seed.
	written, err := scenario.Load(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup sim: the shrunk scenario does not load: %v\n", err)
		return verdict.ExitUnknown
	}
	out, err := sim.Simulate(written, written.Seed, sim.Options{Strategy: st, Hash: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup sim: %s: %v\n", path, err)
		return verdict.ExitUnknown
	}
	if sig := explore.Signature(out.Results, out.History); sig != res.Signature {
		fmt.Fprintf(os.Stderr, "coup sim: %s fails as %q when run from its file, not as %q\n", path, sig, res.Signature)
		return verdict.ExitUnknown
	}
	fmt.Printf("wrote %s (seed %d); it fails the same way: %s   (history sha256 %s)\n", path, written.Seed, sim.Replay(path, written.Seed, st), sim.Short(out.Hash))
	return verdict.ExitOK
}

// shrunkHeader is the comment that heads a shrunk scenario: where it
// comes from, how it fails, what shrank, and what its [expect] says.
func shrunkHeader(sc *scenario.Scenario, seed int64, st sim.Strategy, res *sim.ShrinkResult, path string) string {
	var b strings.Builder
	cmd := sim.Replay(sc.File, seed, st) + " --shrink"
	fmt.Fprintf(&b, "Shrunk by coup from %s at seed %d:\n  %s\n", sc.File, seed, cmd)
	fmt.Fprintf(&b, "It fails as that run failed: %s\n\n", res.Signature)
	b.WriteString(res.SizeTable("  "))
	fmt.Fprintf(&b, "\nWhat shrank, in %d simulations:\n", res.Sims)
	for _, s := range res.Steps {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	if sc.Expect.ExpectValid() && !res.Scenario.Expect.ExpectValid() {
		fmt.Fprintf(&b, "\n%s claims valid = true; this file expects the violation it shows.\nOnce the bug is fixed, set valid = true and drop violations: the file then\nguards against its return.\n", sc.File)
	}
	replayCmd := "coup sim " + console.ShellQuote(path)
	if !st.IsRandom() {
		replayCmd += " --strategy " + st.String()
	}
	fmt.Fprintf(&b, "\nReplay (the seed is the file's): %s", replayCmd)
	return b.String()
}
