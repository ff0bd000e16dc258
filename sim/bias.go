package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
)

// DefaultBiasWindow is how long Bias holds the start of a fault that does
// not repeat, waiting for a change of belief.
const DefaultBiasWindow = 100 * time.Millisecond

// bias is the Bias strategy's state in one run: the scheduled fault
// actions it holds back, and how late it let each occurrence start, so
// that the occurrence's end comes as much later and it lasts as long as
// planned.
type bias struct {
	windows []time.Duration // by fault index
	held    []heldAct
	shift   map[string]time.Duration // by occurrence name, once released
}

// heldAct is an action held back: a start until a change of belief or its
// window's end, an end until as long after its planned time as its start
// was late (or, while its start is still held, until that start goes).
type heldAct struct {
	a       nemesis.Action
	until   time.Duration
	belief  bool   // a start, which a change of belief releases
	follows string // an end whose start is still held
}

func newBias(faults []nemesis.Fault) *bias {
	b := &bias{shift: map[string]time.Duration{}}
	for _, f := range faults {
		w := DefaultBiasWindow
		if f.Every > 0 {
			w = f.Every
		}
		b.windows = append(b.windows, w)
	}
	return b
}

// beliefChange reports whether an event is a node's change of belief.
func beliefChange(e *history.Event) bool {
	if e.Kind != history.KindReport {
		return false
	}
	switch e.What {
	case history.ReportLeader, history.ReportParticipant, history.ReportCS:
		return true
	}
	return false
}

// filter takes the scheduled actions due at now and returns those to
// carry out now: the held ones whose time has come (all held starts when
// a belief changed), then the due ones it does not hold. It holds every
// start but a timely fault's (the GST is a time, not a moment to pick),
// and the ends of occurrences it made late.
// Filter is the hold's filter (lifecycle.Hold): what is due is held until a
// belief changes, which seen tells.
func (b *bias) Filter(due []nemesis.Action, now time.Duration, seen []history.Event) []nemesis.Action {
	changed := false
	for i := range seen {
		if beliefChange(&seen[i]) {
			changed = true
			break
		}
	}
	return b.filter(due, now, changed)
}

func (b *bias) filter(due []nemesis.Action, now time.Duration, changed bool) []nemesis.Action {
	var out []nemesis.Action
	keep := b.held[:0]
	for _, h := range b.held {
		if h.follows == "" && (h.until <= now || (changed && h.belief)) {
			out = append(out, h.a)
			if h.belief {
				b.released(h.a.Name, now-h.a.At)
			}
			continue
		}
		keep = append(keep, h)
	}
	b.held = keep
	for _, a := range due {
		switch {
		case a.Skip != "":
			out = append(out, a)
		case a.Phase == history.PhaseStart && a.Kind != nemesis.Timely:
			b.held = append(b.held, heldAct{a: a, until: a.At + b.window(a.Name), belief: true})
		case a.Phase == history.PhaseEnd && b.pending(a.Name):
			b.held = append(b.held, heldAct{a: a, until: math.MaxInt64, follows: a.Name})
		case a.Phase == history.PhaseEnd && b.shift[a.Name] > 0:
			b.held = append(b.held, heldAct{a: a, until: a.At + b.shift[a.Name]})
		default:
			out = append(out, a)
		}
	}
	return out
}

// released notes that an occurrence started late by shift, and times the
// end that waited for it.
func (b *bias) released(name string, shift time.Duration) {
	if shift > 0 {
		b.shift[name] = shift
	}
	for i := range b.held {
		if h := &b.held[i]; h.follows == name {
			h.follows = ""
			h.until = h.a.At + shift
		}
	}
}

// pending reports whether the start of an occurrence is still held.
func (b *bias) pending(name string) bool {
	for _, h := range b.held {
		if h.belief && h.a.Name == name {
			return true
		}
	}
	return false
}

// next is when the next held action is released at the latest.
func (b *bias) Next() (time.Duration, bool) {
	at, ok := time.Duration(math.MaxInt64), false
	for _, h := range b.held {
		if h.follows == "" && h.until < at {
			at, ok = h.until, true
		}
	}
	return at, ok
}

// flush releases everything held, at the end of the run's duration (late,
// as the nemesis's last pass carries out what was due): the starts, then
// the ends.
func (b *bias) Flush() []nemesis.Action {
	var starts, ends []nemesis.Action
	for _, h := range b.held {
		if h.belief {
			starts = append(starts, h.a)
		} else {
			ends = append(ends, h.a)
		}
	}
	b.held = nil
	return append(starts, ends...)
}

// window is how long a fault's start may be held, by the occurrence's
// name ("faults[2]#1").
func (b *bias) window(name string) time.Duration {
	var i int
	if _, err := fmt.Sscanf(name, "faults[%d]", &i); err == nil && i >= 0 && i < len(b.windows) {
		return b.windows[i]
	}
	return DefaultBiasWindow
}
