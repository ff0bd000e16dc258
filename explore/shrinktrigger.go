package explore

import (
	"slices"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
)

// The trigger move looks this far before a time-triggered fault's start
// for the event that explains it.
const triggerWindow = 500 * time.Millisecond

// Events that match one trigger less than burstGap apart are one burst:
// every node reports a leader change within a heartbeat or so, and the
// trigger must fire on the burst's first event.
const burstGap = 100 * time.Millisecond

// triggersPerFault is how many triggers the move tries for one fault,
// nearest first.
const triggersPerFault = 2

// explanation is an event trigger that may explain a time-triggered
// fault: when, armed at at, fires on the burst of events that came just
// before the fault in the failing run.
type explanation struct {
	when  scenario.When
	at    time.Duration
	event history.Event
	// after is how long after the event the fault began.
	after time.Duration
}

func (x explanation) String() string {
	t := &nemesis.Trigger{Report: x.when.Report, Process: x.when.Process, Op: x.when.Op, Value: x.when.Value, Node: x.when.Node}
	return t.String()
}

// triggers turns each fault that starts at a time into the event trigger
// that explains it, when the run fails the same way so: a fault that
// began just after a leader change becomes when = { report = "leader" },
// one just after a lock grant when = { op = "acquire" }. A real run does
// not replay: a time hits the moment it hit once only by chance, an
// event trigger hits it every time.
func (sh *shrinker) triggers() bool {
	progress := false
	for i := 0; i < len(sh.cur.Faults) && !sh.spent(); i++ {
		f := sh.cur.Faults[i]
		for _, x := range explanations(sh.cur, i, sh.out.History) {
			cand := copyOf(sh.cur)
			cand.Faults = slices.Clone(sh.cur.Faults)
			when := x.when
			cand.Faults[i].When = &when
			cand.Faults[i].At = scenario.Duration{D: x.at, Set: x.at > 0}
			key := string(cand.Encode(""))
			if sh.tried[key] {
				continue
			}
			sh.tried[key] = true
			if ok, _ := sh.try(cand); ok {
				sh.step("faults[%d]: at %s → when %s, armed at %s (it began %s after such an event)", i, f.At.D, x, x.at, x.after)
				progress = true
				break
			}
			if sh.spent() {
				break
			}
		}
	}
	return progress
}

// explanations are the event triggers that may explain fault i of sc,
// which starts at a time, from its start in h: the events a trigger can
// match within triggerWindow before it, nearest first, one per trigger,
// at most triggersPerFault. Each trigger is armed halfway between the
// last event it matches before the burst of the explaining event and the
// burst's first event, so that in the failing run it fires on that
// burst. A fault that repeats or already has a trigger, or that did not
// start once, has none.
func explanations(sc *scenario.Scenario, i int, h *history.History) []explanation {
	f := sc.Faults[i]
	if f.When != nil || repeats(&f) || f.Kind == "timely" || h == nil {
		return nil
	}
	starts := occurrences(h, i)
	if len(starts) != 1 {
		return nil
	}
	start := starts[0]
	names := sc.NodeNames()
	var out []explanation
	seen := map[string]bool{}
	for k := len(h.Events) - 1; k >= 0 && len(out) < triggersPerFault; k-- {
		e := h.Events[k]
		if e.Index >= start.Index || e.Time > start.Time {
			continue
		}
		if time.Duration(start.Time-e.Time) > triggerWindow {
			break
		}
		w, ok := triggerOf(&e, names)
		if !ok {
			continue
		}
		x := explanation{when: w, event: e, after: time.Duration(start.Time - e.Time)}
		if seen[x.String()] {
			continue
		}
		seen[x.String()] = true
		x.at = armAt(h, k, w)
		out = append(out, x)
	}
	return out
}

// triggerOf is the trigger that matches events like e, without naming
// what differs from one real run to the next: the node, a leader's name.
func triggerOf(e *history.Event, names []string) (scenario.When, bool) {
	switch e.Kind {
	case history.KindReport:
		switch e.What {
		case history.ReportLeader:
			return scenario.When{Report: e.What}, true
		case history.ReportParticipant, history.ReportCS:
			if slices.Contains(names, e.Value) {
				return scenario.When{Report: e.What}, true
			}
			return scenario.When{Report: e.What, Value: e.Value}, true
		}
	case history.KindProcess:
		switch e.What {
		case history.ProcStart, history.ProcCrash, history.ProcExit, history.ProcPause, history.ProcResume:
			return scenario.When{Process: e.What}, true
		}
	case history.KindOp:
		if e.Type == history.OpOK && (e.F == "acquire" || e.F == "release") {
			return scenario.When{Op: e.F}, true
		}
	}
	return scenario.When{}, false
}

// armAt is when to arm trigger w so that it fires on the burst of the
// event at index k of h: halfway between the last event w matches before
// the burst and the burst's first event, to the millisecond; 0 when
// nothing before the burst matches.
func armAt(h *history.History, k int, w scenario.When) time.Duration {
	t := &nemesis.Trigger{Report: w.Report, Process: w.Process, Op: w.Op, Value: w.Value, Node: w.Node}
	first := h.Events[k].Time
	for j := k - 1; j >= 0; j-- {
		e := &h.Events[j]
		if !t.Match(e) {
			continue
		}
		if time.Duration(first-e.Time) < burstGap {
			first = e.Time
			continue
		}
		at := time.Duration(e.Time+first) / 2
		if r := at.Round(time.Millisecond); r > time.Duration(e.Time) && r <= time.Duration(first) {
			at = r
		}
		return at
	}
	return 0
}
