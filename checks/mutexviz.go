package checks

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/coupharness/coup/history"
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
	released       bool   // to is a release's invocation, not the end
	token          *int64 // the grant's fencing token, when it has one
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
			out = append(out, holdSpan{process: o.process, owner: o.owner, from: h.Events[o.done].Time, token: h.Events[o.done].Token})
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
	out = append(out, nemesisAnnotations(h)...)
	return out
}

// clientOrder returns the processes of ops in natural order (c2 before
// c10): the rows of porcupine's page, top to bottom.
func clientOrder(ops []*lockOp) []string {
	seen := map[string]bool{}
	var out []string
	for _, o := range ops {
		if !seen[o.process] {
			seen[o.process] = true
			out = append(out, o.process)
		}
	}
	slices.SortFunc(out, NaturalCompare)
	return out
}

// NaturalCompare orders names as a person would: runs of digits by their
// value, so that c2 comes before c10 and n9 before n10.
func NaturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitRun returns the length of the run of ASCII digits s begins with.
func digitRun(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// The lines of porcupine's page (v1.3) that label a client's row with its
// number; nameClients makes them use the client's name.
const (
	vizClientsLine = "const realClients = maxClient + 1\n"
	vizLabelWidth  = "const tag = i < realClients ? i.toString() : sortedTags[i - realClients]"
	vizLabelText   = "text.textContent = i < realClients ? i : sortedTags[i - realClients]"
)

// nameClients labels the client rows of porcupine's page with names[id]
// instead of the number id. A page that does not have the lines it
// expects (another porcupine) is returned unchanged, with its numbers.
func nameClients(page []byte, names []string) []byte {
	s := string(page)
	for _, line := range []string{vizClientsLine, vizLabelWidth, vizLabelText} {
		if strings.Count(s, line) != 1 {
			return page
		}
	}
	list, err := json.Marshal(names) // escapes <, > and &: safe in a script
	if err != nil {
		return page
	}
	s = strings.Replace(s, vizClientsLine, vizClientsLine+"  const clientNames = "+string(list)+"\n", 1)
	s = strings.Replace(s, vizLabelWidth, "const tag = i < realClients ? String(clientNames[i] ?? i) : sortedTags[i - realClients]", 1)
	s = strings.Replace(s, vizLabelText, "text.textContent = i < realClients ? String(clientNames[i] ?? i) : sortedTags[i - realClients]", 1)
	return []byte(s)
}

// LockLanes is what every client did with the lock, over a history: the
// picture a report's mutex lanes draw. It follows the mutex checks' model
// of a hold (see clientHolds), so it shows what they judged.
type LockLanes struct {
	// Lanes are the clients, in natural order of their names.
	Lanes []LockLane
	// Joint are the times two or more owners held the lock at once.
	Joint []JointHold
	// InCS are the spans in which a live node said it was in the critical
	// section, in the order they began.
	InCS []CSSpan
}

// LockLane is one client's operations.
type LockLane struct {
	Process string
	Steps   []LockStep
}

// The kinds of a LockStep.
const (
	StepRequest = "request" // an acquire, from its invocation to its answer
	StepHold    = "hold"    // from an acquire's ok to the release's invocation
	StepRelease = "release" // a release, from its invocation to its answer
)

// LockStep is a stretch of a client's time.
type LockStep struct {
	What     string
	From, To int64
	// Outcome is the answer to a request or release: ok, fail, info, or
	// "" when the history ended first. A hold's is ok when the client
	// released, "" when it held to the end of the history.
	Outcome string
	// Node is the node the client asked; Owner whom it acted for.
	Node, Owner string
	// Token is a hold's fencing token, when its grant carried one.
	Token *int64
}

// JointHold is a time during which two or more owners (in natural
// order) held the lock.
type JointHold struct {
	From, To int64
	Owners   []string
}

// CSSpan is a time a node said it was in the critical section.
type CSSpan struct {
	Node     string
	From, To int64
}

// BuildLockLanes returns the lanes of h; nil when h has no acquire or
// release operation.
func BuildLockLanes(h *history.History) *LockLanes {
	ops := lockOps(h)
	if len(ops) == 0 {
		return nil
	}
	end := h.End()
	lanes := map[string]*LockLane{}
	out := &LockLanes{}
	for _, p := range clientOrder(ops) {
		out.Lanes = append(out.Lanes, LockLane{Process: p})
	}
	for i := range out.Lanes {
		lanes[out.Lanes[i].Process] = &out.Lanes[i]
	}
	for _, o := range ops {
		step := LockStep{What: StepRequest, From: h.Events[o.invoke].Time, To: end, Outcome: o.outcome(h), Node: o.node, Owner: o.owner}
		if o.f == fRelease {
			step.What = StepRelease
		}
		if o.done >= 0 {
			step.To = h.Events[o.done].Time
		}
		l := lanes[o.process]
		l.Steps = append(l.Steps, step)
	}
	holds := clientHolds(h, ops)
	for _, s := range holds {
		outcome := ""
		if s.released {
			outcome = history.OpOK
		}
		l := lanes[s.process]
		l.Steps = append(l.Steps, LockStep{What: StepHold, From: s.from, To: s.to, Outcome: outcome, Owner: s.owner, Token: s.token})
	}
	for i := range out.Lanes {
		slices.SortStableFunc(out.Lanes[i].Steps, func(a, b LockStep) int { return cmp.Compare(a.From, b.From) })
	}
	for _, j := range heldTogether(holds) {
		owners := slices.Clone(j.owners)
		slices.SortFunc(owners, NaturalCompare)
		out.Joint = append(out.Joint, JointHold{From: j.from, To: j.to, Owners: owners})
	}
	claims, _ := csClaims(h)
	for _, c := range claims {
		out.InCS = append(out.InCS, CSSpan{Node: c.node, From: c.from, To: c.to})
	}
	return out
}

// nemesisAnnotations mark each nemesis event on porcupine's page.
func nemesisAnnotations(h *history.History) []porcupine.Annotation {
	var out []porcupine.Annotation
	for i := range h.Events {
		e := &h.Events[i]
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
