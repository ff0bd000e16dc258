package checks

import (
	"fmt"
	"slices"

	"github.com/coupharness/coup/history"
)

// validity: at the end of the run, every leader a live node believes in
// is live and, when the algorithm elects the highest (smallest) id, has the
// highest (smallest) id among the live nodes.
func validity(h *history.History) Result {
	w, end := finalWorld(h)
	note := ""
	if !h.Ended {
		note = killedNote(end)
	}
	m := &h.Meta
	if m.Elects != "" && m.Elects != "max" && m.Elects != "min" {
		return Result{
			Valid:       Unknown,
			Explanation: fmt.Sprintf("the meta event says the algorithm elects %q, want \"max\", \"min\" or nothing, so the right leader is unknown", m.Elects),
		}
	}
	groups, _ := groupsOf(w)
	right, rightID, haveRight := bestLive(w, m)
	superlative := "highest"
	if m.Elects == "min" {
		superlative = "smallest"
	}

	r := Result{Figures: map[string]any{"live": len(w.live()), "leaders": len(groups)}}
	var wrong, unknown []string // one sentence per wrong or unjudgeable leader
	wrongNodes := 0
	var support []*history.Event
	var nodes []string
	for _, g := range groups {
		l := w.nodes[g.leader]
		claim := fmt.Sprintf("%s %s", believe(g.believers), g.leader)
		var why string
		switch {
		case l == nil || l.start == nil:
			why = fmt.Sprintf("%s, but %s never started", claim, g.leader)
		case !l.live:
			why = fmt.Sprintf("%s, but %s is not live (%s at %s)", claim, g.leader, downWord(l.down), fmtTime(l.down.Time))
			support = append(support, l.down)
			if m.Elects != "" && haveRight {
				support = append(support, w.nodes[right].start)
			}
		case m.Elects == "":
			continue
		default:
			id, ok := m.IDOf(g.leader)
			if !ok {
				unknown = append(unknown, fmt.Sprintf("%s, which has no election id in the meta event", claim))
				continue
			}
			if id == rightID {
				continue
			}
			rid, _ := m.IDOf(right)
			why = fmt.Sprintf("%s (id %d), but %s (id %d) is live", claim, id, right, rid)
			support = append(support, w.nodes[right].start)
		}
		wrong = append(wrong, why)
		wrongNodes += len(g.believers)
		nodes = addNew(nodes, g.believers...)
		nodes = addNew(nodes, g.leader)
		r.Evidence = append(r.Evidence, *w.nodes[g.believers[0]].report)
	}

	switch {
	case len(wrong) > 0:
		r.Valid = False
		if haveRight && m.Elects != "" {
			nodes = addNew(nodes, right)
		}
		r.Nodes = nodes
		r.Interval = &Interval{From: end, To: end}
		for _, e := range support {
			if !slices.ContainsFunc(r.Evidence, func(x history.Event) bool { return x.Index == e.Index }) {
				r.Evidence = append(r.Evidence, *e)
			}
		}
		sortEvents(r.Evidence)
		r.figure("wrong_believers", wrongNodes)
		fix := "a live node should have been elected"
		if m.Elects != "" {
			if haveRight {
				fix = fmt.Sprintf("%s, the live node with the %s id, should have been elected", right, superlative)
			} else {
				fix = "no live node has an election id in the meta event"
			}
		}
		r.Explanation = fmt.Sprintf("at the end of the run (%s) %s; %s", fmtTime(end), wrong[0], fix)
		if len(wrong) > 1 {
			r.Explanation += fmt.Sprintf("; %d leaders believed in are wrong in all", len(wrong))
		}
	case len(unknown) > 0:
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("at the end of the run (%s) %s, so whether it has the %s id is unknown; list it in the meta event's nodes and ids", fmtTime(end), unknown[0], superlative)
	case len(groups) == 0:
		r.Valid = True
		r.Explanation = fmt.Sprintf("no live node believes in a leader at the end of the run (%s); termination judges that", fmtTime(end))
	default:
		r.Valid = True
		var leaders []string
		for _, g := range groups {
			leaders = append(leaders, g.leader)
		}
		r.Explanation = fmt.Sprintf("at the end of the run (%s) every leader believed in is live", fmtTime(end))
		if m.Elects != "" {
			r.Explanation += fmt.Sprintf(" and has the %s live id (%s)", superlative, joinNames(leaders))
		} else {
			r.Explanation += fmt.Sprintf(" (%s)", joinNames(leaders))
		}
	}
	r.Explanation += note
	return r
}

// bestLive returns the live node with the highest election id (the smallest
// when m.Elects is "min"). Live nodes without an id are passed over.
func bestLive(w *world, m *history.Meta) (name string, id int, ok bool) {
	for _, n := range w.live() {
		nid, known := m.IDOf(n)
		if !known {
			continue
		}
		if !ok || (m.Elects == "min" && nid < id) || (m.Elects != "min" && nid > id) {
			name, id, ok = n, nid, true
		}
	}
	return name, id, ok
}

// downWord says how a node went down: "crashed", "exited" or "stopped".
func downWord(e *history.Event) string {
	switch e.What {
	case history.ProcCrash:
		return "crashed"
	case history.ProcExit:
		return "exited"
	}
	return "stopped"
}

// addNew appends the names not yet in list.
func addNew(list []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}
