package explore

import (
	"slices"
	"time"

	"github.com/coupharness/coup/scenario"
)

// startable makes sure a schedule can start: when none of its faults
// starts by itself (at a time, or on an event the system makes with no
// fault at all), each waits for an event that only a fault could bring
// about, and nothing in the run sets any off: the run would pass with no
// fault. Its first fault then starts at its arming time instead of on
// its trigger, where the vocabulary has time. A leader-change trigger on
// real servers (whose cluster changes leader only after a fault), a
// process start or crash (only a fault restarts or kills a node), a
// trigger armed after the election the workload asks for: each waits for
// another fault of the schedule to set it off, and when there is none, it
// is drawn as a time. Faults and their order are kept; only that one
// fault's trigger is dropped.
func startable(sc *scenario.Scenario, v scenario.Vocabulary, faults []scenario.Fault) []scenario.Fault {
	if len(faults) == 0 || !slices.Contains(v.Triggers, scenario.TriggerTime) {
		return faults
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
