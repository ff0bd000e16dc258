package checks

import (
	"fmt"
	"strings"

	"github.com/coupharness/coup/history"
)

// group is the live nodes that believe in one leader.
type group struct {
	leader    string
	believers []string
}

// groupsOf groups the live nodes of w that believe in some leader by that
// leader, in the order of their first believer, and returns the live nodes
// that believe in none.
func groupsOf(w *world) (groups []*group, none []string) {
	byLeader := map[string]*group{}
	for _, name := range w.live() {
		l := w.nodes[name].leader
		if l == "" {
			none = append(none, name)
			continue
		}
		g, ok := byLeader[l]
		if !ok {
			g = &group{leader: l}
			byLeader[l] = g
			groups = append(groups, g)
		}
		g.believers = append(g.believers, name)
	}
	return groups, none
}

// agreement: at the end of the run, no two live nodes believe in
// different leaders. Nodes that believe in none are termination's business.
func agreement(h *history.History) Result {
	w, end := finalWorld(h)
	groups, none := groupsOf(w)
	r := Result{Figures: map[string]any{"live": len(w.live()), "leaders": len(groups)}}
	note := ""
	if !h.Ended {
		note = killedNote(end)
	}
	noneNote := ""
	if len(none) > 0 {
		noneNote = fmt.Sprintf("; %s no leader, which termination judges", believe(none))
	}
	switch len(groups) {
	case 0:
		r.Valid = True
		r.Explanation = fmt.Sprintf("no live node believes in a leader at the end of the run (%s), so none disagree; termination judges that%s", fmtTime(end), note)
		return r
	case 1:
		g := groups[0]
		r.Valid = True
		r.Explanation = fmt.Sprintf("at the end of the run (%s) %s %s%s%s", fmtTime(end), believe(g.believers), g.leader, noneNote, note)
		return r
	}
	r.Valid = False
	var parts []string
	from := int64(0)
	for _, g := range groups {
		since := int64(0)
		for _, b := range g.believers {
			since = max(since, w.nodes[b].since.Time)
		}
		parts = append(parts, fmt.Sprintf("%s %s (since %s)", believe(g.believers), g.leader, fmtTime(since)))
		r.Nodes = append(r.Nodes, g.believers...)
		rep := w.nodes[g.believers[0]].report
		r.Evidence = append(r.Evidence, *rep)
		from = max(from, rep.Time)
	}
	sortEvents(r.Evidence)
	r.Interval = &Interval{From: from, To: end}
	r.Explanation = fmt.Sprintf("at the end of the run (%s) the live nodes believe in %d different leaders: %s%s; they never converged on one%s",
		fmtTime(end), len(groups), strings.Join(parts, ", "), noneNote, note)
	return r
}

// believe returns "n1 believes in" or "n1 and n2 believe in".
func believe(names []string) string {
	return joinNames(names) + " " + isAre(len(names), "believes in", "believe in")
}
