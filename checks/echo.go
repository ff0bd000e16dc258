package checks

import (
	"fmt"

	"github.com/coupharness/coup/history"
)

// EchoDefaults are the checks an echo scenario runs when it names none.
var EchoDefaults = []string{"echo"}

// fEcho is the echo workload's operation.
const fEcho = "echo"

// echo: every echo that returned ok came back with its request's payload.
// The invocation's value is the payload sent, the ok completion's the echo
// the node sent back (see workloads.Echo). Failed and timed-out echoes
// are counted, not judged; unknown when no echo returned ok.
func echo(h *history.History) Result {
	open := map[string]int{} // process -> its open invocation
	var okCount, failed, unknown, mismatched int
	var first [2]int // the first mismatch's invocation and completion
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.KindOp || e.F != fEcho {
			continue
		}
		if e.Type == history.OpInvoke {
			if _, ok := open[e.Process]; ok {
				unknown++ // a process moved on: its last echo never ended
			}
			open[e.Process] = i
			continue
		}
		inv, ok := open[e.Process]
		if !ok {
			continue
		}
		delete(open, e.Process)
		switch e.Type {
		case history.OpOK:
			okCount++
			if e.Value != h.Events[inv].Value {
				if mismatched == 0 {
					first = [2]int{inv, i}
				}
				mismatched++
			}
		case history.OpFail:
			failed++
		default:
			unknown++
		}
	}
	unknown += len(open)
	r := Result{Figures: map[string]any{"ok": okCount, "mismatched": mismatched, "failed": failed, "timed_out": unknown}}
	switch {
	case mismatched > 0:
		inv, done := h.Events[first[0]], h.Events[first[1]]
		r.Valid = False
		r.Nodes = []string{inv.Node}
		r.Evidence = []history.Event{inv, done}
		r.Interval = &Interval{From: inv.Time, To: done.Time}
		r.Explanation = fmt.Sprintf("%s of %s came back with another payload: the first, %s's echo at %s, invoked at %s with %q, came back at %s with %q",
			echoes(mismatched, ""), echoes(okCount, "ok "), inv.Process, inv.Node, fmtTime(inv.Time), inv.Value, fmtTime(done.Time), done.Value)
	case okCount == 0:
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("no echo returned ok (%d failed, %d timed out), so there is nothing to judge; run an echo workload", failed, unknown)
	default:
		r.Valid = True
		r.Explanation = fmt.Sprintf("every one of the %s came back with its payload (%d failed, %d timed out)", echoes(okCount, "ok "), failed, unknown)
	}
	return r
}

// echoes counts echoes for a sentence: "1 echo", "2 ok echoes".
func echoes(n int, adj string) string {
	if n == 1 {
		return "1 " + adj + "echo"
	}
	return fmt.Sprintf("%d %sechoes", n, adj)
}
