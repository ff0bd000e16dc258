package checks

import (
	"strings"

	"github.com/coupharness/coup/history"
)

// Timeline is what every node believed, and what the nemesis did, over a
// history: the picture a report draws. It follows the same model of a node
// as the checks (see the package documentation), so it shows what they
// judged.
type Timeline struct {
	// Nodes are the nodes in the meta event's order, then any other node
	// in the order it first appears.
	Nodes []NodeLine `json:"nodes"`
	// Faults are the nemesis's faults, in the order they began.
	Faults []Fault `json:"faults"`
	// RunEnd is when the harness began stopping the nodes (the end of the
	// run the checks judge); End is the time of the last event.
	RunEnd int64 `json:"run_end"`
	End    int64 `json:"end"`
}

// NodeLine is one node's life.
type NodeLine struct {
	Name string `json:"name"`
	// Spans cover the node's live time, back to back within an
	// incarnation; a gap is time when the node was down.
	Spans []Span `json:"spans"`
	// Marks are its process events: start, crash, exit, stop, pause,
	// resume.
	Marks []Mark `json:"marks"`
}

// Span is a stretch of time in which a live node's belief and pause state
// did not change.
type Span struct {
	From   int64  `json:"from"`
	To     int64  `json:"to"`
	Leader string `json:"leader,omitempty"` // "" for none
	Paused bool   `json:"paused,omitempty"`
	// Unknown is true when the node's belief is not known (its leader
	// report says history.LeaderUnknown: a real server's poll failed or
	// timed out), which is no claim, and not a belief in no leader.
	Unknown bool `json:"unknown,omitempty"`
	// Evidence is what the node's last leader report at the span's start
	// (the one that set its belief) was read from: a real server's log
	// line or poll answer, if it says.
	Evidence []history.Evidence `json:"evidence,omitempty"`
}

// Mark is a process event of a node.
type Mark struct {
	Time int64  `json:"t"`
	What string `json:"what"`
	// Restart is true for a start that follows an earlier incarnation.
	Restart bool `json:"restart,omitempty"`
}

// Fault is a nemesis fault from its start to its end, or from its start to
// the end of the history when the history does not say it ended (To is -1).
// An end with no start is a fault of no length at its end.
type Fault struct {
	What  string   `json:"what"`
	Nodes []string `json:"nodes,omitempty"`
	From  int64    `json:"from"`
	To    int64    `json:"to"`
}

// BuildTimeline returns the timeline of h, in one pass.
func BuildTimeline(h *history.History) *Timeline {
	tl := &Timeline{End: h.End(), RunEnd: h.End()}
	w := newWorld(&h.Meta)
	lines := map[string]*NodeLine{}
	line := func(name string) *NodeLine {
		l, ok := lines[name]
		if !ok {
			l = &NodeLine{Name: name}
			lines[name] = l
		}
		return l
	}
	for _, name := range w.names {
		line(name)
	}
	open := map[string][]int{} // unfinished faults by what and nodes
	stopped := false
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindNemesis:
			key := e.What + "\x00" + strings.Join(e.Nodes, ",")
			if e.Phase == history.PhaseEnd {
				if q := open[key]; len(q) > 0 {
					tl.Faults[q[0]].To = e.Time
					open[key] = q[1:]
				} else {
					tl.Faults = append(tl.Faults, Fault{What: e.What, Nodes: e.Nodes, From: e.Time, To: e.Time})
				}
				continue
			}
			open[key] = append(open[key], len(tl.Faults))
			tl.Faults = append(tl.Faults, Fault{What: e.What, Nodes: e.Nodes, From: e.Time, To: -1})
			continue
		case !affects(e):
			continue
		}
		n := w.node(e.Node)
		l := line(e.Node)
		wasLive, wasPaused, was, wasUnknown := n.live, n.pause != nil, n.leader, unknownBelief(n)
		restart := e.Kind == history.KindProcess && e.What == history.ProcStart && n.start != nil
		w.apply(e)
		if e.Kind == history.KindProcess {
			l.Marks = append(l.Marks, Mark{Time: e.Time, What: e.What, Restart: restart})
			if e.What == history.ProcStop && !stopped {
				stopped, tl.RunEnd = true, e.Time
			}
		}
		if wasLive == n.live && wasPaused == (n.pause != nil) && was == n.leader && wasUnknown == unknownBelief(n) && !(restart && wasLive) {
			continue
		}
		if wasLive && len(l.Spans) > 0 {
			l.Spans[len(l.Spans)-1].To = e.Time
		}
		if n.live {
			s := Span{From: e.Time, To: -1, Leader: n.leader, Paused: n.pause != nil, Unknown: unknownBelief(n)}
			if n.report != nil {
				s.Evidence = n.report.Evidence
			}
			l.Spans = append(l.Spans, s)
		}
	}
	for _, name := range w.names {
		l := lines[name]
		if k := len(l.Spans); k > 0 && l.Spans[k-1].To < 0 {
			l.Spans[k-1].To = tl.End
		}
		tl.Nodes = append(tl.Nodes, *l)
	}
	return tl
}

// unknownBelief reports whether a live node's belief is not known: its
// last leader report names no leader and says so (history.LeaderUnknown).
func unknownBelief(n *node) bool {
	return n.live && n.report != nil && n.report.Value == "" && n.report.Detail == history.LeaderUnknown
}
