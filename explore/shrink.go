package explore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// DefaultBudget is how many runs a shrink may spend by default on an
// exact Runner (the simulator): a few seconds for the catalogue's
// scenarios.
const DefaultBudget = 1000

// DefaultRealBudget is how many runs a shrink may spend by default on a
// Runner that is not exact: each run takes seconds, and each candidate
// several runs.
const DefaultRealBudget = 150

// DefaultShrinkSeeds is how many other seeds a shrink tries a candidate
// with, by default, once the current seed shrinks no further (exact
// Runners only).
const DefaultShrinkSeeds = 3

// DefaultRuns is how many runs measure a failure's rate on a Runner that
// is not exact: before a shrink, to find the failure and how often it
// shows, and after it, in fresh runs of the shrunk scenario.
const DefaultRuns = 10

// ErrNothingToShrink is the error for a run that is as expected and shows
// no violation.
var ErrNothingToShrink = errors.New("the run shows no violation and is as expected: nothing to shrink")

// ShrinkOptions configure Shrink.
type ShrinkOptions struct {
	// Budget is the most runs the shrink spends, the first ones that find
	// the failure included when it runs them (default DefaultBudget on an
	// exact Runner, DefaultRealBudget on another). Shrink always stops
	// within it.
	Budget int
	// Time, when positive, bounds the shrink's wall time: no run starts
	// that would end past it, were it as long as the runs so far (or
	// RunTime) on average.
	Time time.Duration
	// Seeds is how many other seeds a candidate is tried with on an exact
	// Runner when the current seed no longer shows the failure; they are
	// tried only once nothing shrinks with the current seed (default
	// DefaultShrinkSeeds; negative: none).
	Seeds int
	// Runs is how many runs measure the original failure on a Runner that
	// is not exact (default DefaultRuns), when Signature is not given.
	Runs int
	// Signature, when set, is the failure to keep, and First a run of
	// the original that failed so, with Rate how often it did; a shrink
	// that is not given them runs the original to find them (once on an
	// exact Runner, Runs times on another: the commonest failure).
	Signature string
	First     *Run
	Rate      Rate
	// Prefer, when set, is the failure to keep when the runs that find it
	// show two or more ways equally often (see Measure).
	Prefer string
	// Rule is the sequential rule that decides a candidate on a Runner
	// that is not exact (default RuleFor(the original's rate)).
	Rule *Rule
	// Grain is the finest step of a time the shrink shortens (durations,
	// fors, delays): 1ms on an exact Runner, 50ms on another by default,
	// where a real run's timing varies by more than a millisecond.
	Grain time.Duration
	// Log, when set, is told each step that shrank the scenario.
	Log func(step string)
	// Progress, when set, is told after every run.
	Progress func(Progress)
	// Tried, when set, is told of every candidate once its runs decide
	// it (or the budget, or a signal, ends them first).
	Tried func(Trial)
	// RunTime is how long a run is expected to take, until the shrink has
	// timed its own: with Time, no run starts that would end past it.
	RunTime time.Duration
}

// Trial is a candidate as its runs decided it.
type Trial struct {
	// Candidate is its number, from 1; Faults, Nodes and Duration are its
	// size.
	Candidate     int
	Faults, Nodes int
	Duration      time.Duration
	// Kept is whether it was kept; Undecided is true when the budget or
	// a signal ended its runs before the rule decided (it is dropped).
	Kept, Undecided bool
	// Same of Tried of its runs failed the same way.
	Same, Tried int
	// Runs is the runs the shrink has spent, Elapsed its wall time.
	Runs    int
	Elapsed time.Duration
}

// Progress is a shrink under way, as told after every run.
type Progress struct {
	// Runs is the runs spent, of Budget; Elapsed the wall time.
	Runs, Budget int
	Elapsed      time.Duration
	// Candidates counts the candidates tried, this one included; Same
	// and Tried are this candidate's runs that failed the same way, and
	// its runs.
	Candidates  int
	Same, Tried int
	// Steps counts the steps kept so far; Faults and Nodes are the
	// current scenario's.
	Steps, Faults, Nodes int
}

// Rate is how often a scenario failed the same way: in Same of Runs
// runs.
type Rate struct{ Same, Runs int }

func (r Rate) String() string { return fmt.Sprintf("%d of %d", r.Same, r.Runs) }

// Fraction is Same/Runs (0 without runs).
func (r Rate) Fraction() float64 {
	if r.Runs == 0 {
		return 0
	}
	return float64(r.Same) / float64(r.Runs)
}

// Size is how big a failing run is.
type Size struct {
	// Faults are the scenario's [[faults]] entries; Occurrences the fault
	// starts the history records.
	Faults, Occurrences int
	Nodes               int
	// Messages are the messages sent; Events the history's events.
	Messages int64
	Events   int
	// Duration and Recovery are the scenario's.
	Duration, Recovery time.Duration
}

// ShrinkResult is what a shrink found.
type ShrinkResult struct {
	// Scenario is the smallest scenario found that fails the same way;
	// on an exact Runner its Seed is the seed it fails at.
	Scenario *scenario.Scenario
	// Signature is the failure both share (see Signature).
	Signature string
	// Original and Shrunk are the sizes of a failing run of the original
	// and of the shrunk scenario.
	Original, Shrunk Size
	// Runs is the number of runs spent.
	Runs int
	// Steps say what shrank, in order.
	Steps []string
	// Exhausted is true when the budget ran out before no step was left
	// to try: a bigger budget may shrink further.
	Exhausted bool
	// Interrupted is true when the context ended the shrink: Scenario is
	// the best found until then.
	Interrupted bool
	// Exact is the Runner's Exact.
	Exact bool
	// Rate is how often the original failed the same way when measured
	// (1 of 1 on an exact Runner); Kept is how often the shrunk scenario
	// did in the trial that kept it (the original's Rate if no step
	// shrank it).
	Rate, Kept Rate
	// Run is a run of the shrunk scenario that failed the same way.
	Run *Run
}

// Shrink searches for a smaller scenario that fails the way sc fails:
// the same Signature. It is delta debugging over the fault schedule, as
// DEMi (NSDI 2016) does over a failing run: it removes faults (ddmin),
// turns repeated and randomly targeted faults into their occurrences in
// the failing history and removes those, weakens what is left (replace
// → crash → pause; a shorter for; lower probabilities and delays; a clock
// rate nearer 1), removes nodes and initiators, fewer clients, shortens
// the duration, and, when only safety checks fail, the recovery. The
// moves change scenarios only; each candidate is a scenario a person can
// read and run, and r runs it.
//
// How a candidate is judged depends on r. On an exact Runner (the
// simulator) one run at the candidate's seed decides; when the current
// seed shrinks no further, candidates are tried with a few other seeds,
// and a seed that shows the failure is kept with the candidate: the
// shrink is then deterministic. On another Runner (real processes, real
// servers) a run does not replay: each candidate runs until a sequential
// rule (Rule) decides whether it fails the same way as often as the
// original did, and a time-triggered fault may become the event trigger
// that explains it (a leader change, a lock grant) rather than its time.
//
// The first runs find the failure: the run of sc on an exact Runner;
// opts.Runs runs of sc on another, whose commonest failure is kept,
// unless opts.Signature gives it. The context stops the shrink between
// runs (and a run under way, as the Runner does): the result is then the
// best found, with Interrupted set.
func Shrink(ctx context.Context, r Runner, sc *scenario.Scenario, opts ShrinkOptions) (*ShrinkResult, error) {
	exact := r.Exact()
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
		if !exact {
			opts.Budget = DefaultRealBudget
		}
	}
	if opts.Seeds == 0 {
		opts.Seeds = DefaultShrinkSeeds
	}
	if opts.Runs <= 0 {
		opts.Runs = DefaultRuns
	}
	if opts.Grain <= 0 {
		opts.Grain = time.Millisecond
		if !exact {
			opts.Grain = 50 * time.Millisecond
		}
	}
	if opts.Rule != nil {
		if err := opts.Rule.Check(); err != nil {
			return nil, err
		}
	}
	sh := &shrinker{ctx: ctx, runner: r, exact: exact, opts: opts, file: sc.File, began: time.Now(), tried: map[string]bool{}, ran: map[string]bool{}}
	first, rate, err := sh.find(sc)
	if err != nil {
		return nil, err
	}
	cur, err := clone(sc)
	if err != nil {
		first.Free()
		return nil, err
	}
	sh.cur, sh.out, sh.kept = cur, first, rate
	if cur.Explore != nil {
		// A shrunk scenario is its schedule: the vocabulary a campaign
		// drew it from plays no part in its runs, and may name nodes a
		// smaller scenario no longer has.
		cur.Explore = nil
		sh.step("the [explore] table left out")
	}
	if !exact {
		rule := RuleFor(rate.Fraction())
		if opts.Rule != nil {
			rule = *opts.Rule
		}
		sh.rule = rule
	}
	res := &ShrinkResult{Signature: sh.sig, Original: sizeOf(cur, first), Exact: exact, Rate: rate}
	for !sh.spent() {
		if sh.round() {
			continue
		}
		if !exact || opts.Seeds < 0 || sh.stopped() {
			break
		}
		sh.withSeeds = true
		progress := sh.round()
		sh.withSeeds = false
		if !progress {
			break
		}
	}
	res.Scenario, res.Run, res.Kept = sh.cur, sh.out, sh.kept
	res.Shrunk = sizeOf(sh.cur, sh.out)
	res.Runs, res.Steps = sh.runs, sh.steps
	res.Interrupted = ctx.Err() != nil
	res.Exhausted = sh.exhausted && !res.Interrupted
	return res, nil
}

// find runs the original to find the failure to keep (unless the options
// give it): one run on an exact Runner; opts.Runs runs on another, whose
// commonest failure, and how often it showed, are kept.
func (sh *shrinker) find(sc *scenario.Scenario) (*Run, Rate, error) {
	if sh.opts.Signature != "" && sh.opts.First != nil {
		sh.sig = sh.opts.Signature
		rate := sh.opts.Rate
		if rate.Runs == 0 {
			rate = Rate{1, 1}
		}
		return sh.opts.First, rate, nil
	}
	n := 1
	if !sh.exact {
		n = sh.opts.Runs
	}
	m, err := Measure(sh.ctx, sh.runner, sc, n, sh.opts.Signature, sh.opts.Prefer, func(int, string, error) { sh.runs++ })
	if err != nil {
		return nil, Rate{}, err
	}
	if m.Run == nil && sh.opts.Signature != "" {
		return nil, Rate{}, fmt.Errorf("%w: no run of %d failed as %s", ErrNothingToShrink, m.Rate.Runs, sh.opts.Signature)
	}
	if m.Run == nil {
		return nil, Rate{}, ErrNothingToShrink
	}
	sh.sig = m.Signature
	return m.Run, m.Rate, nil
}

// Measured is what Measure found.
type Measured struct {
	// Signature is the failure counted: the one asked for, or the
	// commonest ("" when no run failed).
	Signature string
	// Rate is how often it showed; Failures counts every signature seen.
	Rate     Rate
	Failures map[string]int
	// Run is the last run that failed so (nil when none did).
	Run *Run
	// Errors counts the runs that could not be carried out; Err is the
	// last one's error.
	Errors int
	Err    error
}

// Measure runs sc n times with r and counts how often it fails the way
// sig says, or, when sig is "", each way it fails with a violation,
// keeping the commonest: among equals, prefer when one of them is it (the
// failure the scenario was kept for: a campaign's kept run names its own
// signature in its file), else the first seen. On a Runner that is not
// exact, a run that failed without a violation (a check unknown, an
// expected violation missing: see Violated) is no failure to shrink: a
// smaller scenario "fails" so by showing less, down to nothing. On an
// exact Runner the one run's failure is the one to shrink, whatever it
// is. after, when set, is told after each
// run its number (from 1), its signature ("" for a run as expected) or
// the error that kept it from being carried out. A cancelled ctx ends it
// early, with the runs done. The error is for no run carried out at all.
func Measure(ctx context.Context, r Runner, sc *scenario.Scenario, n int, sig, prefer string, after func(i int, sig string, err error)) (*Measured, error) {
	m := &Measured{Failures: map[string]int{}}
	runs := map[string]*Run{}
	var order []string
	done := 0
	for i := 0; i < n && ctx.Err() == nil; i++ {
		run, err := r.Run(ctx, sc)
		if ctx.Err() != nil {
			run.Free()
			break
		}
		done++
		s := ""
		if err != nil {
			m.Errors, m.Err = m.Errors+1, err
		} else if s = Signature(run.Results, run.History); s != "" && (s == sig || (sig == "" && (Violated(s) || r.Exact()))) {
			if m.Failures[s] == 0 {
				order = append(order, s)
			}
			m.Failures[s]++
			runs[s].Free()
			runs[s] = run
			run = nil
		}
		run.Free()
		if after != nil {
			after(done, s, err)
		}
	}
	if done == 0 || m.Errors == done {
		if m.Err == nil {
			m.Err = ctx.Err()
		}
		return nil, m.Err
	}
	m.Signature = sig
	if sig == "" {
		for _, s := range order {
			if m.Failures[s] > m.Failures[m.Signature] {
				m.Signature = s
			}
		}
		if prefer != "" && m.Failures[prefer] > 0 && m.Failures[prefer] == m.Failures[m.Signature] {
			m.Signature = prefer // a tie: the failure the scenario was kept for
		}
	}
	for s, run := range runs {
		if s == m.Signature {
			m.Run = run
		} else {
			run.Free()
		}
	}
	m.Rate = Rate{m.Failures[m.Signature], done}
	return m, nil
}

// shrinker is a shrink under way: the smallest failing scenario so far
// (cur, whose Seed on an exact Runner is the seed it fails at) and one
// of its runs that failed so.
type shrinker struct {
	ctx       context.Context
	runner    Runner
	exact     bool
	opts      ShrinkOptions
	rule      Rule
	file      string
	sig       string
	cur       *scenario.Scenario
	out       *Run
	kept      Rate
	runs      int
	cands     int
	began     time.Time
	steps     []string
	withSeeds bool
	exhausted bool
	// tried holds the candidates of the trigger move already tried, so
	// that a later round does not pay for them again; ran the canonical
	// form of every candidate run (with its seed, on an exact Runner).
	tried map[string]bool
	ran   map[string]bool
	// wall and timed are the wall time of the runs timed so far, and how
	// many: their mean is what the next run is expected to take.
	wall  time.Duration
	timed int
}

// spent reports whether the shrink must stop: its budget or time is
// spent, or its context ended.
// A time budget is spent once the next run, as long as the runs so far
// took on average (RunTime before any), would end past it.
func (sh *shrinker) spent() bool {
	return sh.runs >= sh.opts.Budget || sh.stopped() ||
		(sh.opts.Time > 0 && time.Since(sh.began)+sh.nextRun() >= sh.opts.Time)
}

// nextRun is how long the next run is expected to take.
func (sh *shrinker) nextRun() time.Duration {
	if sh.timed == 0 {
		return sh.opts.RunTime
	}
	return sh.wall / time.Duration(sh.timed)
}

func (sh *shrinker) stopped() bool { return sh.ctx.Err() != nil }

func (sh *shrinker) run(sc *scenario.Scenario) (*Run, error) {
	sh.runs++
	began := time.Now()
	out, err := sh.runner.Run(sh.ctx, sc)
	sh.wall += time.Since(began)
	sh.timed++
	return out, err
}

// decided tells Tried of the candidate just decided.
func (sh *shrinker) decided(cand *scenario.Scenario, kept, undecided bool, same, tried int) {
	if sh.opts.Tried == nil {
		return
	}
	sh.opts.Tried(Trial{Candidate: sh.cands, Faults: len(cand.Faults), Nodes: cand.Nodes, Duration: cand.Duration.D,
		Kept: kept, Undecided: undecided, Same: same, Tried: tried, Runs: sh.runs, Elapsed: time.Since(sh.began)})
}

// step records a step that shrank the scenario.
func (sh *shrinker) step(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	sh.steps = append(sh.steps, s)
	if sh.opts.Log != nil {
		sh.opts.Log(s)
	}
}

func (sh *shrinker) progress(same, tried int) {
	if sh.opts.Progress == nil {
		return
	}
	sh.opts.Progress(Progress{
		Runs: sh.runs, Budget: sh.opts.Budget, Elapsed: time.Since(sh.began),
		Candidates: sh.cands, Same: same, Tried: tried,
		Steps: len(sh.steps), Faults: len(sh.cur.Faults), Nodes: sh.cur.Nodes,
	})
}

// try runs a candidate and keeps it if it fails the same way (see
// Shrink for how each kind of Runner decides). A candidate that is no
// valid scenario costs nothing. ok is whether it was kept; stop, whether
// the shrink must stop.
//
// No schedule runs twice (at a seed, on an exact Runner): a candidate
// whose canonical form (canonical) is the current scenario's, or one
// tried before, is not run again: a move may make what another made (a
// second removal of faults after a step that changed nothing), and a
// round with seeds runs each candidate's current seed once.
func (sh *shrinker) try(cand *scenario.Scenario) (ok, stop bool) {
	valid, err := parseAs(sh.cur, sh.file, string(cand.Encode("")))
	if err != nil {
		return false, sh.spent()
	}
	if sh.ran == nil {
		sh.ran = map[string]bool{}
	}
	key := canonical(valid)
	if key == canonical(sh.cur) && valid.Seed == sh.cur.Seed {
		return false, sh.spent()
	}
	if sh.exact {
		return sh.tryExact(valid, key)
	}
	if k := seeded(key, valid.Seed); sh.ran[k] {
		return false, sh.spent()
	} else {
		sh.ran[k] = true
	}
	sh.cands++
	return sh.tryStatistical(valid)
}

// seeded is a canonical form at a seed.
func seeded(key string, seed int64) string { return fmt.Sprintf("%s\x00seed %d", key, seed) }

// canonical is a scenario's canonical form but for its seed: its file,
// with its faults in the order of their own tables' text and the nodes
// each names in order, so that two candidates of the same schedule have
// one form however a move ordered them.
func canonical(sc *scenario.Scenario) string {
	c := *sc
	c.Seed = 0
	c.Faults = make([]scenario.Fault, len(sc.Faults))
	texts := make([]string, len(sc.Faults))
	for i, f := range sc.Faults {
		if f.Target.Names != nil {
			f.Target.Names = slices.Sorted(slices.Values(f.Target.Names))
		}
		one := *sc
		one.Faults = []scenario.Fault{f}
		c.Faults[i], texts[i] = f, string(one.Encode(""))
	}
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(texts[a], texts[b]) })
	faults := make([]scenario.Fault, len(order))
	for i, j := range order {
		faults[i] = c.Faults[j]
	}
	c.Faults = faults
	return string(c.Encode(""))
}

// tryExact runs a candidate at the current seed (and, in a round with
// seeds, at a few others), at each seed once in the whole shrink: one
// run that fails the same way keeps it.
func (sh *shrinker) tryExact(valid *scenario.Scenario, key string) (ok, stop bool) {
	var seeds []int64
	for i := 0; i == 0 || (sh.withSeeds && i <= sh.opts.Seeds); i++ {
		seed := sh.cur.Seed + int64(i)
		if k := seeded(key, seed); !sh.ran[k] {
			sh.ran[k] = true
			seeds = append(seeds, seed)
		}
	}
	if len(seeds) == 0 {
		return false, sh.spent()
	}
	sh.cands++
	for i, seed := range seeds {
		if sh.spent() {
			sh.exhausted = true
			return false, true
		}
		valid.Seed = seed
		out, err := sh.run(valid)
		sh.progress(0, i+1)
		if err != nil {
			continue // a candidate the driver refuses is no smaller failure
		}
		if Signature(out.Results, out.History) == sh.sig {
			if seed != sh.cur.Seed {
				sh.step("seed %d → %d", sh.cur.Seed, seed)
			}
			sh.out.Free()
			sh.cur, sh.out = valid, out
			return true, false
		}
		out.Free()
	}
	return false, sh.spent()
}

// tryStatistical runs a candidate until the rule decides whether it
// fails the same way often enough. A run that could not be carried out
// counts as one that did not fail the same way.
func (sh *shrinker) tryStatistical(valid *scenario.Scenario) (ok, stop bool) {
	var keep *Run
	same, tried := 0, 0
	for {
		if sh.spent() {
			keep.Free()
			sh.exhausted = true
			if tried > 0 {
				sh.decided(valid, false, true, same, tried)
			}
			return false, true
		}
		out, err := sh.run(valid)
		if sh.stopped() {
			out.Free() // a run cut short is no evidence
			keep.Free()
			sh.decided(valid, false, true, same, tried)
			return false, true
		}
		tried++
		if err == nil && Signature(out.Results, out.History) == sh.sig {
			same++
			keep.Free()
			keep = out
		} else {
			out.Free()
		}
		sh.progress(same, tried)
		kept, done := sh.rule.Decide(same, tried)
		if !done {
			continue
		}
		sh.decided(valid, kept, false, same, tried)
		if !kept {
			keep.Free()
			return false, sh.spent()
		}
		sh.out.Free()
		sh.cur, sh.out, sh.kept = valid, keep, Rate{same, tried}
		return true, false
	}
}

// round tries every kind of step once; it reports whether any shrank the
// scenario.
func (sh *shrinker) round() bool {
	moves := []func() bool{
		sh.removeFaults, sh.concretize, sh.removeFaults, sh.shrinkTargets,
		sh.removeNodes, sh.removeInitiators, sh.fewerClients,
		sh.weakenFaults, sh.shortenDuration, sh.shortenRecovery,
	}
	if !sh.exact {
		// Real runs take the scenario's time: a shorter run makes every
		// later candidate cheaper, so it comes first. A time is made into
		// the event that explains it before faults are weakened; on a
		// Runner that replays a time is as good as that event, and no
		// smaller, so the move is for real runs only.
		moves = []func() bool{
			sh.removeFaults, sh.concretize, sh.removeFaults,
			sh.shortenDuration, sh.shortenRecovery, sh.triggers, sh.shrinkTargets,
			sh.removeNodes, sh.removeInitiators, sh.fewerClients, sh.weakenFaults,
		}
	}
	progress := false
	for _, move := range moves {
		if sh.spent() {
			sh.exhausted = !sh.stopped()
			return false
		}
		if move() {
			progress = true
		}
	}
	return progress
}

// clone is a deep copy of a scenario, through its file.
func clone(sc *scenario.Scenario) (*scenario.Scenario, error) {
	c, err := parseAs(sc, sc.File, string(sc.Encode("")))
	if err != nil {
		return nil, fmt.Errorf("%s: the scenario does not encode to itself: %w", sc.File, err)
	}
	c.Seed = sc.Seed
	return c, nil
}

// parseAs parses a scenario's text as sc was read: for a machine of the
// caller's own (scenario.ParseMachine) or not.
func parseAs(sc *scenario.Scenario, path, src string) (*scenario.Scenario, error) {
	if sc.OwnMachine() {
		return scenario.ParseMachine(path, src)
	}
	return scenario.Parse(path, src)
}

// copyOf is a copy of a valid scenario that may be changed: its slices
// that candidates change are copied.
func copyOf(sc *scenario.Scenario) *scenario.Scenario {
	c := *sc
	c.Faults = slices.Clone(sc.Faults)
	c.IDs = slices.Clone(sc.IDs)
	c.Workload.Initiators = slices.Clone(sc.Workload.Initiators)
	c.Workload.Targets = slices.Clone(sc.Workload.Targets)
	return &c
}

func sizeOf(sc *scenario.Scenario, out *Run) Size {
	s := Size{Faults: len(sc.Faults), Nodes: sc.Nodes, Duration: sc.Duration.D, Recovery: sc.Recovery.D}
	if out == nil || out.History == nil || out.Results == nil {
		return s
	}
	for _, e := range out.History.Events {
		if e.Kind == history.KindNemesis && e.Phase == history.PhaseStart {
			s.Occurrences++
		}
	}
	s.Messages, s.Events = out.Results.Stats.Messages.Sent, len(out.History.Events)
	return s
}
