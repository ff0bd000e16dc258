package explore

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// flakyRunner is a Runner that is not exact: each run fails as two leaders
// with a probability the test gives for the scenario, drawn from a seeded
// source. Its history holds the test's events and, for each fault, one
// start at its time, or, for a triggered fault, at the first event its
// trigger matches.
type flakyRunner struct {
	rng    *rand.Rand
	rate   func(sc *scenario.Scenario) float64
	events []history.Event
	runs   int
	// cancel, when set, is called at the given run.
	cancel   func()
	cancelAt int
	// agreement adds a liveness check that holds to every run's results.
	agreement bool
}

var _ Runner = (*flakyRunner)(nil)

const twoLeaders = "two-leaders: nodes both believed they were the leader (no fault in force)"

func (f *flakyRunner) Run(ctx context.Context, sc *scenario.Scenario) (*Run, error) {
	f.runs++
	if f.cancel != nil && f.runs == f.cancelAt {
		f.cancel()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &verdict.Results{Checks: map[string]checks.Result{}, Order: []string{"two-leaders"}, Valid: checks.True, Outcome: verdict.AsExpected}
	res.Checks["two-leaders"] = checks.Result{Name: "two-leaders", Valid: checks.True}
	if f.agreement {
		res.Checks["agreement"] = checks.Result{Name: "agreement", Valid: checks.True}
		res.Order = append(res.Order, "agreement")
	}
	if f.rng.Float64() < f.rate(sc) {
		res.Checks["two-leaders"] = checks.Result{Name: "two-leaders", Valid: checks.False, Explanation: "n1 and n2 both believed they were the leader from 1.2s to 1.3s",
			Nodes: []string{"n1", "n2"}, Interval: &checks.Interval{From: int64(1200 * time.Millisecond), To: int64(1300 * time.Millisecond)}}
		res.Valid, res.Outcome = checks.False, verdict.Unexpected
	}
	evs := slices.Clone(f.events)
	for i, fl := range sc.Faults {
		at := fl.At.D
		if fl.When != nil {
			t := &nemesis.Trigger{Report: fl.When.Report, Process: fl.When.Process, Op: fl.When.Op, Value: fl.When.Value, Node: fl.When.Node}
			fired := false
			for _, e := range f.events {
				if time.Duration(e.Time) >= fl.At.D && t.Match(&e) {
					at, fired = time.Duration(e.Time)+time.Microsecond, true
					break
				}
			}
			if !fired {
				continue
			}
		}
		evs = append(evs, history.Event{Time: int64(at), Kind: history.KindNemesis, Phase: history.PhaseStart, Name: nameOf(i), What: fl.Kind})
		if fl.For.D > 0 {
			evs = append(evs, history.Event{Time: int64(at + fl.For.D), Kind: history.KindNemesis, Phase: history.PhaseEnd, Name: nameOf(i), What: fl.Kind})
		}
	}
	// A fault's start comes before what it does at the same time.
	sort.SliceStable(evs, func(a, b int) bool {
		if evs[a].Time != evs[b].Time {
			return evs[a].Time < evs[b].Time
		}
		return evs[a].Kind == history.KindNemesis && evs[b].Kind != history.KindNemesis
	})
	for i := range evs {
		evs[i].Index = int64(i + 1)
	}
	return &Run{Results: res, History: &history.History{Events: evs}}, nil
}

func nameOf(i int) string { return "faults[" + string(rune('0'+i)) + "]#1" }

func (*flakyRunner) Exact() bool  { return false }
func (*flakyRunner) Name() string { return "fake" }

func parse(t *testing.T, src string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("t.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

const fourFaults = `command = ["true"]
nodes = 3
duration = "2s"
recovery = "1s"
[workload]
kind = "none"
[[faults]]
kind = "loss"
probability = 0.5
at = "100ms"
for = "200ms"
[[faults]]
kind = "pause"
target = "n2"
at = "500ms"
for = "400ms"
[[faults]]
kind = "delay"
delay = "20ms"
at = "700ms"
for = "300ms"
[[faults]]
kind = "crash"
target = "n3"
at = "1s"
for = "100ms"
`

// hasPause reports whether a scenario still pauses n2.
func hasPause(sc *scenario.Scenario) bool {
	return slices.ContainsFunc(sc.Faults, func(f scenario.Fault) bool { return f.Kind == "pause" && slices.Equal(f.Target.Names, []string{"n2"}) })
}

// The rule, worked out exactly: with the original failing every time, a
// candidate that fails the same way 90% of the time is kept almost
// always, one that fails 10% of the time almost never, each within a
// few runs.
func TestRuleChance(t *testing.T) {
	r := RuleFor(1)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p                float64
		keepLo, keepHi   float64
		runsLo, runsHi   float64
		exactKeep, exact bool
	}{
		{p: 1, keepLo: 1, keepHi: 1, runsLo: 4, runsHi: 4},
		{p: 0.9, keepLo: 0.92, keepHi: 0.95, runsLo: 4, runsHi: 6},
		{p: 0.7, keepLo: 0.4, keepHi: 0.5, runsLo: 4, runsHi: 7},
		{p: 0.1, keepLo: 0, keepHi: 0.001, runsLo: 2, runsHi: 2.5},
		{p: 0, keepLo: 0, keepHi: 0, runsLo: 2, runsHi: 2},
	} {
		keep, runs := r.Chance(c.p)
		if keep < c.keepLo-1e-9 || keep > c.keepHi+1e-9 || runs < c.runsLo-1e-9 || runs > c.runsHi+1e-9 {
			t.Errorf("p = %g: kept with probability %.4f after %.2f runs on average, want [%g, %g] and [%g, %g] runs", c.p, keep, runs, c.keepLo, c.keepHi, c.runsLo, c.runsHi)
		}
	}
	// Four same-way failures keep; two other runs drop; ten runs decide,
	// by the side the evidence leans to (from 72% same-way failures).
	for _, d := range []struct {
		same, runs int
		keep, done bool
	}{
		{4, 4, true, true}, {3, 3, false, false}, {0, 2, false, true}, {1, 2, false, false},
		{6, 7, true, true}, {5, 6, false, false}, {8, 10, true, true}, {7, 10, false, true},
	} {
		if keep, done := r.Decide(d.same, d.runs); keep != d.keep || done != d.done {
			t.Errorf("%d of %d: keep %v done %v, want %v %v", d.same, d.runs, keep, done, d.keep, d.done)
		}
	}
	bad := []Rule{{P1: 0.4, P0: 0.5, Alpha: 0.1, Beta: 0.1, Max: 3}, {P1: 0.8, P0: 0.4, Alpha: 0.6, Beta: 0.1, Max: 3}, {P1: 0.8, P0: 0.4, Alpha: 0.1, Beta: 0.1}}
	for _, b := range bad {
		if b.Check() == nil {
			t.Errorf("%+v: no error", b)
		}
	}
}

// On a fake Runner with known rates, the statistical trial keeps a
// candidate that fails the same way 90% of the time and drops one that
// does 10% of the time, as the rule's exact figures say, and never
// spends more than the rule's Max runs on one.
func TestStatisticalTrial(t *testing.T) {
	base := parse(t, fourFaults)
	for _, c := range []struct {
		p      float64
		lo, hi int // kept, of 200
	}{{0.9, 175, 200}, {0.1, 0, 2}} {
		f := &flakyRunner{rng: rand.New(rand.NewPCG(1, 2)), rate: func(*scenario.Scenario) float64 { return c.p }}
		kept := 0
		for range 200 {
			first, _ := f.Run(context.Background(), base)
			sh := &shrinker{ctx: context.Background(), runner: f, opts: ShrinkOptions{Budget: 1 << 30, Grain: 50 * time.Millisecond}, rule: RuleFor(1), file: base.File, sig: twoLeaders, cur: base, out: first, tried: map[string]bool{}}
			before := f.runs
			cand := copyOf(base) // a candidate other than the current scenario, which is not run again
			cand.Duration.D -= time.Millisecond
			ok, stop := sh.try(cand)
			if stop {
				t.Fatal("the trial stopped the shrink")
			}
			if n := f.runs - before; n > sh.rule.Max {
				t.Fatalf("p = %g: %d runs for one candidate", c.p, n)
			}
			if ok {
				kept++
				if sh.kept.Same == 0 || Signature(sh.out.Results, sh.out.History) != twoLeaders {
					t.Fatalf("kept on %v, with a run that fails as %q", sh.kept, Signature(sh.out.Results, sh.out.History))
				}
			}
		}
		if kept < c.lo || kept > c.hi {
			t.Errorf("p = %g: kept %d of 200, want %d to %d", c.p, kept, c.lo, c.hi)
		}
	}
}

// A shrink on a fake Runner whose failure needs one fault (the pause of
// n2: 90% with it, 10% without) ends with that fault alone, within its
// budget, having measured the original first.
func TestStatisticalShrink(t *testing.T) {
	sc := parse(t, fourFaults)
	f := &flakyRunner{rng: rand.New(rand.NewPCG(3, 4)), rate: func(sc *scenario.Scenario) float64 {
		if hasPause(sc) {
			return 0.9
		}
		return 0.1
	}}
	var steps []string
	progressed := 0
	res, err := Shrink(context.Background(), f, sc, ShrinkOptions{Budget: 120, Log: func(s string) { steps = append(steps, s) }, Progress: func(p Progress) {
		if p.Runs > p.Budget || p.Tried > RuleFor(1).Max {
			t.Errorf("progress %+v", p)
		}
		progressed++
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d runs, rate %v, kept %v, steps %q", res.Runs, res.Rate, res.Kept, steps)
	if res.Signature != twoLeaders || res.Rate.Runs != DefaultRuns || res.Rate.Same < 6 {
		t.Errorf("signature %q, rate %v", res.Signature, res.Rate)
	}
	if len(res.Scenario.Faults) != 1 || !hasPause(res.Scenario) {
		t.Errorf("shrunk to:\n%s\nsteps %q", res.Scenario.Encode(""), steps)
	}
	if res.Runs > 120 || f.runs != res.Runs || progressed != res.Runs-DefaultRuns {
		t.Errorf("%d runs (the runner saw %d, progress %d), budget 120", res.Runs, f.runs, progressed)
	}
	if res.Kept.Same == 0 || res.Shrunk.Faults != 1 || res.Original.Faults != 4 {
		t.Errorf("kept %v, sizes %+v → %+v", res.Kept, res.Original, res.Shrunk)
	}
	if got := res.Scenario.Faults[0].For.D; got < 50*time.Millisecond {
		t.Errorf("the pause lasts %s, below the grain", got)
	}
}

// A shrink that is interrupted returns the best scenario so far; one whose
// runs never fail has nothing to shrink; a rule that cannot decide is
// refused before any run.
func TestStatisticalShrinkStops(t *testing.T) {
	sc := parse(t, fourFaults)
	ctx, cancel := context.WithCancel(context.Background())
	f := &flakyRunner{rng: rand.New(rand.NewPCG(5, 6)), rate: func(*scenario.Scenario) float64 { return 1 }, cancel: cancel, cancelAt: 15}
	res, err := Shrink(ctx, f, sc, ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Exhausted || f.runs != 15 || len(res.Scenario.Faults) >= 4 {
		t.Errorf("interrupted %v, exhausted %v, %d runs, %d faults", res.Interrupted, res.Exhausted, f.runs, len(res.Scenario.Faults))
	}
	never := &flakyRunner{rng: rand.New(rand.NewPCG(5, 6)), rate: func(*scenario.Scenario) float64 { return 0 }}
	if _, err := Shrink(context.Background(), never, sc, ShrinkOptions{}); !errors.Is(err, ErrNothingToShrink) {
		t.Errorf("never fails: %v", err)
	}
	if never.runs != DefaultRuns {
		t.Errorf("%d runs to find no failure, want %d", never.runs, DefaultRuns)
	}
	if _, err := Shrink(context.Background(), never, sc, ShrinkOptions{Rule: &Rule{P1: 0.5, P0: 0.6}}); err == nil || never.runs != DefaultRuns {
		t.Errorf("a rule with P0 > P1: %v, after %d runs", err, never.runs-DefaultRuns)
	}
}

// Measure keeps the commonest failure and one run that shows it.
func TestMeasure(t *testing.T) {
	sc := parse(t, fourFaults)
	f := &flakyRunner{rng: rand.New(rand.NewPCG(7, 8)), rate: func(*scenario.Scenario) float64 { return 0.7 }}
	m, err := Measure(context.Background(), f, sc, 40, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Signature != twoLeaders || m.Rate.Runs != 40 || m.Rate.Same < 20 || m.Rate.Same > 36 || m.Run == nil || Signature(m.Run.Results, m.Run.History) != twoLeaders {
		t.Errorf("%q %v %v", m.Signature, m.Rate, m.Run)
	}
}

// leaderChange is a hand-made history: three nodes elect n1 at about
// 100ms, n1 crashes at 1s, and n2 is elected, every node reporting it
// between 1.15s and 1.17s; a pause then begins at 1.2s.
func leaderChange() []history.Event {
	rep := func(ms int, node, leader string) history.Event {
		return history.Event{Time: int64(time.Duration(ms) * time.Millisecond), Kind: history.KindReport, Node: node, What: history.ReportLeader, Value: leader}
	}
	return []history.Event{
		{Kind: history.KindProcess, What: history.ProcStart, Node: "n1"},
		{Kind: history.KindProcess, What: history.ProcStart, Node: "n2"},
		{Kind: history.KindProcess, What: history.ProcStart, Node: "n3"},
		rep(100, "n1", "n1"), rep(102, "n2", "n1"), rep(103, "n3", "n1"),
		{Time: int64(time.Second), Kind: history.KindProcess, What: history.ProcCrash, Node: "n1"},
		rep(1001, "n2", ""), rep(1002, "n3", ""),
		rep(1150, "n2", "n2"), rep(1170, "n3", "n2"),
	}
}

const pauseAfterChange = `command = ["true"]
nodes = 3
duration = "3s"
[workload]
kind = "none"
[[faults]]
kind = "crash"
target = "n1"
at = "1s"
[[faults]]
kind = "pause"
target = "leader"
at = "1.2s"
for = "300ms"
`

// The pause at 1.2s followed the leader change of 1.15s–1.17s: its first
// explanation is a leader report, armed halfway between the reports of
// the lost leader (1.001s–1.002s) and those of the change, so that it
// fires on the change; its second the crash at 1s (armed from the
// start).
func TestExplanations(t *testing.T) {
	sc := parse(t, pauseAfterChange)
	f := &flakyRunner{rng: rand.New(rand.NewPCG(1, 1)), rate: func(*scenario.Scenario) float64 { return 1 }, events: leaderChange()}
	run, _ := f.Run(context.Background(), sc)
	xs := explanations(sc, 1, run.History)
	if len(xs) != 2 {
		t.Fatalf("%d explanations: %+v", len(xs), xs)
	}
	if w := xs[0].when; w != (scenario.When{Report: "leader"}) || xs[0].at != 1076*time.Millisecond || xs[0].after != 30*time.Millisecond {
		t.Errorf("first: %+v armed at %s, %s after", w, xs[0].at, xs[0].after)
	}
	if w := xs[1].when; w != (scenario.When{Process: "crash"}) || xs[1].at != 0 {
		t.Errorf("second: %+v armed at %s", w, xs[1].at)
	}
	// Armed so, the trigger fires on the change in the failing history.
	tr := &nemesis.Trigger{Report: "leader"}
	for _, e := range run.History.Events {
		if time.Duration(e.Time) >= xs[0].at && tr.Match(&e) {
			if e.Time != int64(1150*time.Millisecond) {
				t.Errorf("the trigger fires at %s", time.Duration(e.Time))
			}
			break
		}
	}
	// The crash itself started at a time with nothing before it to
	// explain it within the window; a repeated or triggered fault has no
	// explanation.
	if xs := explanations(sc, 0, run.History); len(xs) != 0 {
		t.Errorf("the crash: %+v", xs)
	}
	trig := copyOf(sc)
	trig.Faults[1].When = &scenario.When{Report: "leader"}
	if xs := explanations(trig, 1, run.History); len(xs) != 0 {
		t.Errorf("a triggered fault: %+v", xs)
	}
}

// On a Runner that is not exact, a shrink turns the pause's time into
// the leader change that explains it when, so triggered, the run fails
// the same way more often (95%) than at the time (60%).
func TestTriggerMove(t *testing.T) {
	sc := parse(t, pauseAfterChange)
	f := &flakyRunner{rng: rand.New(rand.NewPCG(9, 9)), events: leaderChange(), rate: func(sc *scenario.Scenario) float64 {
		for _, fl := range sc.Faults {
			if fl.Kind == "pause" && fl.When != nil && fl.When.Report == "leader" {
				return 0.95
			}
			if fl.Kind == "pause" {
				return 0.6
			}
		}
		return 0
	}}
	var steps []string
	res, err := Shrink(context.Background(), f, sc, ShrinkOptions{Budget: 150, Log: func(s string) { steps = append(steps, s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d runs, rate %v, kept %v, steps %q", res.Runs, res.Rate, res.Kept, steps)
	var pause *scenario.Fault
	for i := range res.Scenario.Faults {
		if res.Scenario.Faults[i].Kind == "pause" {
			pause = &res.Scenario.Faults[i]
		}
	}
	if pause == nil || pause.When == nil || pause.When.Report != "leader" {
		t.Fatalf("not triggered:\n%s\nsteps %q", res.Scenario.Encode(""), steps)
	}
	if !slices.ContainsFunc(steps, func(s string) bool { return strings.Contains(s, "→ when report leader") }) {
		t.Errorf("steps %q", steps)
	}
	if res.Runs > 150 {
		t.Errorf("%d runs", res.Runs)
	}
	// The shrunk file says so, and parses.
	text := string(res.Scenario.Encode(""))
	if _, err := scenario.Parse("t.toml", text); err != nil || !strings.Contains(text, `when = { report = "leader" }`) && !strings.Contains(text, "[faults.when]") {
		t.Errorf("%v\n%s", err, text)
	}
}

// On real runs the recovery is left alone while a liveness check runs,
// even one that holds: with less time it may fail in the next run.
func TestRecoveryKeptForLiveness(t *testing.T) {
	sc := parse(t, fourFaults)
	for _, agreement := range []bool{false, true} {
		f := &flakyRunner{rng: rand.New(rand.NewPCG(3, 4)), agreement: agreement, rate: func(sc *scenario.Scenario) float64 {
			if hasPause(sc) {
				return 0.95
			}
			return 0.05
		}}
		res, err := Shrink(context.Background(), f, sc, ShrinkOptions{Budget: 80})
		if err != nil {
			t.Fatal(err)
		}
		if kept := res.Scenario.Recovery.D == time.Second; kept != agreement {
			t.Errorf("agreement %v: recovery %s, steps %q", agreement, res.Scenario.Recovery.D, res.Steps)
		}
	}
}

// A campaign's failing scenario keeps its [explore] table; the shrunk one
// leaves it out (it may name nodes a smaller scenario has not) and says
// so, and can then lose nodes the vocabulary named.
func TestShrinkLeavesTheVocabulary(t *testing.T) {
	sc := parse(t, fourFaults+"[explore]\nkinds = [\"pause\"]\ntargets = [\"n3\"]\n")
	if sc.Explore == nil {
		t.Fatal("no [explore] table parsed")
	}
	f := &flakyRunner{rng: rand.New(rand.NewPCG(3, 4)), rate: func(sc *scenario.Scenario) float64 {
		if hasPause(sc) {
			return 1
		}
		return 0
	}}
	res, err := Shrink(context.Background(), f, sc, ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scenario.Explore != nil || res.Steps[0] != "the [explore] table left out" || res.Scenario.Nodes != 2 || strings.Contains(string(res.Scenario.Encode("")), "[explore]") {
		t.Errorf("%d nodes, steps %q:\n%s", res.Scenario.Nodes, res.Steps, res.Scenario.Encode(""))
	}
}

// tieRunner fails every run, two ways in turn: two leaders, then no
// agreement; and, when held is set, every third run not at all though
// the scenario expects two leaders.
type tieRunner struct {
	runs int
	held bool
}

func (*tieRunner) Exact() bool  { return false }
func (*tieRunner) Name() string { return "tie" }
func (r *tieRunner) Run(ctx context.Context, sc *scenario.Scenario) (*Run, error) {
	r.runs++
	res := &verdict.Results{Checks: map[string]checks.Result{}, Order: []string{"two-leaders", "agreement"},
		Valid: checks.False, Outcome: verdict.Unexpected, Expected: history.Expect{Valid: true}}
	two := checks.Result{Name: "two-leaders", Valid: checks.True}
	agree := checks.Result{Name: "agreement", Valid: checks.True}
	at := &checks.Interval{From: int64(time.Second), To: int64(2 * time.Second)}
	switch {
	case r.held && r.runs%3 == 0:
		res.Expected, res.Valid = history.Expect{Violations: []string{"two-leaders"}}, checks.True
	case r.runs%2 == 1:
		two = checks.Result{Name: "two-leaders", Valid: checks.False, Nodes: []string{"n1", "n2"}, Interval: at,
			Explanation: "n1 and n2 both believed they were the leader from 1s to 2s"}
	default:
		agree = checks.Result{Name: "agreement", Valid: checks.False, Nodes: []string{"n1", "n2"}, Interval: at,
			Explanation: "n1 and n2 believe in different leaders at the end"}
	}
	res.Checks["two-leaders"], res.Checks["agreement"] = two, agree
	return &Run{Results: res, History: &history.History{}}, nil
}

// Two ways tie in the runs that find the failure (each in 5 of 10): the
// shrink keeps the one the scenario was kept for (Prefer: a campaign's
// kept run names its own signature), not merely the first seen; and a
// run that failed only the expectation (no violation) is no failure.
func TestShrinkTieKeepsTheKeptRunsOwn(t *testing.T) {
	sc := parse(t, fourFaults)
	m, err := Measure(context.Background(), &tieRunner{}, sc, 10, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	two, agree := "two-leaders: nodes both believed they were the leader (at start-up, before any fault)", "agreement: nodes believe in different leaders at the end (at start-up, before any fault)"
	if len(m.Failures) != 2 || m.Failures[two] != 5 || m.Failures[agree] != 5 || m.Signature != two {
		t.Fatalf("failures %v, kept %q: want a 5–5 tie, the first seen kept", m.Failures, m.Signature)
	}
	m, err = Measure(context.Background(), &tieRunner{}, sc, 10, "", agree, nil)
	if err != nil || m.Signature != agree || m.Rate != (Rate{5, 10}) || Signature(m.Run.Results, m.Run.History) != agree {
		t.Fatalf("preferring %q: kept %q (%v, %v)", agree, m.Signature, m.Rate, err)
	}
	res, err := Shrink(context.Background(), &tieRunner{}, sc, ShrinkOptions{Prefer: agree, Budget: 30})
	if err != nil || res.Signature != agree {
		t.Fatalf("shrink: %q (%v), want the kept run's own %q", res.Signature, err, agree)
	}

	m, err = Measure(context.Background(), &tieRunner{held: true}, sc, 9, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for sig := range m.Failures {
		if !Violated(sig) {
			t.Errorf("a run with no violation counted as a failure: %q", sig)
		}
	}
	if m.Rate.Runs != 9 || m.Failures[two]+m.Failures[agree] != 6 {
		t.Errorf("failures %v of %d runs, want 6 with a violation", m.Failures, m.Rate.Runs)
	}
}

// recordingRunner runs an exact runner and counts each schedule it ran,
// by its file and seed.
type recordingRunner struct {
	Runner
	ran map[string]int
}

func (r *recordingRunner) Run(ctx context.Context, sc *scenario.Scenario) (*Run, error) {
	r.ran[string(sc.Encode(""))]++
	return r.Runner.Run(ctx, sc)
}

// A shrink never runs two candidates that are the same schedule at the
// same seed: a second removal of faults after a step that changed
// nothing, a round with seeds at the current seed, a move that makes
// what another made. It still ends with the one fault the failure needs.
func TestShrinkRunsNoScheduleTwice(t *testing.T) {
	sc := parse(t, "seed = 1\n"+fakeScenario+`
[[faults]]
kind = "crash"
target = "n1"
at = "100ms"
for = "50ms"
[[faults]]
kind = "pause"
target = "leader"
at = "230ms"
for = "100ms"
[[faults]]
kind = "partition"
shape = "isolate"
target = "n1"
at = "400ms"
for = "100ms"
[[faults]]
kind = "pause"
target = "n1"
at = "600ms"
for = "100ms"
`)
	r := &recordingRunner{Runner: &fakeRunner{}, ran: map[string]int{}}
	res, err := Shrink(context.Background(), r, sc, ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for text, n := range r.ran {
		runs += n
		if n > 1 {
			t.Errorf("ran %d times:\n%s", n, text)
		}
	}
	if len(res.Scenario.Faults) != 1 || res.Scenario.Faults[0].Kind != "pause" {
		t.Errorf("shrunk to %d faults, want the pause of the leader alone: %v", len(res.Scenario.Faults), res.Steps)
	}
	t.Logf("%d runs, %d schedules, steps %q", runs, len(r.ran), res.Steps)
}
