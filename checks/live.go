package checks

import "github.com/coupharness/coup/history"

// world is the state of every node at one point of a history, built by
// applying the history's events in order. It knows only what the election
// checks need: who is live, who is paused, and whom each node trusts.
type world struct {
	nodes map[string]*node
	// names lists the nodes in a fixed order: the meta event's nodes, then
	// any other node in the order it first appears.
	names []string
	// ignored counts leader reports from nodes that were not live.
	ignored int
}

// node is one node's state in a world.
type node struct {
	name string
	// live is true from a start until the next crash, exit or stop.
	live bool
	// start is the start event of the current incarnation, or of the last
	// one once the node is down; nil if the node never started.
	start *history.Event
	// down is the crash, exit or stop that ended the last incarnation; nil
	// while the node is live or if it never started.
	down *history.Event
	// pause is the pause in force; nil when the node runs or is down.
	pause *history.Event
	// leader is the node this one trusts, "" for none. It is "" whenever the
	// node is not live, and after a start until the node's first report.
	leader string
	// report is the leader report of this incarnation that set leader; nil
	// before the first one and whenever the node is not live.
	report *history.Event
	// since is the event from which leader has held unchanged: the report
	// that changed it to its value, or the start of the incarnation while
	// the node believes in none; nil whenever the node is not live.
	since *history.Event
	// before is the event that set the belief leader replaced (the previous
	// since), nil if leader is the first belief of this incarnation.
	before *history.Event
	// restart is the end (crash, exit or stop) of the previous incarnation
	// when the current one is a restart under the same id; nil for a
	// node's first start.
	restart *history.Event
}

// claims reports whether the node is live and believes it is the leader.
func (n *node) claims() bool { return n.live && n.leader == n.name }

func newWorld(m *history.Meta) *world {
	w := &world{nodes: map[string]*node{}}
	for _, name := range m.Nodes {
		w.node(name)
	}
	return w
}

// worldAt returns the state after every event of h whose time is at most t.
func worldAt(h *history.History, t int64) *world {
	w := newWorld(&h.Meta)
	for i := range h.Events {
		e := &h.Events[i]
		if e.Time > t {
			break
		}
		w.apply(e)
	}
	return w
}

// finalWorld returns the state at the end of the run, and its time: after
// every event before the harness's shutdown began (its first stop event),
// or after every event when there is none (a killed run). Stopping the
// nodes ends the observation, not their correctness, so the end-state
// checks judge the moment just before it.
func finalWorld(h *history.History) (*world, int64) {
	w := newWorld(&h.Meta)
	end := h.End()
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind == history.KindProcess && e.What == history.ProcStop {
			end = e.Time
			break
		}
		w.apply(e)
	}
	return w, end
}

// node returns the named node, adding it if it is new.
func (w *world) node(name string) *node {
	n, ok := w.nodes[name]
	if !ok {
		n = &node{name: name}
		w.nodes[name] = n
		w.names = append(w.names, name)
	}
	return n
}

// affects reports whether e can change a world: a process event or a leader
// report.
func affects(e *history.Event) bool {
	switch e.Kind {
	case history.KindProcess:
		return e.Node != ""
	case history.KindReport:
		return e.Node != "" && e.What == history.ReportLeader
	}
	return false
}

// apply changes the world by one event. Events that do not affect it are
// ignored, as are unknown process whats.
func (w *world) apply(e *history.Event) {
	if !affects(e) {
		return
	}
	n := w.node(e.Node)
	if e.Kind == history.KindReport {
		if !n.live {
			w.ignored++
			return
		}
		if e.Value != n.leader {
			n.before, n.since = n.since, e
		}
		n.leader, n.report = e.Value, e
		return
	}
	switch e.What {
	case history.ProcStart:
		// A start while live means the recorder missed the end of the
		// previous incarnation; either way the new process knows nothing.
		*n = node{name: n.name, live: true, start: e, since: e, restart: n.down}
	case history.ProcCrash, history.ProcExit, history.ProcStop:
		if n.live {
			*n = node{name: n.name, start: n.start, down: e}
		}
	case history.ProcPause:
		if n.live && n.pause == nil {
			n.pause = e
		}
	case history.ProcResume:
		n.pause = nil
	}
}

// live returns the names of the live nodes, in the world's order.
func (w *world) live() []string {
	var out []string
	for _, name := range w.names {
		if w.nodes[name].live {
			out = append(out, name)
		}
	}
	return out
}
