package sim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// DefaultShrunk is where a shrink writes its scenario without --out.
const DefaultShrunk = "shrunk.toml"

// ShrinkSeedConfig configures coup sim --shrink (ShrinkSeed).
type ShrinkSeedConfig struct {
	// Seed is the seed whose run is shrunk, with Strategy's turn for it.
	Seed     int64
	Strategy Strategy
	// Budget is the most simulations the shrink spends.
	Budget int
	// Out is the shrunk scenario's file (DefaultShrunk when empty).
	Out string
	// Quiet prints no step.
	Quiet bool
	// Stdout receives the steps and the outcome, Stderr the errors.
	Stdout, Stderr io.Writer
}

// ShrinkSeed is coup sim --shrink: it shrinks the run of one seed to a
// smaller scenario that fails the same way (Shrink), writes it, checks
// that the written file does, and returns the exit code.
func ShrinkSeed(sc *scenario.Scenario, c ShrinkSeedConfig) int {
	path := c.Out
	if path == "" {
		path = DefaultShrunk
	}
	stdout, stderr := c.Stdout, c.Stderr
	st := c.Strategy.For(c.Seed) // every candidate runs the strategy of the seed that failed
	strategy := ""
	if !st.IsRandom() {
		strategy = ", strategy " + st.String()
	}
	fmt.Fprintf(stdout, "%s, seed %d%s: shrinking (budget %d simulations)\n", sc.File, c.Seed, strategy, c.Budget)
	start := time.Now()
	res, err := Shrink(sc, c.Seed, ShrinkOptions{Budget: c.Budget, Strategy: st, Log: func(step string) {
		if !c.Quiet {
			fmt.Fprintf(stdout, "  %s\n", step)
		}
	}})
	if errors.Is(err, ErrNothingToShrink) {
		fmt.Fprintf(stderr, "coup sim: %s, seed %d: %v; a sweep (--seeds N) finds seeds that fail\n", sc.File, c.Seed, err)
		return verdict.ExitInput
	}
	if err != nil {
		fmt.Fprintf(stderr, "coup sim: %s: %v\n", sc.File, err)
		return verdict.ExitUnknown
	}
	res.Finish(sc.Name)
	header := shrunkHeader(sc, c.Seed, st, res, path)
	if err := os.WriteFile(path, res.Scenario.Encode(header), 0o644); err != nil {
		fmt.Fprintf(stderr, "coup sim: write the shrunk scenario: %v\n", err)
		return verdict.ExitUnknown
	}
	fmt.Fprintf(stdout, "it fails as: %s\n", res.Signature)
	fmt.Fprintf(stdout, "shrunk in %d simulations (%s)", res.Sims, time.Since(start).Round(time.Millisecond))
	if res.Exhausted {
		fmt.Fprintf(stdout, ": the budget ran out; a larger --budget may shrink further")
	}
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, res.SizeTable("  "))

	// The file as written must fail the same way when simulated as a user
	// will: loaded from disk, with its own seed.
	written, err := scenario.Load(path)
	if err != nil {
		fmt.Fprintf(stderr, "coup sim: the shrunk scenario does not load: %v\n", err)
		return verdict.ExitUnknown
	}
	out, err := Simulate(written, written.Seed, Options{Strategy: st, Hash: true})
	if err != nil {
		fmt.Fprintf(stderr, "coup sim: %s: %v\n", path, err)
		return verdict.ExitUnknown
	}
	if sig := explore.Signature(out.Results, out.History); sig != res.Signature {
		fmt.Fprintf(stderr, "coup sim: %s fails as %q when run from its file, not as %q\n", path, sig, res.Signature)
		return verdict.ExitUnknown
	}
	fmt.Fprintf(stdout, "wrote %s (seed %d); it fails the same way: %s   (history sha256 %s)\n", path, written.Seed, Replay(path, written.Seed, st), Short(out.Hash))
	return verdict.ExitOK
}

// shrunkHeader is the comment that heads a shrunk scenario: where it
// comes from, how it fails, what shrank, and what its [expect] says.
func shrunkHeader(sc *scenario.Scenario, seed int64, st Strategy, res *ShrinkResult, path string) string {
	var b strings.Builder
	cmd := Replay(sc.File, seed, st) + " --shrink"
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
