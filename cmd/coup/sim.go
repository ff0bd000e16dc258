package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/sim"
	"github.com/coupharness/coup/verdict"
)

const simUsage = `usage: coup sim [flags] FILE
  coup sim FILE                      simulate a scenario with its seed; save it in the store
  coup sim FILE --seed S             replay seed S
  coup sim FILE --seeds N [--first]  sweep seeds S, S+1, ... S+N-1 (S: --seed, or the scenario's)
      [--strategy random|pct[:D]|bias|portfolio] [--shard k/n] [--out RESULTS.jsonl]
  coup sim merge RESULTS.jsonl...    combine a sweep's shards; one replay per kind of failure
  coup sim FILE --seed S --shrink [--budget N] [--out shrunk.toml]
                                     shrink a failing run to a smaller scenario that fails the same way
  coup sim FILE --check-determinism  run a seed twice and compare the history hashes
  coup sim --bench [--seeds N] FILE|DIR...
                                     measure deliveries per second and virtual/real time
flags:
`

// simFlags are the flags of coup sim.
type simFlags struct {
	seed        int64
	seedSet     bool
	seeds       int
	first       bool
	determinism bool
	store       string
	workers     int
	quiet       bool
	bench       bool
	roundTrip   bool
	strategy    sim.Strategy
	shrink      bool
	budget      int
	shard       string
	out         string
	budgetSet   bool
}

func simCmd(args []string) int {
	if len(args) > 0 && args[0] == "merge" {
		return simMerge(args[1:])
	}
	var f simFlags
	fs := newFlags("sim")
	fs.Func("seed", "the seed to run (default: the scenario's)", func(s string) error {
		_, err := fmt.Sscan(s, &f.seed)
		f.seedSet = err == nil
		return err
	})
	fs.IntVar(&f.seeds, "seeds", 0, "sweep this many seeds from the first")
	fs.BoolVar(&f.first, "first", false, "stop a sweep at the first seed not as expected")
	fs.BoolVar(&f.determinism, "check-determinism", false, "run each seed twice and compare the hashes of the histories")
	fs.StringVar(&f.store, "store", "store", "the store's root folder")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "seeds simulated at once in a sweep")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar or progress lines")
	fs.BoolVar(&f.bench, "bench", false, "measure the simulator on scenarios (one core)")
	fs.BoolVar(&f.roundTrip, "round-trip", false, "pass every message through the algorithm's JSON codec, as real nodes do")
	fs.Func("strategy", "how each seed explores the scenario's open choices: random, pct[:D], bias or portfolio (default random)", func(s string) error {
		st, err := sim.ParseStrategy(s)
		f.strategy = st
		return err
	})
	fs.BoolVar(&f.shrink, "shrink", false, "shrink the run of the seed to a smaller scenario that fails the same way, written to --out (default shrunk.toml)")
	fs.IntVar(&f.budget, "budget", sim.DefaultBudget, "the most simulations a shrink spends")
	fs.StringVar(&f.shard, "shard", "", "run only part k of n (k/n, from 1/n to n/n) of the sweep's seeds")
	fs.StringVar(&f.out, "out", "", "a sweep writes each seed's result to this JSON-lines file; a shrink writes the shrunk scenario to it (default shrunk.toml)")
	files, code, ok := parseArgs(fs, simUsage, args)
	if !ok {
		return code
	}
	fs.Visit(func(fl *flag.Flag) { f.budgetSet = f.budgetSet || fl.Name == "budget" })
	if f.bench {
		return simBench(f, files)
	}
	if len(files) != 1 || f.seeds < 0 || f.workers < 1 || f.budget < 1 {
		fs.Usage()
		return verdict.ExitInput
	}
	if msg := f.conflicts(); msg != "" {
		fmt.Fprintf(os.Stderr, "coup sim: %s\n", msg)
		return verdict.ExitInput
	}
	sc, err := scenario.Load(files[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	if _, err := sim.FromScenario(sc, sc.Seed); err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	if !f.seedSet {
		f.seed = sc.Seed
	}
	opts := sim.Options{RoundTrip: f.roundTrip, Strategy: f.strategy}
	switch {
	case f.shrink:
		return simShrink(sc, f)
	case f.seeds > 0:
		return simSweep(sc, f, opts)
	case f.determinism:
		return simDeterminism(sc, f, opts)
	}
	return simOne(sc, f, opts)
}

// conflicts says what is wrong with a combination of flags, or "".
func (f *simFlags) conflicts() string {
	switch {
	case f.shrink && (f.seeds > 0 || f.determinism):
		return "--shrink shrinks one seed's run: give --seed, not --seeds or --check-determinism"
	case f.shard != "" && f.seeds == 0:
		return "--shard splits a sweep: give --seeds N too"
	case f.out != "" && !f.shrink && f.seeds == 0:
		return "--out is for a sweep (--seeds N) or a shrink (--shrink)"
	case f.budgetSet && !f.shrink:
		return "--budget bounds a shrink: give --shrink too"
	}
	return ""
}

// replay is the command that replays a seed: the strategy the seed ran
// is named unless it is random (a portfolio's seed names its turn's).
func replay(file string, seed int64, st sim.Strategy) string {
	cmd := fmt.Sprintf("coup sim %s --seed %d", shellQuote(file), seed)
	if turn := st.For(seed); !turn.IsRandom() {
		cmd += " --strategy " + turn.String()
	}
	return cmd
}

// shellQuote quotes a path for a shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// short is how a history hash is printed: its first 16 hex digits.
func short(hash string) string {
	if len(hash) > 16 {
		return hash[:16]
	}
	return hash
}

// simOne simulates one seed, saves it in the store and prints its verdict.
func simOne(sc *scenario.Scenario, f simFlags, opts sim.Options) int {
	opts.Store = f.store
	out, err := sim.Simulate(sc, f.seed, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %s: %v\n", sc.File, err)
		return verdict.ExitUnknown
	}
	strategy := ""
	if turn := f.strategy.For(f.seed); !turn.IsRandom() {
		strategy = ", strategy " + turn.String()
	}
	fmt.Printf("%s (simulated, seed %d%s)\n", sc.File, f.seed, strategy)
	fmt.Print(out.Results.Summary())
	if sig := explore.Signature(out.Results, out.History); sig != "" {
		fmt.Printf("  signature: %s\n", sig)
	}
	fmt.Printf("  store: %s\n", out.Dir)
	fmt.Printf("  history sha256 %s (sha256sum of its history.jsonl)\n", short(out.Hash))
	fmt.Printf("  simulated %s in %s: %d deliveries\n", out.Stats.Virtual, out.Wall.Round(time.Microsecond), out.Stats.Delivered)
	fmt.Printf("  replay: %s\n", replay(sc.File, f.seed, f.strategy))
	return out.Results.ExitCode
}

// simDeterminism runs one seed twice and compares the hashes.
func simDeterminism(sc *scenario.Scenario, f simFlags, opts sim.Options) int {
	out, err := sim.Twice(sc, f.seed, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %s: %v\n", sc.File, err)
		return verdict.ExitUnknown
	}
	fmt.Printf("%s, seed %d: valid=%s, %s\n", sc.File, f.seed, out.Results.Valid, out.Results.Outcome)
	fmt.Printf("  first run:  history sha256 %s\n", out.Hash)
	fmt.Printf("  second run: history sha256 %s\n", out.Rehash)
	if out.Hash != out.Rehash {
		fmt.Println("  NOT deterministic: the same seed gave two different histories")
		return verdict.ExitUnexpected
	}
	fmt.Println("  deterministic: the same seed gave the same history")
	return verdict.ExitOK
}

// sweepTally counts a sweep's seeds.
type sweepTally struct {
	done, asExpected, unexpected, unknown, broken int
	failing                                       []int64 // seeds not as expected, in order
	violating                                     []int64 // seeds with a violation
	violatingHash                                 string  // the first one's history hash
	nondeterministic                              []int64
	kinds                                         []*failureKind // by signature, in order of first seed
	figs                                          sim.Figures
}

// failureKind is the seeds of a sweep that failed one way.
type failureKind struct {
	signature  string
	asExpected bool
	seeds      int
	first      int64
	hash       string
}

// kind counts a failing seed under its signature.
func (t *sweepTally) kind(sig string, asExpected bool, seed int64, hash string) {
	for _, k := range t.kinds {
		if k.signature == sig {
			k.seeds++
			return
		}
	}
	t.kinds = append(t.kinds, &failureKind{signature: sig, asExpected: asExpected, seeds: 1, first: seed, hash: hash})
}

// simSweep simulates the sweep's seeds (f.seed .. f.seed+f.seeds-1, or
// its shard's part of them), reports every seed not as expected with the
// command that replays it and how findable each kind of failure is, and
// writes each seed's result with --out.
func simSweep(sc *scenario.Scenario, f simFlags, opts sim.Options) int {
	from, count := f.seed, f.seeds
	shard, shards := 1, 1
	if f.shard != "" {
		var err error
		if shard, shards, err = explore.ParseShard(f.shard); err != nil {
			fmt.Fprintf(os.Stderr, "coup sim: --shard: %v\n", err)
			return verdict.ExitInput
		}
		from, count = explore.Shard(f.seed, f.seeds, shard, shards)
	}
	var results *explore.SweepWriter
	if f.out != "" {
		w, closeOut, err := sweepOutput(sc, f, shard, shards, from, count)
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup sim: %v\n", err)
			return verdict.ExitInput
		}
		defer closeOut()
		results = w
	}
	last := from + int64(count) - 1
	strategy := ""
	if !f.strategy.IsRandom() {
		strategy = ", strategy " + f.strategy.String()
	}
	if shards > 1 {
		fmt.Printf("%s: shard %d/%d: sweeping seeds %d..%d of %d..%d (%d workers%s)\n", sc.File, shard, shards, from, last, f.seed, f.seed+int64(f.seeds)-1, f.workers, strategy)
	} else {
		fmt.Printf("%s: sweeping seeds %d..%d (%d workers%s)\n", sc.File, from, last, f.workers, strategy)
	}
	expectsViolation := !sc.Expect.ExpectValid()
	var t sweepTally
	bar := newProgress(os.Stderr, count, f.quiet)
	start := time.Now()
	// Seeds not as expected because of a violation or an undecided check
	// are printed with their first note, the first few of them; seeds
	// where an expected violation just did not occur are only listed.
	const detailed = 20
	shown := 0
	var hint atomic.Int64 // the most events a seed has recorded so far
	run := func(seed int64) (*sim.Outcome, error) {
		o := opts
		o.EventsHint = int(hint.Load())
		var out *sim.Outcome
		var err error
		if f.determinism {
			out, err = sim.Twice(sc, seed, o)
		} else {
			out, err = sim.Simulate(sc, seed, o)
		}
		if err == nil {
			n := int64(len(out.History.Events))
			raise(&hint, n+n/8)
		}
		return out, err
	}
	sim.Seeds(from, count, f.workers, run, func(seed int64, out *sim.Outcome, err error) bool {
		t.done++
		rec := explore.SeedResult{Seed: seed}
		if f.strategy.Name == sim.Portfolio {
			rec.Strategy = f.strategy.For(seed).String()
		}
		defer func() {
			if results != nil {
				results.Seed(rec)
				if t.done%256 == 0 || rec.Failed() {
					results.Flush()
				}
			}
			sim.Recycle(out) // its history is no longer needed: the next seed records into it
			bar.update(t.done, len(t.failing))
		}()
		if err != nil {
			t.broken++
			t.failing = append(t.failing, seed)
			rec.Error = err.Error()
			bar.printf("seed %d: %v\n", seed, err)
			return !f.first
		}
		t.figs.AddOutcome(out)
		res := out.Results
		rec.Valid, rec.Outcome = res.Valid.String(), res.Outcome
		if rec.Signature = explore.Signature(res, out.History); rec.Signature != "" {
			rec.Hash = sim.Hash(out.History.Events)
			rec.Note = strings.TrimPrefix(firstNote(res), ": ")
			t.kind(rec.Signature, res.Outcome == verdict.AsExpected, seed, rec.Hash)
		}
		if res.Valid == checks.False {
			if len(t.violating) == 0 {
				t.violatingHash = rec.Hash
			}
			t.violating = append(t.violating, seed)
		}
		if f.determinism && out.Hash != out.Rehash {
			t.nondeterministic = append(t.nondeterministic, seed)
			bar.printf("seed %d: NOT deterministic: history sha256 %s, then %s\n", seed, short(out.Hash), short(out.Rehash))
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
				seed, res.Valid, res.Outcome, firstNote(res), replay(sc.File, seed, f.strategy), short(rec.Hash))
		}
		return !f.first
	})
	bar.done()
	wall := time.Since(start)
	if results != nil {
		if err := results.End(t.done); err != nil {
			fmt.Fprintf(os.Stderr, "coup sim: %s: %v\n", f.out, err)
			return verdict.ExitUnknown
		}
	}

	fmt.Printf("%d seeds in %s: %d as expected, %d unexpected, %d unknown", t.done, wall.Round(time.Millisecond), t.asExpected, t.unexpected, t.unknown)
	if t.broken > 0 {
		fmt.Printf(", %d could not run", t.broken)
	}
	fmt.Println()
	if len(t.failing) > shown {
		fmt.Printf("not as expected, all %d seeds: %s\n", len(t.failing), seedList(t.failing))
	}
	if expectsViolation {
		if len(t.violating) == 0 {
			fmt.Printf("the expected violation occurred at no seed\n")
		} else {
			fmt.Printf("the expected violation (valid=false) occurred at %d seeds: %s\n", len(t.violating), seedList(t.violating))
			fmt.Printf("  replay the first: %s   (history sha256 %s)\n", replay(sc.File, t.violating[0], f.strategy), short(t.violatingHash))
		}
	}
	if len(t.failing) > 0 {
		fmt.Printf("replay the first seed not as expected: %s\n", replay(sc.File, t.failing[0], f.strategy))
	}
	printFindability(t.kinds, t.done, func(k *failureKind) string { return replay(sc.File, k.first, f.strategy) })
	if f.determinism {
		if len(t.nondeterministic) > 0 {
			fmt.Printf("NOT deterministic at %d seeds: %s\n", len(t.nondeterministic), seedList(t.nondeterministic))
		} else {
			fmt.Printf("deterministic: every seed, run twice, gave the same history\n")
		}
	}
	fmt.Printf("simulated %d deliveries and %s of virtual time in %s (%.0f deliveries/s with the checks, on %d workers)\n",
		t.figs.Delivered, t.figs.Virtual.Round(time.Millisecond), wall.Round(time.Millisecond), float64(t.figs.Delivered)/wall.Seconds(), f.workers)
	if f.out != "" {
		fmt.Printf("results of every seed: %s\n", f.out)
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

// printFindability says, for each kind of failure, how often the sweep
// found it and how many seeds a fix must survive.
func printFindability(kinds []*failureKind, seeds int, replayOf func(*failureKind) string) {
	if len(kinds) == 0 {
		fmt.Printf("findability: no seed failed; %s\n", explore.Findability{Found: 0, Seeds: seeds})
		return
	}
	fmt.Printf("findability, by kind of failure (signature):\n")
	for _, k := range kinds {
		what := "not as expected"
		if k.asExpected {
			what = "as expected"
		}
		fmt.Printf("  %s (%s)\n    %s\n", k.signature, what, explore.Findability{Found: k.seeds, Seeds: seeds})
		fmt.Printf("    replay: %s   (history sha256 %s)\n", replayOf(k), short(k.hash))
	}
}

// sweepOutput creates the results file of a sweep and writes its header.
func sweepOutput(sc *scenario.Scenario, f simFlags, shard, shards int, from int64, count int) (*explore.SweepWriter, func(), error) {
	src, err := os.ReadFile(sc.File)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", sc.File, err)
	}
	sum := sha256.Sum256(src)
	out, err := os.Create(f.out)
	if err != nil {
		return nil, nil, fmt.Errorf("--out: %w", err)
	}
	w := explore.NewSweepWriter(out, explore.SweepHeader{
		File: sc.File, SHA256: hex.EncodeToString(sum[:]), Scenario: sc.Name, Strategy: f.strategy.String(),
		From: f.seed, Seeds: f.seeds, Shard: shard, Shards: shards, ShardFrom: from, ShardSeeds: count, Build: build(),
	})
	return w, func() { out.Close() }, w.Flush()
}

// build names this coup build: its module version or commit (marked
// "+dirty" when built from a changed tree) and the Go release.
func build() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return runtime.Version()
	}
	version := info.Main.Version
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		version = rev
		if dirty {
			version += "+dirty"
		}
	}
	return version + " " + info.GoVersion
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

// seedList writes seeds as "1, 2, 5"; a long list is cut after 200.
func seedList(seeds []int64) string {
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

// simBench simulates scenarios for a few seeds each, on one core, and
// prints deliveries per second and virtual time per real time.
func simBench(f simFlags, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, "usage: coup sim --bench [--seeds N] [--seed S] FILE|DIR...\n")
		return verdict.ExitInput
	}
	files, err := scenarioFiles(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	n := f.seeds
	if n == 0 {
		n = 20
	}
	runtime.GOMAXPROCS(1) // the figures are for one core
	fmt.Println("deliveries per second of processor time on one core (\"with checks\": the checks' time counted too);")
	fmt.Println("virtual time simulated per unit of wall time, checks aside")
	fmt.Printf("%-38s %5s %10s %13s %13s %12s\n", "scenario", "runs", "deliveries", "deliveries/s", "with checks", "virtual/wall")
	var total sim.Figures
	for _, file := range files {
		sc, err := scenario.Load(file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
			return verdict.ExitInput
		}
		from := sc.Seed
		if f.seedSet {
			from = f.seed
		}
		figs, err := sim.Bench(sc, from, n)
		if errors.Is(err, sim.ErrNotSimulable) {
			fmt.Printf("%-38s skipped: not a state machine (a foreign program, or real processes only)\n", sc.Name)
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup: %s: %v\n", file, err)
			return verdict.ExitUnknown
		}
		printFigures(sc.Name, figs)
		total.Add(figs)
	}
	printFigures("total", total)
	return verdict.ExitOK
}

func printFigures(name string, f sim.Figures) {
	fmt.Printf("%-38s %5d %10d %13.0f %13.0f %11.0fx\n", name, f.Runs, f.Delivered, f.DeliveriesPerSecond(), f.DeliveriesPerSecondChecked(), f.Speedup())
}

// progress is a sweep's progress: a bar redrawn in place on a terminal,
// a line every tenth of the way otherwise.
type progress struct {
	w        io.Writer
	total    int
	terminal bool
	quiet    bool
	start    time.Time
	last     time.Time
	shown    int // tenths shown, when not a terminal
	drawn    bool
}

func newProgress(f *os.File, total int, quiet bool) *progress {
	p := &progress{w: f, total: total, quiet: quiet, start: time.Now()}
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
	fmt.Printf(format, args...)
}

func (p *progress) done() {
	if p.terminal && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
