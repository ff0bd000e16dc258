package sim

import (
	"fmt"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// simulate simulates a scenario given as TOML with its own seed and
// returns its results and history.
func simulate(t *testing.T, src string) (*verdict.Results, *history.History) {
	t.Helper()
	sc, err := scenario.Parse(t.Name()+".toml", src)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Simulate(sc, sc.Seed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return out.Results, out.History
}

// floodScenario is a flood run: n nodes ticking every interval for
// duration, then a short recovery, with top-level keys top and the fault
// tables faults.
func floodScenario(n int, interval, duration, top, faults string) string {
	return fmt.Sprintf(`algorithm = "flood"
nodes = %d
seed = 7
duration = %q
recovery = "100ms"
%s
[params]
interval = %q

[workload]
kind = "none"

%s`, n, duration, top, interval, faults)
}

// msgLog indexes a history's message events by message id.
type msgLog struct {
	ids      []int64 // in send order
	send     map[int64]history.Event
	delivers map[int64][]history.Event
	drops    map[int64][]history.Event
	corrupts map[int64][]history.Event
	dups     map[int64]int
}

func messages(h *history.History) *msgLog {
	l := &msgLog{send: map[int64]history.Event{}, delivers: map[int64][]history.Event{}, drops: map[int64][]history.Event{},
		corrupts: map[int64][]history.Event{}, dups: map[int64]int{}}
	for _, e := range h.Events {
		if e.Kind != history.KindMsg {
			continue
		}
		switch e.What {
		case history.MsgSend:
			l.ids = append(l.ids, e.Msg)
			l.send[e.Msg] = e
		case history.MsgDeliver:
			l.delivers[e.Msg] = append(l.delivers[e.Msg], e)
		case history.MsgDrop:
			l.drops[e.Msg] = append(l.drops[e.Msg], e)
		case history.MsgCorrupt:
			l.corrupts[e.Msg] = append(l.corrupts[e.Msg], e)
		case history.MsgDuplicate:
			l.dups[e.Msg]++
		}
	}
	return l
}

// nemesisEvent returns the first nemesis event of what and phase.
func nemesisEvent(t *testing.T, h *history.History, what, phase string) history.Event {
	t.Helper()
	for _, e := range h.Events {
		if e.Kind == history.KindNemesis && e.What == what && e.Phase == phase {
			return e
		}
	}
	t.Fatalf("no nemesis %s %s in the history", what, phase)
	return history.Event{}
}

// processEvents lists a node's process events as "what incarnation@time".
func processEvents(h *history.History, node string) []history.Event {
	var out []history.Event
	for _, e := range h.Events {
		if e.Kind == history.KindProcess && e.Node == node {
			out = append(out, e)
		}
	}
	return out
}
