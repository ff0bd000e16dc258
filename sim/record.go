package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
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
// returns the kept event.
func (r *recorder) record(e history.Event) *history.Event {
	kept := r.slot()
	e.Index, e.Time = kept.Index, kept.Time
	*kept = e
	r.filled(kept)
	return kept
}

// slot keeps a new event, with nothing in it but the next index and the
// current time, and returns it, for the caller to fill in where it is kept
// and then to hand to filled: an event is about 400 bytes, and a
// message's, most of a history, is then written once, not copied twice.
func (r *recorder) slot() *history.Event {
	t := max(r.clock(), r.last)
	r.last = t
	if len(r.cur) == cap(r.cur) {
		r.chunks = append(r.chunks, r.cur)
		r.cur = make([]history.Event, 0, min(2*cap(r.cur), maxChunk))
	}
	r.cur = r.cur[:len(r.cur)+1]
	kept := &r.cur[len(r.cur)-1]
	*kept = history.Event{Index: r.n, Time: t} // a recycled array holds an old event here
	r.n++
	r.all = nil
	return kept
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

// recycled holds event slices that finished runs handed back, for new
// runs to record into: a sweep then allocates its histories once per
// worker rather than once per seed, and the collector has little to do.
// They are kept by size, class k holding arrays of firstChunk<<k events
// or more (the last class, any larger), so that a run expecting many
// events does not take a short run's array and grow it in chunks, and a
// short run does not hold a long run's.
var recycled [16]sync.Pool

// sizeClass is the class of an array of n events: the largest k with
// firstChunk<<k <= n.
func sizeClass(n int) int {
	k := 0
	for k < len(recycled)-1 && firstChunk<<(k+1) <= n {
		k++
	}
	return k
}

// reuse returns a recycled array, emptied, for at least hint events
// (nil when there is none). An array of hint's own class may be too
// short; it goes back for a shorter run.
func reuse(hint int) []history.Event {
	for k := sizeClass(hint); k < len(recycled); k++ {
		b, ok := recycled[k].Get().(*[]history.Event)
		if !ok {
			continue
		}
		if cap(*b) >= hint {
			return (*b)[:0]
		}
		recycled[k].Put(b)
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
	recycled[sizeClass(cap(evs))].Put(&evs)
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
