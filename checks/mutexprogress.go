package checks

import (
	"fmt"
	"time"

	"github.com/coupharness/coup/history"
)

// defaultProgress is the progress bound used when the meta event gives
// none.
const defaultProgress = int64(time.Second)

// mutexProgress (EM2): every acquire that no fault can block is granted
// within the bound.
//
// An acquire is judged when it was invoked after the last nemesis event
// (so that no fault began or ended after it), at a node that was live and
// not paused then, and the history goes on for at least the bound after
// the invocation: until the harness began stopping the nodes (the first
// stop event), or until its last event when there is no stop. It is
// granted in time when it returned ok within the bound. The check is false
// when a judged acquire was not granted in time, unknown when no acquire
// was judged.
func mutexProgress(h *history.History) Result {
	bound := h.Meta.Progress
	if bound <= 0 {
		bound = defaultProgress
	}
	ref := lastNemesis(h)
	refTime, refWhat := int64(-1), "the start of the history"
	if ref >= 0 {
		e := &h.Events[ref]
		refTime = e.Time
		refWhat = fmt.Sprintf("the last nemesis event (%s %s at %s)", e.What, e.Phase, fmtTime(e.Time))
	}
	observed := h.End()
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == history.KindProcess && e.What == history.ProcStop {
			observed = e.Time
			break
		}
	}
	// Replay the process events so that each acquire sees its node's state.
	live, paused := map[string]bool{}, map[string]bool{}
	ops := lockOps(h)
	next := 0
	judged, granted, blocked, late := 0, 0, 0, 0
	var worst *lockOp
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind == history.KindProcess {
			switch e.What {
			case history.ProcStart:
				live[e.Node], paused[e.Node] = true, false
			case history.ProcCrash, history.ProcExit, history.ProcStop:
				live[e.Node], paused[e.Node] = false, false
			case history.ProcPause:
				paused[e.Node] = true
			case history.ProcResume:
				paused[e.Node] = false
			}
		}
		for next < len(ops) && ops[next].invoke == i {
			o := ops[next]
			next++
			if o.f != fAcquire || i <= ref || addTime(e.Time, bound) > observed {
				continue
			}
			if !live[o.node] || paused[o.node] {
				blocked++
				continue
			}
			judged++
			if o.outcome(h) == history.OpOK && h.Events[o.done].Time-e.Time <= bound {
				granted++
				continue
			}
			late++
			if worst == nil {
				worst = o
			}
		}
	}
	r := Result{Figures: map[string]any{
		"judged": judged, "granted": granted, "not_granted": late, "at_unavailable_nodes": blocked,
		"bound_ns": bound, "reference_ns": max(refTime, 0),
	}}
	switch {
	case judged == 0:
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("no acquire could be judged: none was invoked at a live node after %s and at least %s before the history's end at %s; run the workload longer after the last fault",
			refWhat, fmtDur(bound), fmtTime(observed))
		return r
	case worst == nil:
		r.Valid = True
		r.Explanation = fmt.Sprintf("every one of the %s invoked after %s was granted within %s",
			plural(judged, "acquire"), refWhat, fmtDur(bound))
		return r
	}
	inv := &h.Events[worst.invoke]
	r.Valid = False
	r.Nodes = []string{worst.node}
	r.Evidence = []history.Event{*inv}
	r.Interval = &Interval{From: inv.Time, To: addTime(inv.Time, bound)}
	what := "no answer before the history ended"
	if worst.done >= 0 {
		d := &h.Events[worst.done]
		r.Evidence = append(r.Evidence, *d)
		switch d.Type {
		case history.OpOK:
			what = fmt.Sprintf("granted only at %s, %s after it was asked", fmtTime(d.Time), fmtDur(d.Time-inv.Time))
		case history.OpFail:
			what = fmt.Sprintf("refused at %s (%s)", fmtTime(d.Time), d.Value)
		default:
			what = fmt.Sprintf("timed out at %s", fmtTime(d.Time))
		}
	}
	r.Explanation = fmt.Sprintf("%d of the %s invoked at live nodes after %s %s not granted within %s: the first, %s's acquire at %s invoked at %s, was %s",
		late, plural(judged, "acquire"), refWhat, isAre(late, "was", "were"), fmtDur(bound),
		worst.process, worst.node, fmtTime(inv.Time), what)
	return r
}
