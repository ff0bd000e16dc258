package explore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// LateFactor is how far past the scenario's transition time a timer may
// run late before a run's finding says it may be the machine's: a fault
// that began more than LateFactor transition times after it was due, or
// a node whose first start came later than that after the run's zero.
const LateFactor = 10

// defaultTransition is the transition time of a scenario whose params
// name none (t_trans): the default of the algorithms that take one.
const defaultTransition = 10 * time.Millisecond

// LateTimers says how a run's timers ran late past the scenario's
// bounds, "" when they did not: its faults at a time (sc's, own and
// schedule's alike) that began much later than they were due, and nodes
// that first started much later than the run's zero, against LateFactor
// times the scenario's transition time (its t_trans parameter). A run
// whose timers ran so late did not run the schedule it was given, nor
// the system at the speed its bounds assume: its finding may be the
// machine's (a loaded host), not the system's. The simulator's timers
// are never late: a simulated history gives "".
func LateTimers(sc *scenario.Scenario, h *history.History) string {
	if sc == nil || h == nil || h.Meta.Simulated {
		return ""
	}
	trans := transition(h.Meta.Params)
	bound := LateFactor * trans
	var late []string
	worstFault, worstStart := time.Duration(0), time.Duration(0)
	var faultName, startNode string
	started := map[string]bool{}
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindNemesis && e.Phase == history.PhaseStart:
			due, ok := dueAt(sc, e.Name)
			if lag := time.Duration(e.Time) - due; ok && lag > worstFault {
				worstFault, faultName = lag, e.Name
			}
		case e.Kind == history.KindProcess && e.What == history.ProcStart && !started[e.Node]:
			started[e.Node] = true
			if at := time.Duration(e.Time); at > worstStart {
				worstStart, startNode = at, e.Node
			}
		}
	}
	if worstFault > bound {
		late = append(late, fmt.Sprintf("%s began %s after it was due", faultName, worstFault.Round(time.Millisecond)))
	}
	if worstStart > bound {
		late = append(late, fmt.Sprintf("%s first started %s into the run", startNode, worstStart.Round(time.Millisecond)))
	}
	if len(late) == 0 {
		return ""
	}
	return fmt.Sprintf("timers ran late past the scenario's bounds (%s; the transition time is %s): from the machine, maybe",
		strings.Join(late, ", "), trans)
}

// dueAt is when the occurrence a nemesis event names ("faults[2]#3") was
// due: a fault at a time, or repeated every period at fixed gaps; false
// for one on a trigger, at random gaps, or not in sc.
func dueAt(sc *scenario.Scenario, name string) (time.Duration, bool) {
	index, occurrence, ok := strings.Cut(strings.TrimPrefix(name, "faults["), "]#")
	if !ok {
		return 0, false
	}
	i, err1 := strconv.Atoi(index)
	k, err2 := strconv.Atoi(occurrence)
	if err1 != nil || err2 != nil || i < 0 || i >= len(sc.Faults) || k < 1 {
		return 0, false
	}
	f := sc.Faults[i]
	switch {
	case f.When != nil, f.Random != nil && *f.Random:
		return 0, false
	case k > 1 && f.Every.D <= 0:
		return 0, false
	}
	return f.At.D + time.Duration(k-1)*f.Every.D, true
}

// transition is a scenario's transition time: its t_trans parameter,
// else defaultTransition.
func transition(params map[string]any) time.Duration {
	if v, ok := params["t_trans"].(string); ok {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return defaultTransition
}
