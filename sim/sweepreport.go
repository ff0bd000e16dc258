package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Replay is the command that replays a seed: the strategy the seed ran
// is named unless it is random (a portfolio's seed names its turn's).
func Replay(file string, seed int64, st Strategy) string {
	cmd := fmt.Sprintf("coup sim %s --seed %d", console.ShellQuote(file), seed)
	if turn := st.For(seed); !turn.IsRandom() {
		cmd += " --strategy " + turn.String()
	}
	return cmd
}

// Short is how a history hash is printed: its first 16 hex digits.
func Short(hash string) string {
	if len(hash) > 16 {
		return hash[:16]
	}
	return hash
}

// sweepTally counts a sweep's seeds.
type sweepTally struct {
	done, asExpected, unexpected, unknown, broken int
	failing                                       []int64 // seeds not as expected, in order
	violating                                     []int64 // seeds with a violation
	violatingHash                                 string  // the first one's history hash
	nondeterministic                              []int64
	kinds                                         []*FailureKind // by signature, in order of first seed
	figs                                          Figures
}

// FailureKind is the seeds of a sweep that failed one way.
type FailureKind struct {
	Signature  string
	AsExpected bool
	Seeds      int
	First      int64
	Hash       string
}

// kind counts a failing seed under its signature.
func (t *sweepTally) kind(sig string, asExpected bool, seed int64, hash string) {
	for _, k := range t.kinds {
		if k.Signature == sig {
			k.Seeds++
			return
		}
	}
	t.kinds = append(t.kinds, &FailureKind{Signature: sig, AsExpected: asExpected, Seeds: 1, First: seed, Hash: hash})
}

// SweepConfig configures a sweep (Sweep).
type SweepConfig struct {
	// Seed is the first seed, Seeds how many; Shard of Shards is the
	// part of them this sweep runs (1 of 1: all).
	Seed          int64
	Seeds         int
	Shard, Shards int
	// Workers is how many seeds are simulated at once.
	Workers int
	// First stops at the first seed not as expected; Determinism runs
	// each seed twice and compares the histories' hashes.
	First, Determinism bool
	// Strategy is every seed's (Options.Strategy too).
	Strategy Strategy
	// Quiet shows no progress.
	Quiet bool
	// Out, when set, is the results file of every seed, its header
	// naming the build (Build).
	Out, Build string
	// Stdout receives the report; Stderr the progress, a bar on a
	// terminal.
	Stdout io.Writer
	Stderr *os.File
}

// Sweep simulates the sweep's seeds (c.Seed .. c.Seed+c.Seeds-1, or its
// shard's part of them), reports every seed not as expected with the
// command that replays it (Replay) and how findable each kind of failure
// is, writes each seed's result to c.Out, and returns the exit code.
func Sweep(sc *scenario.Scenario, c SweepConfig, opts Options) int {
	f := c
	from, count := f.Seed, f.Seeds
	shard, shards := max(f.Shard, 1), max(f.Shards, 1)
	if shards > 1 {
		from, count = explore.Shard(f.Seed, f.Seeds, shard, shards)
	}
	var results *explore.SweepWriter
	if f.Out != "" {
		w, closeOut, err := sweepOutput(sc, f, shard, shards, from, count)
		if err != nil {
			fmt.Fprintf(f.Stderr, "coup sim: %v\n", err)
			return verdict.ExitInput
		}
		defer closeOut()
		results = w
	}
	last := from + int64(count) - 1
	strategy := ""
	if !f.Strategy.IsRandom() {
		strategy = ", strategy " + f.Strategy.String()
	}
	if shards > 1 {
		fmt.Fprintf(f.Stdout, "%s: shard %d/%d: sweeping seeds %d..%d of %d..%d (%d workers%s)\n", sc.File, shard, shards, from, last, f.Seed, f.Seed+int64(f.Seeds)-1, f.Workers, strategy)
	} else {
		fmt.Fprintf(f.Stdout, "%s: sweeping seeds %d..%d (%d workers%s)\n", sc.File, from, last, f.Workers, strategy)
	}
	expectsViolation := !sc.Expect.ExpectValid()
	var t sweepTally
	bar := newProgress(f.Stderr, f.Stdout, count, f.Quiet)
	start := time.Now()
	// Seeds not as expected because of a violation or an undecided check
	// are printed with their first note, the first few of them; seeds
	// where an expected violation just did not occur are only listed.
	const detailed = 20
	shown := 0
	var hint atomic.Int64 // the most events a seed has recorded so far
	run := func(seed int64) (*Outcome, error) {
		o := opts
		o.EventsHint = int(hint.Load())
		var out *Outcome
		var err error
		if f.Determinism {
			out, err = Twice(sc, seed, o)
		} else {
			out, err = Simulate(sc, seed, o)
		}
		if err == nil {
			n := int64(len(out.History.Events))
			raise(&hint, n+n/8)
		}
		return out, err
	}
	Seeds(from, count, f.Workers, run, func(seed int64, out *Outcome, err error) bool {
		t.done++
		rec := explore.SeedResult{Seed: seed}
		if f.Strategy.Name == Portfolio {
			rec.Strategy = f.Strategy.For(seed).String()
		}
		defer func() {
			if results != nil {
				results.Seed(rec)
				if t.done%256 == 0 || rec.Failed() {
					results.Flush()
				}
			}
			Recycle(out) // its history is no longer needed: the next seed records into it
			bar.update(t.done, len(t.failing))
		}()
		if err != nil {
			t.broken++
			t.failing = append(t.failing, seed)
			rec.Error = err.Error()
			bar.printf("seed %d: %v\n", seed, err)
			return !f.First
		}
		t.figs.AddOutcome(out)
		res := out.Results
		rec.Valid, rec.Outcome = res.Valid.String(), res.Outcome
		if rec.Signature = explore.Signature(res, out.History); rec.Signature != "" {
			rec.Hash = Hash(out.History.Events)
			rec.Note = strings.TrimPrefix(firstNote(res), ": ")
			t.kind(rec.Signature, res.Outcome == verdict.AsExpected, seed, rec.Hash)
		}
		if res.Valid == checks.False {
			if len(t.violating) == 0 {
				t.violatingHash = rec.Hash
			}
			t.violating = append(t.violating, seed)
		}
		if f.Determinism && out.Hash != out.Rehash {
			t.nondeterministic = append(t.nondeterministic, seed)
			bar.printf("seed %d: NOT deterministic: history sha256 %s, then %s\n", seed, Short(out.Hash), Short(out.Rehash))
		}
		switch res.Outcome {
		case verdict.AsExpected:
			t.asExpected++
			return true
		case verdict.Unknown:
			t.unknown++
		default:
			t.unexpected++
		}
		t.failing = append(t.failing, seed)
		if res.Valid != checks.True && shown < detailed {
			shown++
			bar.printf("seed %d: valid=%s, %s%s\n  replay: %s   (history sha256 %s)\n",
				seed, res.Valid, res.Outcome, firstNote(res), Replay(sc.File, seed, f.Strategy), Short(rec.Hash))
		}
		return !f.First
	})
	bar.done()
	wall := time.Since(start)
	if results != nil {
		if err := results.End(t.done); err != nil {
			fmt.Fprintf(f.Stderr, "coup sim: %s: %v\n", f.Out, err)
			return verdict.ExitUnknown
		}
	}

	fmt.Fprintf(f.Stdout, "%d seeds in %s: %d as expected, %d unexpected, %d unknown", t.done, wall.Round(time.Millisecond), t.asExpected, t.unexpected, t.unknown)
	if t.broken > 0 {
		fmt.Fprintf(f.Stdout, ", %d could not run", t.broken)
	}
	fmt.Fprintln(f.Stdout)
	if len(t.failing) > shown {
		fmt.Fprintf(f.Stdout, "not as expected, all %d seeds: %s\n", len(t.failing), SeedList(t.failing))
	}
	if expectsViolation {
		if len(t.violating) == 0 {
			fmt.Fprintf(f.Stdout, "the expected violation occurred at no seed\n")
		} else {
			fmt.Fprintf(f.Stdout, "the expected violation (valid=false) occurred at %d seeds: %s\n", len(t.violating), SeedList(t.violating))
			fmt.Fprintf(f.Stdout, "  replay the first: %s   (history sha256 %s)\n", Replay(sc.File, t.violating[0], f.Strategy), Short(t.violatingHash))
		}
	}
	if len(t.failing) > 0 {
		fmt.Fprintf(f.Stdout, "replay the first seed not as expected: %s\n", Replay(sc.File, t.failing[0], f.Strategy))
	}
	PrintFindability(f.Stdout, t.kinds, t.done, func(k *FailureKind) string { return Replay(sc.File, k.First, f.Strategy) })
	if f.Determinism {
		if len(t.nondeterministic) > 0 {
			fmt.Fprintf(f.Stdout, "NOT deterministic at %d seeds: %s\n", len(t.nondeterministic), SeedList(t.nondeterministic))
		} else {
			fmt.Fprintf(f.Stdout, "deterministic: every seed, run twice, gave the same history\n")
		}
	}
	fmt.Fprintf(f.Stdout, "simulated %d deliveries and %s of virtual time in %s (%.0f deliveries/s with the checks, on %d workers)\n",
		t.figs.Delivered, t.figs.Virtual.Round(time.Millisecond), wall.Round(time.Millisecond), float64(t.figs.Delivered)/wall.Seconds(), f.Workers)
	if f.Out != "" {
		fmt.Fprintf(f.Stdout, "results of every seed: %s\n", f.Out)
	}

	code := verdict.ExitOK
	switch {
	case len(t.nondeterministic) > 0, t.unexpected > 0:
		code = verdict.ExitUnexpected
	case t.unknown > 0 || t.broken > 0:
		code = verdict.ExitUnknown
	}
	return code
}

// PrintFindability says, for each kind of failure, how often the sweep
// found it and how many seeds a fix must survive.
func PrintFindability(w io.Writer, kinds []*FailureKind, seeds int, replayOf func(*FailureKind) string) {
	if len(kinds) == 0 {
		fmt.Fprintf(w, "findability: no seed failed; %s\n", explore.Findability{Found: 0, Seeds: seeds})
		return
	}
	fmt.Fprintf(w, "findability, by kind of failure (signature):\n")
	for _, k := range kinds {
		what := "not as expected"
		if k.AsExpected {
			what = "as expected"
		}
		fmt.Fprintf(w, "  %s (%s)\n    %s\n", k.Signature, what, explore.Findability{Found: k.Seeds, Seeds: seeds})
		fmt.Fprintf(w, "    replay: %s   (history sha256 %s)\n", replayOf(k), Short(k.Hash))
	}
}

// sweepOutput creates the results file of a sweep and writes its header.
func sweepOutput(sc *scenario.Scenario, f SweepConfig, shard, shards int, from int64, count int) (*explore.SweepWriter, func(), error) {
	src, err := os.ReadFile(sc.File)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", sc.File, err)
	}
	sum := sha256.Sum256(src)
	out, err := os.Create(f.Out)
	if err != nil {
		return nil, nil, fmt.Errorf("--out: %w", err)
	}
	w := explore.NewSweepWriter(out, explore.SweepHeader{
		File: sc.File, SHA256: hex.EncodeToString(sum[:]), Scenario: sc.Name, Strategy: f.Strategy.String(),
		From: f.Seed, Seeds: f.Seeds, Shard: shard, Shards: shards, ShardFrom: from, ShardSeeds: count, Build: f.Build,
	})
	return w, func() { out.Close() }, w.Flush()
}

// raise sets x to v if v is more.
func raise(x *atomic.Int64, v int64) {
	for old := x.Load(); v > old && !x.CompareAndSwap(old, v); old = x.Load() {
	}
}

func firstNote(res *verdict.Results) string {
	if len(res.Notes) == 0 {
		return ""
	}
	return ": " + res.Notes[0]
}

// SeedList writes seeds as "1, 2, 5"; a long list is cut after 200.
func SeedList(seeds []int64) string {
	const most = 200
	var b strings.Builder
	for i, s := range seeds {
		if i == most {
			fmt.Fprintf(&b, ", … (%d more)", len(seeds)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, s)
	}
	return b.String()
}

// progress is a sweep's progress: a bar redrawn in place on a terminal,
// a line every tenth of the way otherwise.
type progress struct {
	w        io.Writer
	out      io.Writer // the report's lines
	total    int
	terminal bool
	quiet    bool
	start    time.Time
	last     time.Time
	shown    int // tenths shown, when not a terminal
	drawn    bool
}

func newProgress(f *os.File, out io.Writer, total int, quiet bool) *progress {
	p := &progress{w: f, out: out, total: total, quiet: quiet, start: time.Now()}
	if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		p.terminal = true
	}
	return p
}

func (p *progress) update(done, failing int) {
	if p.quiet {
		return
	}
	if !p.terminal {
		if tenth := done * 10 / p.total; tenth > p.shown {
			p.shown = tenth
			fmt.Fprintf(p.w, "  %d/%d seeds, %d not as expected, %s\n", done, p.total, failing, time.Since(p.start).Round(time.Millisecond))
		}
		return
	}
	if done < p.total && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	const width = 30
	fill := done * width / p.total
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d seeds  %d not as expected  %s ", strings.Repeat("#", fill), strings.Repeat(".", width-fill),
		done, p.total, failing, time.Since(p.start).Round(100*time.Millisecond))
	p.drawn = true
}

// printf prints a line of the sweep's report, clearing the bar first.
func (p *progress) printf(format string, args ...any) {
	if p.terminal && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	fmt.Fprintf(p.out, format, args...)
}

func (p *progress) done() {
	if p.terminal && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
