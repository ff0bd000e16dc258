package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"coup/checks"
	"coup/harness"
	"coup/harness/scenario"
	"coup/harness/sim"
)

const simUsage = `usage: coup sim [flags] FILE
  coup sim FILE                      simulate a scenario with its seed; save it in the store
  coup sim FILE --seed S             replay seed S
  coup sim FILE --seeds N [--first]  sweep seeds S, S+1, ... S+N-1 (S: --seed, or the scenario's)
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
}

func simCmd(args []string) int {
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
	files, code, ok := parseArgs(fs, simUsage, args)
	if !ok {
		return code
	}
	if f.bench {
		return simBench(f, files)
	}
	if len(files) != 1 || f.seeds < 0 || f.workers < 1 {
		fs.Usage()
		return harness.ExitInput
	}
	sc, err := scenario.Load(files[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return harness.ExitInput
	}
	if _, err := sim.FromScenario(sc, sc.Seed); err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return harness.ExitInput
	}
	if !f.seedSet {
		f.seed = sc.Seed
	}
	opts := sim.Options{RoundTrip: f.roundTrip}
	switch {
	case f.seeds > 0:
		return simSweep(sc, f, opts)
	case f.determinism:
		return simDeterminism(sc, f, opts)
	}
	return simOne(sc, f, opts)
}

// replay is the command that replays a seed.
func replay(sc *scenario.Scenario, seed int64) string {
	return fmt.Sprintf("coup sim %s --seed %d", shellQuote(sc.File), seed)
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
		return harness.ExitUnknown
	}
	fmt.Printf("%s (simulated, seed %d)\n", sc.File, f.seed)
	fmt.Print(out.Results.Summary())
	fmt.Printf("  store: %s\n", out.Dir)
	fmt.Printf("  history sha256 %s (sha256sum of its history.jsonl)\n", short(out.Hash))
	fmt.Printf("  simulated %s in %s: %d deliveries\n", out.Stats.Virtual, out.Wall.Round(time.Microsecond), out.Stats.Delivered)
	fmt.Printf("  replay: %s\n", replay(sc, f.seed))
	return out.Results.ExitCode
}

// simDeterminism runs one seed twice and compares the hashes.
func simDeterminism(sc *scenario.Scenario, f simFlags, opts sim.Options) int {
	out, err := sim.Twice(sc, f.seed, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %s: %v\n", sc.File, err)
		return harness.ExitUnknown
	}
	fmt.Printf("%s, seed %d: valid=%s, %s\n", sc.File, f.seed, out.Results.Valid, out.Results.Outcome)
	fmt.Printf("  first run:  history sha256 %s\n", out.Hash)
	fmt.Printf("  second run: history sha256 %s\n", out.Rehash)
	if out.Hash != out.Rehash {
		fmt.Println("  NOT deterministic: the same seed gave two different histories")
		return harness.ExitUnexpected
	}
	fmt.Println("  deterministic: the same seed gave the same history")
	return harness.ExitOK
}

// sweepTally counts a sweep's seeds.
type sweepTally struct {
	done, asExpected, unexpected, unknown, broken int
	failing                                       []int64 // seeds not as expected, in order
	violating                                     []int64 // seeds with a violation
	violatingHash                                 string  // the first one's history hash
	nondeterministic                              []int64
	figs                                          sim.Figures
}

// simSweep simulates seeds f.seed .. f.seed+f.seeds-1 and reports every
// seed not as expected, with the command that replays it.
func simSweep(sc *scenario.Scenario, f simFlags, opts sim.Options) int {
	last := f.seed + int64(f.seeds) - 1
	fmt.Printf("%s: sweeping seeds %d..%d (%d workers)\n", sc.File, f.seed, last, f.workers)
	expectsViolation := !sc.Expect.ExpectValid()
	var t sweepTally
	bar := newProgress(os.Stderr, f.seeds, f.quiet)
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
	sim.Seeds(f.seed, f.seeds, f.workers, run, func(seed int64, out *sim.Outcome, err error) bool {
		t.done++
		defer func() {
			sim.Recycle(out) // its history is no longer needed: the next seed records into it
			bar.update(t.done, len(t.failing))
		}()
		if err != nil {
			t.broken++
			t.failing = append(t.failing, seed)
			bar.printf("seed %d: %v\n", seed, err)
			return !f.first
		}
		t.figs.AddOutcome(out)
		res := out.Results
		if res.Valid == checks.False {
			if len(t.violating) == 0 {
				t.violatingHash = sim.Hash(out.History.Events)
			}
			t.violating = append(t.violating, seed)
		}
		if f.determinism && out.Hash != out.Rehash {
			t.nondeterministic = append(t.nondeterministic, seed)
			bar.printf("seed %d: NOT deterministic: history sha256 %s, then %s\n", seed, short(out.Hash), short(out.Rehash))
		}
		switch res.Outcome {
		case harness.AsExpected:
			t.asExpected++
			return true
		case harness.Unknown:
			t.unknown++
		default:
			t.unexpected++
		}
		t.failing = append(t.failing, seed)
		if res.Valid != checks.True && shown < detailed {
			shown++
			bar.printf("seed %d: valid=%s, %s%s\n  replay: %s   (history sha256 %s)\n",
				seed, res.Valid, res.Outcome, firstNote(res), replay(sc, seed), short(sim.Hash(out.History.Events)))
		}
		return !f.first
	})
	bar.done()
	wall := time.Since(start)

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
			fmt.Printf("  replay the first: %s   (history sha256 %s)\n", replay(sc, t.violating[0]), short(t.violatingHash))
		}
	}
	if len(t.failing) > 0 {
		fmt.Printf("replay the first seed not as expected: %s\n", replay(sc, t.failing[0]))
	}
	if f.determinism {
		if len(t.nondeterministic) > 0 {
			fmt.Printf("NOT deterministic at %d seeds: %s\n", len(t.nondeterministic), seedList(t.nondeterministic))
		} else {
			fmt.Printf("deterministic: every seed, run twice, gave the same history\n")
		}
	}
	fmt.Printf("simulated %d deliveries and %s of virtual time in %s (%.0f deliveries/s with the checks, on %d workers)\n",
		t.figs.Delivered, t.figs.Virtual.Round(time.Millisecond), wall.Round(time.Millisecond), float64(t.figs.Delivered)/wall.Seconds(), f.workers)

	code := harness.ExitOK
	switch {
	case len(t.nondeterministic) > 0, t.unexpected > 0:
		code = harness.ExitUnexpected
	case t.unknown > 0 || t.broken > 0:
		code = harness.ExitUnknown
	}
	return code
}

// raise sets x to v if v is more.
func raise(x *atomic.Int64, v int64) {
	for old := x.Load(); v > old && !x.CompareAndSwap(old, v); old = x.Load() {
	}
}

func firstNote(res *harness.Results) string {
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
		return harness.ExitInput
	}
	files, err := scenarioFiles(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return harness.ExitInput
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
			return harness.ExitInput
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
			return harness.ExitUnknown
		}
		printFigures(sc.Name, figs)
		total.Add(figs)
	}
	printFigures("total", total)
	return harness.ExitOK
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
