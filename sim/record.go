package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/coupharness/coup/history"
)

// recorder is the simulator's history: it stamps each event with its index
// and the virtual time, keeps it, and writes it as a JSON line, exactly as
// history.Recorder does. It is the single-goroutine counterpart of that
// recorder: no lock, no flusher, and events kept in chunks that never move
// until the run ends, since copying growing slices of events (and scanning
// them for the collector) was most of a simulation's cost.
type recorder struct {
	clock  func() int64
	chunks [][]history.Event
	cur    []history.Event
	n      int64
	last   int64
	w      *bufio.Writer
	err    error
	all    []history.Event // the events in one slice, once asked for
}

const (
	firstChunk = 128
	maxChunk   = 1 << 15
)

// newRecorder returns a recorder that writes to w (nil: nowhere) and
// expects about hint events: with a hint that is right, the events are
// kept in one slice and never copied. The slice is a recycled one when
// there is one (see Recycle).
func newRecorder(w io.Writer, clock func() int64, hint int) *recorder {
	r := &recorder{clock: clock}
	if b := reuse(hint); b != nil {
		r.cur = b
	} else {
		r.cur = make([]history.Event, 0, max(firstChunk, hint))
	}
	if w != nil {
		r.w = bufio.NewWriterSize(w, 64<<10)
	}
	return r
}

// record stamps e with the next index and the current time, keeps it and
// returns the kept event: one copy into the slot, whatever it held.
func (r *recorder) record(e history.Event) *history.Event {
	kept, t := r.next()
	e.Index, e.Time = r.n, t
	*kept = e
	r.n++
	r.filled(kept)
	return kept
}

// next is the slot the next event goes in, as it is (a recycled array's
// holds an old event), and the event's time.
func (r *recorder) next() (*history.Event, int64) {
	t := max(r.clock(), r.last)
	r.last = t
	if len(r.cur) == cap(r.cur) {
		r.chunks = append(r.chunks, r.cur)
		r.cur = make([]history.Event, 0, min(2*cap(r.cur), maxChunk))
	}
	r.cur = r.cur[:len(r.cur)+1]
	r.all = nil
	return &r.cur[len(r.cur)-1], t
}

// msg keeps a message event (send, duplicate, deliver, drop) with the
// next index and the current time. It is most of a history, and writing
// it is most of what recording costs: it is written where it is kept,
// and where the slot held a message event already (a recycled array's),
// only a message event's fields are written, not all 400 bytes cleared
// first (with the collector's barrier on each of their two dozen pointers
// while it marks). Every message event the simulator records sets no
// other field (TestMessageEventsAreBare holds it), so those are all the
// old event set; a fresh slot is zero, and every recorded event has a
// kind.
func (r *recorder) msg(what string, id int64, src, dest, mtype, reason string) {
	e, t := r.next()
	switch {
	case e.Kind == history.KindMsg:
		if e.Body != "" || e.Detail != "" {
			e.Body, e.Detail = "", "" // a corrupt copy's
		}
	case e.Kind != "":
		*e = history.Event{} // another kind's
	}
	e.Index, e.Time, e.Kind, e.What, e.Msg, e.Src, e.Dest, e.MType, e.Reason = r.n, t, history.KindMsg, what, id, src, dest, mtype, reason
	r.n++
	r.filled(e)
}

// filled writes an event slot returned, once filled in.
func (r *recorder) filled(e *history.Event) {
	if r.w != nil && r.err == nil {
		r.write(e)
	}
}

func (r *recorder) write(e *history.Event) {
	b, err := json.Marshal(e)
	if err != nil {
		r.err = fmt.Errorf("encode event %d: %w", e.Index, err)
		return
	}
	b = append(b, '\n')
	if _, err := r.w.Write(b); err != nil {
		r.err = fmt.Errorf("write history: %w", err)
	}
}

// events returns every event recorded, in one slice (which must not be
// changed).
func (r *recorder) events() []history.Event {
	if len(r.chunks) == 0 {
		return r.cur[:len(r.cur):len(r.cur)]
	}
	if r.all == nil || int64(len(r.all)) != r.n {
		all := make([]history.Event, 0, r.n+r.n/8) // room to be recycled for a run a little longer
		for _, c := range r.chunks {
			all = append(all, c...)
		}
		r.all = append(all, r.cur...)
	}
	return r.all
}

// spare holds the event arrays that finished runs handed back, for new
// runs to record into: a campaign then allocates its histories once per
// worker, not once per seed, and the collector has little to do. They
// are kept in a short list that the collector does not empty (a
// sync.Pool loses what it holds at every other collection, which comes
// every few runs), within a bound; a longer array goes to a pool.
var spare struct {
	sync.Mutex
	arrays [][]history.Event
	events int // the capacity of arrays, in all
}

// The bounds of spare: a few arrays, about 50 MB of events at most.
const (
	spareArrays = 8
	spareEvents = 1 << 17
)

// longSpare holds the arrays longer than spare's bound.
var longSpare sync.Pool

// reuse returns a recycled array, emptied, for at least hint events: the
// shortest that is long enough, or, without a hint (0), the longest, so
// that a first run does not grow a short one in chunks; nil when there is
// none.
func reuse(hint int) []history.Event {
	spare.Lock()
	best := -1
	for i, a := range spare.arrays {
		if cap(a) >= hint && (best < 0 || (hint > 0) == (cap(a) < cap(spare.arrays[best]))) {
			best = i
		}
	}
	if best >= 0 {
		a := spare.arrays[best]
		spare.arrays = slices.Delete(spare.arrays, best, best+1)
		spare.events -= cap(a)
		spare.Unlock()
		return a[:0]
	}
	spare.Unlock()
	if b, ok := longSpare.Get().(*[]history.Event); ok {
		if cap(*b) >= hint {
			return (*b)[:0]
		}
		longSpare.Put(b)
	}
	return nil
}

// Recycle hands back the events of an outcome that is no longer needed, so
// that a later run records into their array instead of allocating one.
// Neither the outcome's history, nor its results, nor anything else taken
// from its events may be used afterwards.
func Recycle(out *Outcome) {
	if out == nil || cap(out.array) < firstChunk {
		return
	}
	evs := out.array[:0]
	out.History, out.array = nil, nil
	if cap(evs) > spareEvents {
		longSpare.Put(&evs)
		return
	}
	spare.Lock()
	defer spare.Unlock()
	spare.arrays = append(spare.arrays, evs)
	spare.events += cap(evs)
	for len(spare.arrays) > spareArrays || spare.events > spareEvents {
		// Drop the shortest: it saves the least.
		k := 0
		for i, a := range spare.arrays {
			if cap(a) < cap(spare.arrays[k]) {
				k = i
			}
		}
		spare.events -= cap(spare.arrays[k])
		spare.arrays = slices.Delete(spare.arrays, k, k+1)
	}
}

// array is the array the events are kept in, with its full capacity, for
// recycling.
func (r *recorder) array() []history.Event {
	if len(r.chunks) == 0 {
		return r.cur
	}
	return r.all
}

// flush writes what is buffered and returns the first error.
func (r *recorder) flush() error {
	if r.w != nil && r.err == nil {
		r.err = r.w.Flush()
	}
	return r.err
}
