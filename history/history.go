package history

import (
	"fmt"
	"iter"
)

// History is a history in memory, with the meta event split out.
//
// Events holds every event in order, or, in a compact history (one read
// by Read or kept by a Recorder), every event but the messages: those are
// kept apart in a form about seven times smaller, since a run that records
// its messages has far more of them than of anything else. Code that
// needs message events iterates All, which yields every event in order
// whatever the form; code that needs only the others may range over
// Events, which then has fewer to skip.
type History struct {
	Meta   Meta
	Events []Event
	// Bad lists the lines that could not be parsed (for example the last,
	// half-written line of a killed run). They are skipped, not fatal.
	Bad []BadLine
	// Ended is true when the history has an end event: the run finished.
	Ended bool
	// Unstarted is the history's unstarted event, when it has one: the
	// run's nodes did not all start, and nothing ran.
	Unstarted *Event

	compact bool     // message events go to msgs
	msgs    msgStore // the message events of a compact history
}

// BadLine is a history line that could not be parsed.
type BadLine struct {
	Line int    `json:"line"`
	Err  string `json:"error"`
}

// MaxTime is the latest time, in nanoseconds since a run began, that a
// history may hold (about 146 years): an event after it is not read, and a
// bound beyond it is taken as MaxTime, so that a time plus a bound never
// overflows.
const MaxTime = 1 << 62

// FromEvents builds a History from recorded events (the first must be
// meta). Every event is kept in Events.
func FromEvents(events []Event) (*History, error) {
	h := &History{}
	for i := range events {
		h.Add(events[i])
	}
	if h.Meta.Algorithm == "" && h.Meta.Scenario == "" {
		return nil, fmt.Errorf("history has no meta event")
	}
	return h, nil
}

// NewCompact returns an empty compact history, for events to be added to
// one by one.
func NewCompact() *History { return &History{compact: true} }

// Add appends an event: a meta event sets Meta, an end event Ended, an
// unstarted event Unstarted.
func (h *History) Add(e Event) {
	switch e.Kind {
	case KindMeta:
		if e.Meta != nil {
			h.Meta = *e.Meta
			h.Meta.saturate()
		}
	case KindEnd:
		h.Ended = true
	case KindUnstarted:
		if h.Unstarted == nil {
			u := e
			h.Unstarted = &u
		}
	}
	if h.compact && h.msgs.add(&e, len(h.Events)) {
		return
	}
	h.Events = append(h.Events, e)
}

// Len is the number of events.
func (h *History) Len() int { return len(h.Events) + h.msgs.len() }

// End returns the time of the last event.
func (h *History) End() int64 {
	last, ok := h.last()
	if !ok {
		return 0
	}
	return last.Time
}

// first and last return the first and the last event, if any.
func (h *History) first() (Event, bool) {
	for e := range h.All() {
		return *e, true
	}
	return Event{}, false
}

func (h *History) last() (Event, bool) {
	m := h.msgs.len()
	switch {
	case m > 0 && int(h.msgs.rec(m-1).before) == len(h.Events):
		var e Event
		h.msgs.event(m-1, &e)
		return e, true
	case len(h.Events) > 0:
		return h.Events[len(h.Events)-1], true
	}
	return Event{}, false
}

// All yields every event in order. A message event of a compact history is
// yielded in a scratch event that the next step overwrites: copy it to keep
// it. The others are the elements of Events.
func (h *History) All() iter.Seq[*Event] {
	return func(yield func(*Event) bool) {
		var scratch Event
		j, n := 0, h.msgs.len()
		for k := 0; k <= len(h.Events); k++ {
			for ; j < n && int(h.msgs.rec(j).before) == k; j++ {
				h.msgs.event(j, &scratch)
				if !yield(&scratch) {
					return
				}
			}
			if k < len(h.Events) && !yield(&h.Events[k]) {
				return
			}
		}
	}
}

// Expanded returns h with every event in Events (h itself when it is not
// compact).
func (h *History) Expanded() *History {
	if h.msgs.len() == 0 {
		return h
	}
	out := &History{Meta: h.Meta, Bad: h.Bad, Ended: h.Ended, Unstarted: h.Unstarted, Events: make([]Event, 0, h.Len())}
	for e := range h.All() {
		out.Events = append(out.Events, *e)
	}
	return out
}

// saturate keeps every time and bound of the meta event in [0, MaxTime].
func (m *Meta) saturate() {
	for _, t := range []*int64{&m.Termination, &m.GST, &m.Stabilisation, &m.Progress, &m.StaleLeader} {
		*t = min(max(*t, 0), MaxTime)
	}
}
