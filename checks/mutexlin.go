package checks

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/coupharness/coup/history"
)

// LinearizabilityBudget bounds the time porcupine may spend on one
// history; past it, mutex-linearizable is unknown. The search is NP-hard
// in general, and timed-out operations, which stay open to the end of the
// history, are what make it expensive.
var LinearizabilityBudget = 20 * time.Second

// VisualisationFile is the name of porcupine's visualisation of a
// non-linearizable lock history, written into the run's folder.
const VisualisationFile = "mutex-linearizable.html"

// lockInput is an operation given to the lock model.
type lockInput struct {
	f, owner, process, node string
}

// lockOutput says whether the operation surely took effect (it returned
// ok) or may have (it timed out: info, or the history ended first).
type lockOutput struct {
	known bool
}

// lockStep applies an operation to a lock held by holder ("" when free):
// acquire succeeds only when the lock is free, release only by the holder.
func lockStep(holder string, in lockInput) (string, bool) {
	switch in.f {
	case fAcquire:
		return in.owner, holder == ""
	case fRelease:
		return "", holder == in.owner
	}
	return holder, false
}

// lockModel is the lock as porcupine sees it. It is nondeterministic
// because an operation whose outcome is unknown may or may not have taken
// effect: it leads both to the state after it and to the state before.
var lockModel = (&porcupine.NondeterministicModel{
	Init: func() []any { return []any{""} },
	Step: func(state, input, output any) []any {
		holder, in, known := state.(string), input.(lockInput), output.(lockOutput).known
		next, legal := lockStep(holder, in)
		switch {
		case known && legal:
			return []any{next}
		case known:
			return nil
		case legal:
			return []any{holder, next}
		}
		return []any{holder}
	},
	Hash: func(state any) uint64 {
		f := fnv.New64a()
		f.Write([]byte(state.(string)))
		return f.Sum64()
	},
	DescribeOperation: func(input, output any) string {
		in := input.(lockInput)
		res := "ok"
		if !output.(lockOutput).known {
			res = "? (timed out)"
		}
		return fmt.Sprintf("%s %s(%s) at %s → %s", in.process, in.f, in.owner, in.node, res)
	},
	DescribeState: describeHolder,
}).ToModel()

func describeHolder(state any) string {
	if h := state.(string); h != "" {
		return "held by " + h
	}
	return "free"
}

// mutexLinearizable: the acquire and release operations of the clients,
// ok and timed out, are linearizable against a lock. Failed operations did
// not take effect and are left out; timed-out ones may have taken effect at
// any time after their invocation, and are left out too when taking effect
// could not help any order fit (see relevant).
func mutexLinearizable(h *history.History) Result {
	ops := lockOps(h)
	keep := relevant(h, ops)
	var pops []porcupine.Operation
	var kept, dropped []*lockOp
	// Clients are numbered in natural order of their names, so that
	// porcupine's rows read c1, c2, ... from the top.
	names := clientOrder(ops)
	clients := map[string]int{}
	for i, p := range names {
		clients[p] = i
	}
	client := func(p string) int { return clients[p] }
	end := h.End() + 1
	failed, unknown := 0, 0
	for i, o := range ops {
		ret, known := end, false
		switch o.outcome(h) {
		case history.OpFail:
			failed++
			continue
		case history.OpOK:
			ret, known = h.Events[o.done].Time, true
		default:
			unknown++
			if !keep[i] {
				dropped = append(dropped, o)
				continue
			}
		}
		pops = append(pops, porcupine.Operation{
			ClientId: client(o.process),
			Input:    lockInput{f: o.f, owner: o.owner, process: o.process, node: o.node},
			Call:     h.Events[o.invoke].Time,
			Output:   lockOutput{known: known},
			Return:   ret,
		})
		kept = append(kept, o)
	}
	r := Result{Figures: map[string]any{"operations": len(pops), "indeterminate": unknown, "failed": failed, "left_out": len(dropped)}}
	if len(pops) == 0 && len(dropped) > 0 {
		r.Valid = True
		r.Explanation = fmt.Sprintf("every operation timed out or failed, and none could have taken effect in a way that matters (%d timed out, %d failed)", unknown, failed)
		return r
	}
	if len(pops) == 0 {
		r.Valid = Unknown
		r.Explanation = "the history has no acquire or release that may have taken effect, so there is nothing to judge; run a mutex workload"
		return r
	}
	switch porcupine.CheckOperationsTimeout(lockModel, pops, LinearizabilityBudget) {
	case porcupine.Ok:
		r.Valid = True
		r.Explanation = fmt.Sprintf("the %s %s linearizable against a lock (%d timed out and may or may not have taken effect; %d failed and were left out)",
			plural(len(pops), "operation"), isAre(len(pops), "is", "are"), unknown, failed)
		return r
	case porcupine.Unknown:
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("porcupine could not decide within %s whether the %s are linearizable (%d timed out, and each may or may not have taken effect); shorten the run or lengthen the workload's timeout",
			LinearizabilityBudget, plural(len(pops), "operation"), unknown)
		return r
	}
	_, info := porcupine.CheckOperationsVerbose(lockModel, pops, LinearizabilityBudget)
	r.Valid = False
	explainIllegal(h, &r, kept, pops, info)
	info.AddAnnotations(holdAnnotations(h, kept, client))
	info.AddAnnotations(nodeAnnotations(h))
	info.AddAnnotations(leftOutAnnotations(h, dropped))
	var buf bytes.Buffer
	if err := porcupine.Visualize(lockModel, info, &buf); err == nil {
		r.Files = []File{{Name: VisualisationFile, Data: nameClients(buf.Bytes(), names)}}
		r.Explanation += fmt.Sprintf("; porcupine's visualisation is %s in the run's folder", VisualisationFile)
	}
	return r
}

// explainIllegal names the operation that cannot be linearized: among those
// outside the longest linearizable prefix porcupine found, the one that
// returned first. The state the prefix leaves the lock in says why.
func explainIllegal(h *history.History, r *Result, kept []*lockOp, pops []porcupine.Operation, info porcupine.LinearizationInfo) {
	var partials [][]int
	for _, p := range info.PartialLinearizations() {
		partials = append(partials, p...)
	}
	prefix, stuck := stuckAfter(partials, pops)
	states := lockModel.Init()
	for _, id := range prefix {
		_, states = lockModel.Step(states, pops[id].Input, pops[id].Output)
	}
	r.Explanation = fmt.Sprintf("the %s %s not linearizable against a lock", plural(len(pops), "operation"), isAre(len(pops), "is", "are"))
	if stuck < 0 {
		return
	}
	o := kept[stuck]
	if o.done < 0 {
		return // only an operation that returned can be what no order fits
	}
	done := h.Events[o.done]
	r.Nodes = []string{o.node}
	r.Evidence = []history.Event{h.Events[o.invoke], done}
	r.Interval = &Interval{From: h.Events[o.invoke].Time, To: done.Time}
	// The operations that left the lock in that state: the last acquire of
	// the prefix whose owner holds it.
	holder := ""
	for i := len(prefix) - 1; i >= 0; i-- {
		p := kept[prefix[i]]
		if p.f == fAcquire && holds(states, p.owner) {
			holder = fmt.Sprintf(" (acquired through %s, invoked at %s%s)", p.node, fmtTime(h.Events[p.invoke].Time), joinText("; ", grantText(h, p)))
			r.Evidence = append(r.Evidence, h.Events[p.invoke])
			if p.done >= 0 {
				r.Evidence = append(r.Evidence, h.Events[p.done])
			}
			if rel := releaseAfter(h, kept, p); rel != nil {
				done := h.Events[rel.done]
				holder += fmt.Sprintf("; %s's release of it at %s: %s", rel.process, fmtTime(done.Time), done.Value)
				r.Evidence = append(r.Evidence, h.Events[rel.invoke], done)
			}
			if p.node != o.node {
				r.Nodes = append(r.Nodes, p.node)
			}
			break
		}
	}
	sortEvents(r.Evidence)
	rule := "an acquire succeeds only when the lock is free"
	if o.f != fAcquire {
		rule = "only the holder can release the lock"
	}
	r.Explanation += fmt.Sprintf(": the longest order porcupine can fit takes %s and leaves the lock %s%s, and %s's %s(%s) at %s, invoked at %s and ok at %s%s, cannot come after it: %s",
		plural(len(prefix), "operation"), describeStates(states), holder,
		o.process, o.f, o.owner, o.node, fmtTime(h.Events[o.invoke].Time), fmtTime(done.Time), parenText(grantText(h, o)), rule)
}

// describeStates describes a set of lock states: "free", "held by c1",
// "free or held by c1".
func describeStates(states any) string {
	var parts []string
	for _, s := range states.([]any) {
		parts = append(parts, describeHolder(s))
	}
	return strings.Join(parts, " or ")
}

// holds reports whether some state of a set has owner holding the lock.
func holds(states any, owner string) bool {
	for _, s := range states.([]any) {
		if s.(string) == owner {
			return true
		}
	}
	return false
}

// relevant says, for each operation of ops, whether the checker must
// consider it. Every operation that returned is relevant. One whose outcome
// is unknown (timed out, or open when the history ended) may or may not
// have taken effect; leaving it out keeps only "did not", which is sound
// when taking effect could never help an order fit:
//
//   - an acquire for owner o taking effect only makes o the holder, which
//     helps nothing but a release for o: it is relevant when a release for
//     o returned ok after the acquire was invoked;
//   - a release for o taking effect only frees a lock o holds: it is
//     relevant when an acquire for o returned ok or is relevant itself.
//
// Unknown operations are what make the search expensive (each stays open
// to the end of the history), and a crashed node leaves many behind that
// cannot matter.
func relevant(h *history.History, ops []*lockOp) []bool {
	keep := make([]bool, len(ops))
	releasedAt := map[string]int64{} // owner -> time of its last ok release
	for _, o := range ops {
		if o.f == fRelease && o.outcome(h) == history.OpOK {
			releasedAt[o.owner] = max(releasedAt[o.owner], h.Events[o.done].Time+1)
		}
	}
	acquired := map[string]bool{}
	for i, o := range ops {
		switch o.outcome(h) {
		case history.OpOK:
			keep[i] = true
		case history.OpFail:
		default:
			keep[i] = o.f == fAcquire && releasedAt[o.owner] > h.Events[o.invoke].Time
		}
		if keep[i] && o.f == fAcquire {
			acquired[o.owner] = true
		}
	}
	for i, o := range ops {
		if !keep[i] && o.f == fRelease && o.outcome(h) != history.OpFail && acquired[o.owner] {
			keep[i] = true
		}
	}
	return keep
}

// stuckAfter finds where porcupine got stuck: the longest of its partial
// linearizations (ids into ops), and, of the operations not in it, the
// one that returned first (-1 if none), which is the one no order fits.
func stuckAfter(partials [][]int, ops []porcupine.Operation) (prefix []int, stuck int) {
	for _, l := range partials {
		if len(l) > len(prefix) {
			prefix = l
		}
	}
	in := make([]bool, len(ops))
	for _, id := range prefix {
		in[id] = true
	}
	stuck = -1
	for id := range ops {
		if !in[id] && (stuck < 0 || ops[id].Return < ops[stuck].Return) {
			stuck = id
		}
	}
	return prefix, stuck
}

// grantText says what a real server's grant carried: its fencing token
// and what the client said of it (its lease or session), as "token 12,
// lease 694d… ttl 2s"; "" for an operation that is no grant or carries
// neither.
func grantText(h *history.History, o *lockOp) string {
	if o.f != fAcquire || o.done < 0 {
		return ""
	}
	done := h.Events[o.done]
	if done.Type != history.OpOK || done.Token == nil {
		return ""
	}
	s := fmt.Sprintf("token %d", *done.Token)
	if done.Value != "" {
		s += ", " + done.Value
	}
	return s
}

// releaseAfter is the release that ended a grant, when it returned ok
// with something to say (a real server's client saying that the lease
// or session had expired by then): the owner's next release after the
// grant, among the operations kept.
func releaseAfter(h *history.History, kept []*lockOp, grant *lockOp) *lockOp {
	for _, o := range kept {
		if o.f != fRelease || o.owner != grant.owner || o.invoke < grant.invoke || o.done < 0 {
			continue
		}
		if done := h.Events[o.done]; done.Type == history.OpOK && done.Value != "" {
			return o
		}
		return nil
	}
	return nil
}

// joinText is sep and s, or "" for an empty s.
func joinText(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// parenText is " (s)", or "" for an empty s.
func parenText(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
