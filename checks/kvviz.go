package checks

import (
	"fmt"

	"github.com/anishathalye/porcupine"

	"github.com/coupharness/coup/history"
)

// What porcupine's visualisation of a lin-kv history shows besides the
// operations, each in a row of its own below the clients: when each node
// claimed to be the leader (and in which term), so that a read served by a
// stale leader stands out; when the nemesis struck; and the timed-out
// operations the check left out.

// kvAnnotations are the leader claims, the nemesis's events and the
// operations left out (dropped), for the visualisation.
func kvAnnotations(h *history.History, dropped []*kvOp) []porcupine.Annotation {
	var out []porcupine.Annotation
	claims, _ := termClaimsOf(h)
	for _, c := range claims {
		term := ""
		if c.term != nil {
			term = fmt.Sprintf(" (term %d)", *c.term)
		}
		out = append(out, porcupine.Annotation{
			Tag: c.node, Start: c.from, End: c.to,
			Description:     "leader" + term,
			Details:         fmt.Sprintf("%s claimed to be the leader%s from %s to %s", c.node, term, fmtTime(c.from), fmtTime(c.to)),
			BackgroundColor: "#bbdefb",
		})
	}
	out = append(out, nemesisAnnotations(h)...)
	for _, o := range dropped {
		at := h.Events[o.invoke].Time
		out = append(out, porcupine.Annotation{
			Tag: tagLeftOut, Start: at, End: at,
			Description:     fmt.Sprintf("%s %s ?", o.process, o.f),
			Details:         fmt.Sprintf("%s, invoked at %s, timed out; whether it took effect cannot change the verdict, so the check left it out", o.describe(), fmtTime(at)),
			BackgroundColor: "#e0e0e0",
		})
	}
	return out
}
