package explore

import (
	"slices"

	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
)

// actable leaves out of a schedule the faults that cannot act: a restart
// when no fault before it (the scenario's own, or the schedule's) leaves
// a node it may hit down, a resume when none leaves one paused. Such a
// fault finds no target, does nothing, and its run is the run of the
// rest of the schedule (or of none: an idle run, which a guided corpus
// would keep for what it showed without a fault). A fault may act when
// a crash (a pause) began before its time (or at it, ahead of it in the
// schedule) and lasts past it, or for good, and hits a node it may hit:
// one it names, or any for a pick (one, all, minority…). ok is false
// when no fault of the schedule can act: the faults are then as given
// (a strategy is asked for another).
func actable(sc *scenario.Scenario, faults []scenario.Fault) (out []scenario.Fault, ok bool) {
	all := append(slices.Clone(sc.Faults), faults...)
	for i, f := range faults {
		if canAct(all, len(sc.Faults)+i) {
			out = append(out, f)
		}
	}
	switch {
	case len(out) == 0:
		return faults, len(faults) == 0
	case len(out) == len(faults):
		return faults, true
	}
	return out, true
}

// canAct reports whether the i-th of faults may find a target.
func canAct(faults []scenario.Fault, i int) bool {
	f := faults[i]
	var needs nemesis.Kind
	switch nemesis.Kind(f.Kind) {
	case nemesis.Restart:
		needs = nemesis.Crash
	case nemesis.Resume:
		needs = nemesis.Pause
	default:
		return true
	}
	for j, g := range faults {
		if nemesis.Kind(g.Kind) != needs || g.At.D > f.At.D || (g.At.D == f.At.D && j > i) {
			continue
		}
		if g.For.D > 0 && g.At.D+g.For.D <= f.At.D && g.Every.D == 0 {
			continue // over, the node up or running again, before f
		}
		if mayHit(f.Target, g.Target) {
			return true
		}
	}
	return false
}

// mayHit reports whether a fault of target a may hit a node that one of
// target b hit: any, for a pick; else one that both name.
func mayHit(a, b scenario.Target) bool {
	named := func(t scenario.Target) bool {
		if len(t.Names) == 0 {
			return false
		}
		for _, n := range t.Names {
			if slices.Contains(nemesis.Picks, nemesis.Pick(n)) {
				return false
			}
		}
		return true
	}
	if !named(a) {
		return true
	}
	return named(b) && slices.ContainsFunc(a.Names, func(n string) bool { return slices.Contains(b.Names, n) })
}
