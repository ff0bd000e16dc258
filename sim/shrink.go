package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/scenario"
)

// DefaultBudget is how many simulations a shrink may spend by default:
// a few seconds for the catalogue's scenarios.
const DefaultBudget = 1000

// DefaultShrinkSeeds is how many other seeds a shrink tries a candidate
// with, by default, once the current seed shrinks no further.
const DefaultShrinkSeeds = 3

// ErrNothingToShrink is the error for a run that is as expected and shows
// no violation.
var ErrNothingToShrink = errors.New("the run shows no violation and is as expected: nothing to shrink")

// ShrinkOptions configure Shrink.
type ShrinkOptions struct {
	// Budget is the most simulations the shrink spends, the first run
	// included (default DefaultBudget). Shrink always stops within it.
	Budget int
	// Seeds is how many other seeds a candidate is tried with when the
	// current seed no longer shows the failure; they are tried only once
	// nothing shrinks with the current seed (default DefaultShrinkSeeds;
	// negative: none).
	Seeds int
	// Strategy is the strategy every simulation runs.
	Strategy Strategy
	// Log, when set, is told each step that shrank the scenario.
	Log func(step string)
	// Spec, when set, is the machine every node runs (Options.Spec).
	Spec *nodes.Spec
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
	// Scenario is the smallest scenario found that fails the same way,
	// with Seed the seed it fails at (also its Seed field).
	Scenario *scenario.Scenario
	Seed     int64
	// Signature is the failure both runs share (see Signature).
	Signature string
	// Original and Shrunk are the sizes of the first run and of the
	// shrunk one.
	Original, Shrunk Size
	// Sims is the number of simulations spent.
	Sims int
	// Steps say what shrank, in order.
	Steps []string
	// Exhausted is true when the budget ran out before no step was left
	// to try: a bigger budget may shrink further.
	Exhausted bool
	// Outcome is the shrunk scenario's run.
	Outcome *Outcome
}

// Shrink searches for a smaller scenario that fails the way sc fails at
// seed: the same Signature. It is delta debugging over the fault
// schedule, as DEMi (NSDI 2016) does over a failing run: it removes
// faults (ddmin), turns repeated and randomly targeted faults into their
// occurrences in the failing history and removes those, weakens what is
// left (replace → crash → pause; a shorter for; lower probabilities and
// delays; a clock rate nearer 1), removes nodes and initiators, fewer
// clients, shortens the duration, and, when only safety checks fail, the
// recovery. Every candidate is simulated; one that fails the same way is
// kept. When the current seed shrinks no further, candidates are tried
// with a few other seeds, and a seed that shows the failure is kept with
// the candidate. Shrink is deterministic: the same scenario, seed,
// strategy and budget give the same result.
func Shrink(sc *scenario.Scenario, seed int64, opts ShrinkOptions) (*ShrinkResult, error) {
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	if opts.Seeds == 0 {
		opts.Seeds = DefaultShrinkSeeds
	}
	sh := &shrinker{opts: opts, file: sc.File}
	first, err := sh.simulate(sc, seed)
	if err != nil {
		return nil, err
	}
	sh.sig = explore.Signature(first.Results)
	if sh.sig == "" {
		return nil, ErrNothingToShrink
	}
	cur, err := clone(sc)
	if err != nil {
		return nil, err
	}
	cur.Seed = seed
	sh.cur, sh.out = cur, first
	res := &ShrinkResult{Signature: sh.sig, Original: sizeOf(cur, first)}
	for !sh.spent() {
		if sh.round() {
			continue
		}
		if opts.Seeds < 0 {
			break
		}
		sh.withSeeds = true
		progress := sh.round()
		sh.withSeeds = false
		if !progress {
			break
		}
	}
	res.Scenario, res.Seed, res.Outcome = sh.cur, sh.cur.Seed, sh.out
	res.Shrunk = sizeOf(sh.cur, sh.out)
	res.Sims, res.Steps, res.Exhausted = sh.sims, sh.steps, sh.exhausted
	return res, nil
}

// shrinker is a shrink under way: the smallest failing scenario so far
// (cur, whose Seed is the seed it fails at) and its run.
type shrinker struct {
	opts      ShrinkOptions
	file      string
	sig       string
	cur       *scenario.Scenario
	out       *Outcome
	sims      int
	steps     []string
	withSeeds bool
	exhausted bool
}

func (sh *shrinker) spent() bool { return sh.sims >= sh.opts.Budget }

func (sh *shrinker) simulate(sc *scenario.Scenario, seed int64) (*Outcome, error) {
	sh.sims++
	return Simulate(sc, seed, Options{Strategy: sh.opts.Strategy, Spec: sh.opts.Spec})
}

// step records a step that shrank the scenario.
func (sh *shrinker) step(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	sh.steps = append(sh.steps, s)
	if sh.opts.Log != nil {
		sh.opts.Log(s)
	}
}

// try simulates a candidate at the current seed (and, in a round with
// seeds, at a few others) and keeps it if it fails the same way. A
// candidate that is no valid scenario costs nothing. ok is whether it was
// kept; stop, whether the budget is spent.
func (sh *shrinker) try(cand *scenario.Scenario) (ok, stop bool) {
	valid, err := parseAs(sh.cur, sh.file, string(cand.Encode("")))
	if err != nil {
		return false, sh.spent()
	}
	seeds := []int64{sh.cur.Seed}
	if sh.withSeeds {
		for i := 1; i <= sh.opts.Seeds; i++ {
			seeds = append(seeds, sh.cur.Seed+int64(i))
		}
	}
	for _, seed := range seeds {
		if sh.spent() {
			sh.exhausted = true
			return false, true
		}
		out, err := sh.simulate(valid, seed)
		if err != nil {
			continue // a candidate the simulator refuses is no smaller failure
		}
		if explore.Signature(out.Results) == sh.sig {
			if seed != sh.cur.Seed {
				sh.step("seed %d → %d", sh.cur.Seed, seed)
			}
			valid.Seed = seed
			Recycle(sh.out)
			sh.cur, sh.out = valid, out
			return true, false
		}
		Recycle(out)
	}
	return false, sh.spent()
}

// round tries every kind of step once; it reports whether any shrank the
// scenario.
func (sh *shrinker) round() bool {
	progress := false
	for _, move := range []func() bool{
		sh.removeFaults, sh.concretize, sh.removeFaults, sh.shrinkTargets,
		sh.removeNodes, sh.removeInitiators, sh.fewerClients,
		sh.weakenFaults, sh.shortenDuration, sh.shortenRecovery,
	} {
		if sh.spent() {
			sh.exhausted = true
			return false
		}
		if move() {
			progress = true
		}
	}
	return progress
}

// removeFaults removes as many faults as it can (ddmin).
func (sh *shrinker) removeFaults() bool {
	before := len(sh.cur.Faults)
	if before == 0 {
		return false
	}
	base := sh.cur
	keep := explore.Ddmin(before, func(keep []int) (bool, bool) {
		cand := copyOf(base)
		cand.Faults = pick(base.Faults, keep)
		return sh.try(cand)
	})
	if len(keep) == before {
		return false
	}
	sh.step("faults %d → %d", before, len(keep))
	return true
}

func pick[T any](all []T, keep []int) []T {
	out := make([]T, 0, len(keep))
	for _, i := range keep {
		out = append(out, all[i])
	}
	return out
}

// concretize replaces each repeated or randomly targeted fault by its
// occurrences in the failing history: one fault per occurrence, at the
// time it happened, on the nodes it hit. Removing and weakening then
// work occurrence by occurrence.
func (sh *shrinker) concretize() bool {
	cand := copyOf(sh.cur)
	cand.Faults = nil
	changed := false
	for i, f := range sh.cur.Faults {
		if f.When != nil || (!repeats(&f) && !picks(&f)) {
			cand.Faults = append(cand.Faults, f)
			continue
		}
		changed = true
		for _, e := range occurrences(sh.out.History, i) {
			if time.Duration(e.Time) >= sh.cur.Duration.D {
				continue // carried out late, at the heal
			}
			o := f
			o.At = scenario.Duration{D: time.Duration(e.Time), Set: true}
			o.Every, o.Random = scenario.Duration{}, nil
			if picks(&f) && len(e.Nodes) > 0 && takesTarget(&f) {
				o.Target = scenario.Target{Names: slices.Clone(e.Nodes), Set: true}
			}
			cand.Faults = append(cand.Faults, o)
		}
	}
	if !changed {
		return false
	}
	before := len(sh.cur.Faults)
	if ok, _ := sh.try(cand); !ok {
		return false
	}
	sh.step("faults %d → %d occurrences at the times and on the nodes they struck", before, len(sh.cur.Faults))
	return true
}

// occurrences are the start events of fault i in a history.
func occurrences(h *history.History, i int) []history.Event {
	prefix := fmt.Sprintf("faults[%d]#", i)
	var out []history.Event
	for _, e := range h.Events {
		if e.Kind == history.KindNemesis && e.Phase == history.PhaseStart && len(e.Name) > len(prefix) && e.Name[:len(prefix)] == prefix {
			out = append(out, e)
		}
	}
	return out
}

func repeats(f *scenario.Fault) bool { return f.Every.Set && f.Every.D > 0 }

// picks reports whether the fault's target is a pick ("leader", "one",
// ...) rather than named nodes.
func picks(f *scenario.Fault) bool {
	if !f.Target.Set || len(f.Target.Names) != 1 {
		return false
	}
	switch f.Target.Names[0] {
	case "leader", "random", "one", "minority", "majority", "all":
		return true
	}
	return false
}

// takesTarget reports whether the fault may name its nodes: every fault
// but a partition whose sides follow from its shape.
func takesTarget(f *scenario.Fault) bool {
	if f.Kind != "partition" {
		return true
	}
	switch f.Shape {
	case "halves", "majorities-ring", "groups":
		return false
	}
	return f.Groups == nil
}

// shrinkTargets removes nodes from the faults that name several.
func (sh *shrinker) shrinkTargets() bool {
	progress := false
	for i := range sh.cur.Faults {
		names := sh.cur.Faults[i].Target.Names
		if len(names) < 2 || picks(&sh.cur.Faults[i]) {
			continue
		}
		base := sh.cur
		keep := explore.Ddmin(len(names), func(keep []int) (bool, bool) {
			if len(keep) == 0 {
				return false, sh.spent()
			}
			cand := copyOf(base)
			cand.Faults = slices.Clone(base.Faults)
			cand.Faults[i].Target = scenario.Target{Names: pick(names, keep), Set: true}
			return sh.try(cand)
		})
		if len(keep) < len(names) {
			sh.step("faults[%d] target %v → %v", i, names, pick(names, keep))
			progress = true
		}
	}
	return progress
}

// removeInitiators removes initiators of an election (ddmin).
func (sh *shrinker) removeInitiators() bool {
	names := sh.cur.Workload.Initiators
	if sh.cur.Workload.Kind != "election" || len(names) < 2 {
		return false
	}
	base := sh.cur
	keep := explore.Ddmin(len(names), func(keep []int) (bool, bool) {
		if len(keep) == 0 {
			return false, sh.spent()
		}
		cand := copyOf(base)
		cand.Workload.Initiators = pick(names, keep)
		return sh.try(cand)
	})
	if len(keep) == len(names) {
		return false
	}
	sh.step("initiators %v → %v", names, pick(names, keep))
	return true
}

// fewerClients halves a lock workload's clients while it fails the same
// way.
func (sh *shrinker) fewerClients() bool {
	progress := false
	for sh.cur.Workload.Kind == "mutex" && sh.cur.Workload.Clients > 1 && !sh.spent() {
		before := sh.cur.Workload.Clients
		cand := copyOf(sh.cur)
		cand.Workload.Clients = before / 2
		if ok, _ := sh.try(cand); !ok {
			break
		}
		sh.step("clients %d → %d", before, sh.cur.Workload.Clients)
		progress = true
	}
	return progress
}

// removeNodes tries the scenario without each node, from the last.
func (sh *shrinker) removeNodes() bool {
	progress := false
	for k := sh.cur.Nodes - 1; k >= 0 && sh.cur.Nodes > 1 && !sh.spent(); k-- {
		if k >= sh.cur.Nodes {
			continue
		}
		before := sh.cur.Nodes
		cand, ok := withoutNode(sh.cur, k)
		if !ok {
			continue
		}
		if ok, _ := sh.try(cand); ok {
			sh.step("nodes %d → %d (without %s; the nodes after it renamed)", before, sh.cur.Nodes, scenario.NodeName(k))
			progress = true
		}
	}
	return progress
}

// shortenDuration halves the gap between the duration and the latest
// time anything is scheduled, as long as the run fails the same way.
func (sh *shrinker) shortenDuration() bool {
	low := sh.cur.Workload.At.D + time.Millisecond
	for _, f := range sh.cur.Faults {
		low = max(low, f.At.D+time.Millisecond)
	}
	before := sh.cur.Duration.D
	sh.bisect(low, func() time.Duration { return sh.cur.Duration.D }, func(s *scenario.Scenario, d time.Duration) {
		s.Duration = scenario.Duration{D: d, Set: true}
	})
	if sh.cur.Duration.D == before {
		return false
	}
	sh.step("duration %s → %s", before, sh.cur.Duration.D)
	return true
}

// safetyChecks are the checks whose verdict cannot turn false because a
// run ends sooner: only their failures let the recovery be shortened.
var safetyChecks = []string{"two-leaders", "mutex-cs", "mutex-linearizable", "integrity", "complexity"}

// shortenRecovery shortens the recovery window when every check that
// fails is a safety check: a liveness check given less time could fail
// for want of time, not for the bug.
func (sh *shrinker) shortenRecovery() bool {
	for name, c := range sh.out.Results.Checks {
		if c.Valid.String() != "true" && !slices.Contains(safetyChecks, name) {
			return false
		}
	}
	before := sh.cur.Recovery.D
	sh.bisect(time.Millisecond, func() time.Duration { return sh.cur.Recovery.D }, func(s *scenario.Scenario, d time.Duration) {
		s.Recovery = scenario.Duration{D: d, Set: true}
	})
	if sh.cur.Recovery.D == before {
		return false
	}
	sh.step("recovery %s → %s", before, sh.cur.Recovery.D)
	return true
}

// bisect searches for the shortest value, down to low, of a duration for
// which the run still fails, to the millisecond.
func (sh *shrinker) bisect(low time.Duration, get func() time.Duration, set func(*scenario.Scenario, time.Duration)) {
	for !sh.spent() {
		cur := get()
		mid := ((low + cur) / 2).Round(time.Millisecond)
		if cur-low < 2*time.Millisecond || mid >= cur || mid < low {
			return
		}
		cand := copyOf(sh.cur)
		set(cand, mid)
		if ok, _ := sh.try(cand); !ok {
			low = mid
		}
	}
}

// weakenFaults weakens each fault step by step while the run fails the
// same way (see weakenings).
func (sh *shrinker) weakenFaults() bool {
	progress := false
	for i := 0; i < len(sh.cur.Faults) && !sh.spent(); i++ {
		for !sh.spent() {
			kept := false
			for _, w := range weakenings(sh.cur, i) {
				cand := copyOf(sh.cur)
				cand.Faults = slices.Clone(sh.cur.Faults)
				cand.Faults[i] = w.f
				if ok, _ := sh.try(cand); ok {
					sh.step("faults[%d]: %s", i, w.what)
					kept, progress = true, true
					break
				}
			}
			if !kept {
				break
			}
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

func sizeOf(sc *scenario.Scenario, out *Outcome) Size {
	occ := 0
	for _, e := range out.History.Events {
		if e.Kind == history.KindNemesis && e.Phase == history.PhaseStart {
			occ++
		}
	}
	return Size{
		Faults: len(sc.Faults), Occurrences: occ, Nodes: sc.Nodes,
		Messages: out.Stats.Sent, Events: len(out.History.Events),
		Duration: sc.Duration.D, Recovery: sc.Recovery.D,
	}
}
