package checks

import (
	"fmt"
	"strings"

	"github.com/coupharness/coup/history"
)

// stabilisationBound returns when eventual leadership must hold: the
// reference time and the bound after it, each with words for an
// explanation. With a stabilisation bound in the meta event, it counts from
// GST, or from the first event when there is no GST. Without one, leadership
// must be stable by the termination deadline: the termination bound after
// the last disruption (see reference), or after GST when that is later.
func stabilisationBound(h *history.History) (ref int64, refWhat string, bound int64, boundWhat string) {
	m := &h.Meta
	if m.Stabilisation > 0 {
		ref, refWhat = 0, "the start of the history"
		if len(h.Events) > 0 {
			ref = h.Events[0].Time
		}
		if m.GST > 0 {
			ref, refWhat = m.GST, "GST"
		}
		return ref, refWhat, m.Stabilisation, "stabilisation bound"
	}
	ref, refWhat = reference(h)
	if m.GST > ref {
		ref, refWhat = m.GST, "GST"
	}
	bound = m.Termination
	if bound <= 0 {
		bound = defaultTermination
	}
	return ref, refWhat, bound, "termination bound (the scenario sets no stabilisation bound)"
}

// correctNodes returns the nodes of w that are correct at the end of the
// run: live and not paused. A correct node is one that never crashed after
// the start of its last incarnation and still takes steps; a node paused at
// the end takes none, so, like a crashed one, it is not counted.
func correctNodes(w *world) []string {
	var out []string
	for _, name := range w.names {
		if n := w.nodes[name]; n.live && n.pause == nil {
			out = append(out, name)
		}
	}
	return out
}

// eventualLeadership (Ω): there is a time after which every correct node
// trusts the same correct node until the end of the run, and that time is
// within the stabilisation bound of the reference (GST, or the first
// event).
func eventualLeadership(h *history.History) Result {
	w, end := finalWorld(h)
	m := &h.Meta
	ref, refWhat, bound, boundWhat := stabilisationBound(h)
	deadline := addTime(ref, bound)
	correct := correctNodes(w)
	r := Result{Figures: map[string]any{
		"correct": len(correct), "reference_ns": ref, "bound_ns": bound, "deadline_ns": deadline, "end_ns": end,
	}}
	if m.GST > 0 {
		r.Figures["gst_ns"] = m.GST
	}
	note := ""
	if !h.Ended {
		note = killedNote(end)
	}
	within := fmt.Sprintf("the %s %s after %s at %s (deadline %s)", fmtDur(bound), boundWhat, refWhat, fmtTime(ref), fmtTime(deadline))
	tooShort := func(what, unknown string) Result {
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("%s, but the run ends at %s, before %s, so %s is unknown; run the scenario longer or lower the stabilisation bound%s",
			what, fmtTime(end), within, unknown, note)
		return r
	}

	if len(correct) == 0 {
		r.Valid = True
		r.Explanation = fmt.Sprintf("no node is correct at the end of the run (%s): every node is down or paused, so none needs a leader and eventual leadership holds vacuously%s", fmtTime(end), note)
		return r
	}

	// The belief every correct node holds at the end, if they share one.
	leader := w.nodes[correct[0]].leader
	for _, name := range correct[1:] {
		if w.nodes[name].leader != leader {
			leader = ""
			break
		}
	}
	if leader == "" || !isCorrect(w, leader) {
		what := unstable(w, correct, leader, end, &r)
		if end < deadline {
			r.Evidence, r.Nodes, r.Interval = nil, nil, nil
			return tooShort(what, "whether leadership stabilises in time")
		}
		r.Valid = False
		r.Interval = &Interval{From: deadline, To: end}
		r.Explanation = fmt.Sprintf("%s, so leadership did not stabilise within %s%s", what, within, note)
		return r
	}

	// Stable: find when the last correct node came to trust the leader.
	var last *node
	for _, name := range correct {
		n := w.nodes[name]
		if last == nil || n.since.Time > last.since.Time {
			last = n
		}
	}
	at := last.since.Time
	r.Figures["leader"] = leader
	r.Figures["stabilised_ns"] = at
	r.Figures["stable_for_ns"] = end - at
	if m.GST > 0 {
		r.Figures["after_gst_ns"] = at - m.GST
	}
	trust := fmt.Sprintf("every correct node (%s) has trusted %s since %s%s, when %s",
		joinNames(correct), leader, fmtTime(at), relGST(at, m.GST), changedMind(last))
	switch {
	case at > deadline:
		r.Valid = False
		r.Nodes = []string{last.name}
		r.Interval = &Interval{From: deadline, To: at}
		if last.before != nil {
			r.Evidence = append(r.Evidence, *last.before)
		}
		r.Evidence = append(r.Evidence, *last.since)
		sortEvents(r.Evidence)
		r.Explanation = fmt.Sprintf("%s: %s later than %s%s", trust, fmtDur(at-deadline), within, note)
	case end < deadline:
		return tooShort(trust, "whether it stays so until the deadline")
	default:
		r.Valid = True
		r.Explanation = fmt.Sprintf("%s, within %s, and until the end of the run at %s%s", trust, within, fmtTime(end), note)
	}
	return r
}

// isCorrect reports whether the named node is correct in w.
func isCorrect(w *world, name string) bool {
	n, ok := w.nodes[name]
	return ok && n.live && n.pause == nil
}

// unstable describes why the correct nodes of w do not share a correct
// leader at the end, and sets r's nodes and evidence. leader is the belief
// they share, or "" if they do not share one.
func unstable(w *world, correct []string, leader string, end int64, r *Result) string {
	at := fmt.Sprintf("at the end of the run (%s)", fmtTime(end))
	if leader != "" {
		// They agree, on a node that is not correct.
		l := w.nodes[leader]
		first := w.nodes[correct[0]]
		r.Evidence = append(r.Evidence, *first.since)
		r.Nodes = append([]string{leader}, correct...)
		var why string
		switch {
		case l == nil || l.start == nil:
			why = fmt.Sprintf("%s never started", leader)
		case !l.live:
			why = fmt.Sprintf("%s %s at %s", leader, downWord(l.down), fmtTime(l.down.Time))
			r.Evidence = append(r.Evidence, *l.down)
		default:
			why = fmt.Sprintf("%s has been paused since %s", leader, fmtTime(l.pause.Time))
			r.Evidence = append(r.Evidence, *l.pause)
		}
		sortEvents(r.Evidence)
		return fmt.Sprintf("%s every correct node (%s) trusts %s, which is not correct: %s", at, joinNames(correct), leader, why)
	}
	// They disagree: one sentence part and one event per belief.
	groups := map[string][]string{}
	var order []string
	for _, name := range correct {
		l := w.nodes[name].leader
		if _, ok := groups[l]; !ok {
			order = append(order, l)
		}
		groups[l] = append(groups[l], name)
	}
	var parts []string
	for _, l := range order {
		names := groups[l]
		n := w.nodes[names[0]]
		r.Evidence = append(r.Evidence, *n.since)
		r.Nodes = append(r.Nodes, names...)
		who := l
		if l == "" {
			who = "no leader"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s (since %s)", joinNames(names), isAre(len(names), "trusts", "trust"), who, fmtTime(n.since.Time)))
	}
	sortEvents(r.Evidence)
	if len(order) == 1 {
		return fmt.Sprintf("%s no correct node trusts a leader: %s", at, parts[0])
	}
	return fmt.Sprintf("%s the correct nodes still disagree: %s", at, strings.Join(parts, ", "))
}

// relGST says where a time lies relative to GST: " (212ms after GST)".
func relGST(t, gst int64) string {
	switch {
	case gst <= 0:
		return ""
	case t >= gst:
		return fmt.Sprintf(" (%s after GST)", fmtDur(t-gst))
	}
	return fmt.Sprintf(" (%s before GST)", fmtDur(gst-t))
}

// changedMind says how the node that came last to its final belief got
// there: "n2 changed from n1 to n3", "n2 first reported it after its start
// at 0.1s".
func changedMind(n *node) string {
	switch {
	case n.since.Kind == history.KindProcess:
		return fmt.Sprintf("%s started", n.name) // unreachable while the belief is non-empty
	case n.before == nil || n.before.Kind == history.KindProcess:
		how := "started"
		if n.restart != nil {
			how = "was restarted under the same id"
		}
		return fmt.Sprintf("%s, which %s at %s, first reported it", n.name, how, fmtTime(n.start.Time))
	case n.before.Value == "":
		return fmt.Sprintf("%s changed from no leader to %s", n.name, n.leader)
	}
	return fmt.Sprintf("%s changed from %s to %s", n.name, n.before.Value, n.leader)
}
