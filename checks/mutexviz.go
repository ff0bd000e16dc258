package checks

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/anishathalye/porcupine"

	"coup/harness/history"
)

// What porcupine's visualisation of a lock history shows besides the
// operations: in each client's row, when it held the lock by its own
// account; in a row of its own ("held twice"), when two or more clients
// held it at once; when each node said it was inside; when the nemesis
// struck; and, in a row of their own, the timed-out operations the check
// left out.

// Tags of the visualisation's extra rows; porcupine sorts them by name,
// below the clients.
const (
	tagHeldTwice = "held twice"
	tagLeftOut   = "left out"
)

// holdSpan is a time a client held the lock by its own account: from its
// acquire's ok to the next release its process invoked, or to the end of
// the history.
type holdSpan struct {
	process, owner string
	from, to       int64
	released       bool // to is a release's invocation, not the end
}

// clientHolds returns the holds of ops (in invocation order), in the order
// of their acquires.
func clientHolds(h *history.History, ops []*lockOp) []holdSpan {
	var out []holdSpan
	open := map[string]int{} // process -> its open hold in out
	for _, o := range ops {
		switch {
		case o.f == fAcquire && o.outcome(h) == history.OpOK:
			open[o.process] = len(out)
			out = append(out, holdSpan{process: o.process, owner: o.owner, from: h.Events[o.done].Time})
		case o.f == fRelease:
			if i, ok := open[o.process]; ok {
				out[i].to, out[i].released = h.Events[o.invoke].Time, true
				delete(open, o.process)
			}
		}
	}
	for _, i := range open {
		out[i].to = h.End()
	}
	return out
}

// jointHold is a time during which the same two or more owners held the
// lock at once.
type jointHold struct {
	from, to int64
	owners   []string
}

// heldTogether returns, in time order, the times during which two or more
// owners held the lock by the holds given, each with the owners.
func heldTogether(holds []holdSpan) []jointHold {
	type edge struct {
		t     int64
		delta int
		owner string
	}
	var edges []edge
	for _, s := range holds {
		if s.to > s.from {
			edges = append(edges, edge{s.from, 1, s.owner}, edge{s.to, -1, s.owner})
		}
	}
	sort.SliceStable(edges, func(i, j int) bool { return edges[i].t < edges[j].t })
	count := map[string]int{}
	var out []jointHold
	var cur *jointHold
	for i, e := range edges {
		if count[e.owner] += e.delta; count[e.owner] <= 0 {
			delete(count, e.owner)
		}
		if i+1 < len(edges) && edges[i+1].t == e.t {
			continue // every change at one instant first
		}
		owners := slices.Sorted(maps.Keys(count))
		if cur != nil && !slices.Equal(cur.owners, owners) {
			cur.to = e.t
			out = append(out, *cur)
			cur = nil
		}
		if cur == nil && len(owners) >= 2 {
			cur = &jointHold{from: e.t, owners: owners}
		}
	}
	return out
}

// holdAnnotations mark each client's holds in its row, and the times two
// or more held the lock at once in the "held twice" row. client gives a
// process's row.
func holdAnnotations(h *history.History, ops []*lockOp, client func(string) int) []porcupine.Annotation {
	holds := clientHolds(h, ops)
	var out []porcupine.Annotation
	for _, s := range holds {
		until := "the end of the history"
		if s.released {
			until = "it asked to release"
		}
		// A nanosecond after the ok, so that porcupine's page does not
		// stretch the acquire's box over the annotation that begins where
		// it ends.
		out = append(out, porcupine.Annotation{
			ClientId: client(s.process), Start: min(s.from+1, s.to), End: s.to,
			Description:     fmt.Sprintf("%s holds", s.owner),
			Details:         fmt.Sprintf("%s held the lock for %s from %s, when its acquire returned ok, to %s, when %s", s.process, s.owner, fmtTime(s.from), fmtTime(s.to), until),
			BackgroundColor: "#c8e6c9",
		})
	}
	for _, o := range heldTogether(holds) {
		out = append(out, porcupine.Annotation{
			Tag: tagHeldTwice, Start: min(o.from+1, o.to), End: o.to, // aligned with the holds
			Description:     joinNames(o.owners),
			Details:         fmt.Sprintf("%s all held the lock from %s to %s (%s), each by its own acquire's ok", joinNames(o.owners), fmtTime(o.from), fmtTime(o.to), fmtDur(o.to-o.from)),
			TextColor:       "#ffffff",
			BackgroundColor: "#d32f2f",
		})
	}
	return out
}

// leftOutAnnotations mark, each at its invocation, the timed-out
// operations the check left out because their effect could not change the
// verdict.
func leftOutAnnotations(h *history.History, dropped []*lockOp) []porcupine.Annotation {
	var out []porcupine.Annotation
	for _, o := range dropped {
		at := h.Events[o.invoke].Time
		out = append(out, porcupine.Annotation{
			Tag: tagLeftOut, Start: at, End: at,
			Description:     fmt.Sprintf("%s %s ?", o.process, o.f),
			Details:         fmt.Sprintf("%s's %s(%s) at %s, invoked at %s, timed out; whether it took effect cannot change the verdict, so the check left it out", o.process, o.f, o.owner, o.node, fmtTime(at)),
			BackgroundColor: "#e0e0e0",
		})
	}
	return out
}

// nodeAnnotations mark when each node said it was in the critical section
// and when the nemesis struck.
func nodeAnnotations(h *history.History) []porcupine.Annotation {
	var out []porcupine.Annotation
	claims, _ := csClaims(h)
	for _, c := range claims {
		out = append(out, porcupine.Annotation{
			Tag: c.node, Start: c.from, End: c.to,
			Description:     "in cs",
			Details:         fmt.Sprintf("%s in the critical section from %s to %s", c.node, fmtTime(c.from), fmtTime(c.to)),
			BackgroundColor: "#ffe0b3",
		})
	}
	for _, e := range h.Events {
		if e.Kind != history.KindNemesis {
			continue
		}
		out = append(out, porcupine.Annotation{
			Tag: "nemesis", Start: e.Time,
			Description:     fmt.Sprintf("%s %s", e.What, e.Phase),
			Details:         fmt.Sprintf("%s %s %s at %s", e.What, e.Phase, joinNames(e.Nodes), fmtTime(e.Time)),
			BackgroundColor: "#f4b6b6",
		})
	}
	return out
}
