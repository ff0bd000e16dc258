package verdict

import (
	"fmt"
	"strings"

	"github.com/coupharness/coup/history"
)

// Ready says when the cluster was first seen ready (a node leading, every
// other following it), for a run whose driver watches it form (real
// servers: history.Meta.Ready), and which faults began before that
// moment: what the checks judged of those is a cluster still forming,
// which may not be the one the scenario meant to fault.
type Ready struct {
	// Waited is what the run waited to see before its faults began
	// ("port", "leader" or "followers").
	Waited string `json:"waited"`
	// Seen is whether the cluster was ever seen ready; At is then when
	// (nanoseconds since the run began), and Detail what each node was
	// seen to believe at that moment.
	Seen   bool   `json:"seen"`
	At     int64  `json:"at_ns,omitempty"`
	Detail string `json:"detail,omitempty"`
	// FaultsBefore are the faults that began before the cluster was
	// ready (or at all, when it never was), each "faults[0]#1 partition
	// [n1] at 1.000s", in the order they began.
	FaultsBefore []string `json:"faults_before,omitempty"`
}

// readyOf reads when the cluster was first seen ready from the history's
// ready event, and the faults that began before it; nil for a history
// whose driver does not watch the cluster form.
func readyOf(h *history.History) *Ready {
	var ready *history.Event
	for i := range h.Events {
		if h.Events[i].Kind == history.KindReady {
			ready = &h.Events[i]
			break
		}
	}
	if h.Meta.Ready == "" && ready == nil {
		return nil
	}
	out := &Ready{Waited: h.Meta.Ready}
	if ready != nil {
		out.Seen, out.At, out.Detail = true, ready.Time, ready.Detail
	}
	for i := range h.Events {
		e := &h.Events[i]
		if ready != nil && e.Index >= ready.Index {
			break
		}
		if e.Kind == history.KindNemesis && e.Phase == history.PhaseStart {
			out.FaultsBefore = append(out.FaultsBefore, fmt.Sprintf("%s %s %v at %.3fs", e.Name, e.What, e.Nodes, float64(e.Time)/1e9))
		}
	}
	return out
}

// note is the sentence the results and the report give when a fault
// began before the cluster was ready, "" when none did.
func (r *Ready) note() string {
	if r == nil || len(r.FaultsBefore) == 0 {
		return ""
	}
	faults := r.FaultsBefore[0]
	if n := len(r.FaultsBefore) - 1; n > 0 {
		faults += fmt.Sprintf(" (and %d more)", n)
	}
	what := "a leader and every other node following it"
	if !r.Seen {
		return fmt.Sprintf("a fault began before the cluster was ever seen ready (%s): %s; the checks judged a cluster that had not formed", what, faults)
	}
	return fmt.Sprintf("a fault began before the cluster was ready: %s, and the cluster was first seen ready (%s) at %.3fs (%s); the checks judged a cluster still forming, which may not be the one the scenario meant to fault",
		faults, what, float64(r.At)/1e9, strings.TrimSpace(r.Detail))
}
