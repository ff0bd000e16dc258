package explore

import (
	"slices"
	"time"

	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
)

// startable makes sure no fault of a schedule waits on a trigger that
// nothing in its run can set off, where the vocabulary has time (else the
// vocabulary asked for triggers alone, and the schedule is as drawn):
//
//   - a fault on a process's start or crash, when no other fault of the
//     schedule restarts or kills a node (a crash that lasts, a restart, a
//     replacement; a crash, a replacement), starts at its arming time;
//   - when none of the faults then starts by itself (at a time, or on an
//     event the system makes with no fault at all: byItself), each waits
//     for an event only a fault could bring about, a leader change on
//     real servers (whose cluster changes leader only after a fault) or
//     after the election the workload asks for, and the run would pass
//     with no fault: the first starts at its arming time instead.
//
// Faults and their order are kept; only those triggers are dropped.
func startable(sc *scenario.Scenario, v scenario.Vocabulary, faults []scenario.Fault) []scenario.Fault {
	if len(faults) == 0 || !slices.Contains(v.Triggers, scenario.TriggerTime) {
		return faults
	}
	// A fault on a process's start or crash waits for a fault of the
	// schedule that restarts or kills a node: with none, it starts at
	// its time.
	cloned := false
	for i, f := range faults {
		if f.When == nil || f.When.Process == "" || makesProcess(faults, i, f.When.Process) {
			continue
		}
		if !cloned {
			faults, cloned = slices.Clone(faults), true
		}
		g := cloneFault(f)
		g.When = nil
		faults[i] = g
	}
	first := -1
	for i, f := range faults {
		if f.When == nil || byItself(sc, f.When, f.At.D) {
			return faults
		}
		if first < 0 {
			first = i
		}
	}
	out := slices.Clone(faults)
	f := cloneFault(out[first])
	f.When = nil
	out[first] = f
	return out
}

// makesProcess reports whether a fault of faults other than the i-th
// makes a process event of what: a start (a crash that lasts, a restart,
// a replacement) or a crash (a crash, a replacement).
func makesProcess(faults []scenario.Fault, i int, what string) bool {
	for j, f := range faults {
		if j == i {
			continue
		}
		switch nemesis.Kind(f.Kind) {
		case nemesis.Replace:
			return true
		case nemesis.Restart:
			if what == "start" {
				return true
			}
		case nemesis.Crash:
			if what == "crash" || f.For.D > 0 {
				return true
			}
		}
	}
	return false
}

// byItself reports whether the system makes an event that w matches at
// or after at with no fault in force: a lock workload's clients acquire
// and release, and enter the critical section, throughout; an election's
// reports (a leader, a participant) come at the election the workload
// asks for (or the algorithm's own, at the start), which a trigger armed
// up to a tenth of the run after it may meet. Real servers elect before
// the run's zero, and only a fault starts or kills a node.
func byItself(sc *scenario.Scenario, w *scenario.When, at time.Duration) bool {
	mutex := sc.Workload.Kind == scenario.WorkloadMutex
	switch {
	case w.Op != "":
		return mutex
	case w.Process != "":
		return false
	case w.Report == "cs":
		return mutex
	case w.Report == "leader" || w.Report == "participant":
		if sc.Server != nil {
			return false
		}
		return at <= sc.Workload.At.D+sc.Duration.D/10
	}
	return true // a report of another kind: the system's own business
}
