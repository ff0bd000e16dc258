package checks

import (
	"github.com/coupharness/coup/history"
)

// MutexDefaults are the checks a mutual-exclusion scenario runs when it
// names none.
var MutexDefaults = []string{"mutex-linearizable", "mutex-cs", "mutex-progress", "mutex-fairness", "mutex-measures"}

// The operations of a lock workload.
const (
	fAcquire = "acquire"
	fRelease = "release"
)

// lockOp is one client operation on the lock: an invocation and its
// completion.
type lockOp struct {
	process string
	// owner is whom the operation acts for: the invocation's value, or the
	// process when the value is empty (see nodes/mutex).
	owner string
	f     string
	node  string
	// invoke and done are positions in the history's events; done is -1
	// when the history ended before the operation completed.
	invoke, done int
}

// outcome is the operation's completion type: ok, fail, info, or "" for
// none.
func (o *lockOp) outcome(h *history.History) string {
	if o.done < 0 {
		return ""
	}
	return h.Events[o.done].Type
}

// lockOps pairs every acquire and release invocation with its completion,
// in the order of the invocations. A process is sequential: an invocation
// while the process's previous operation is still open leaves that one
// without a completion. Completions without an invocation are ignored.
func lockOps(h *history.History) []*lockOp {
	var ops []*lockOp
	open := map[string]*lockOp{}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.KindOp || (e.F != fAcquire && e.F != fRelease) {
			continue
		}
		if e.Type == history.OpInvoke {
			o := &lockOp{process: e.Process, owner: e.Value, f: e.F, node: e.Node, invoke: i, done: -1}
			if o.owner == "" {
				o.owner = e.Process
			}
			ops = append(ops, o)
			open[e.Process] = o
			continue
		}
		if o := open[e.Process]; o != nil && o.f == e.F {
			o.done = i
			delete(open, e.Process)
		}
	}
	return ops
}

// lastNemesis returns the position of the last nemesis event, or -1.
func lastNemesis(h *history.History) int {
	for i := len(h.Events) - 1; i >= 0; i-- {
		if h.Events[i].Kind == history.KindNemesis {
			return i
		}
	}
	return -1
}
