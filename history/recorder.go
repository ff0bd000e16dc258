package history

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"time"
)

// Clock gives the time of an event, in nanoseconds since the run began.
// The real harness uses the monotonic wall clock; the simulator its virtual
// clock.
type Clock func() int64

// WallClock returns a Clock that counts from now on the monotonic clock.
func WallClock() Clock {
	start := time.Now()
	return func() int64 { return int64(time.Since(start)) }
}

// Recorder appends events to a history. It assigns each event its index and
// its time under one lock, writes it as one JSON line, and keeps it in
// memory for the checks, in a compact history. It is safe for concurrent
// use.
//
// Writes are buffered and flushed at least every FlushEvery, so a run that is
// killed leaves a checkable prefix; Close flushes the rest.
type Recorder struct {
	mu     sync.Mutex
	clock  Clock
	w      *bufio.Writer
	h      *History // nil when not keeping events
	line   []byte   // the line being written, reused
	err    error
	closed bool
	last   int64
	n      int64
	stop   chan struct{}
	done   chan struct{}
	subs   []func(Event)
}

// FlushEvery is how often a Recorder flushes its buffer to the file.
const FlushEvery = 20 * time.Millisecond

// NewRecorder returns a recorder that writes to w (which may be nil) and, when
// keep is true, keeps every event in memory.
func NewRecorder(w io.Writer, clock Clock, keep bool) *Recorder {
	r := &Recorder{clock: clock}
	if keep {
		r.h = NewCompact()
	}
	if w != nil {
		r.w = bufio.NewWriterSize(w, 64<<10)
		r.stop = make(chan struct{})
		r.done = make(chan struct{})
		go r.flusher()
	}
	return r
}

func (r *Recorder) flusher() {
	defer close(r.done)
	t := time.NewTicker(FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if r.err == nil && !r.closed {
				r.err = r.w.Flush()
			}
			r.mu.Unlock()
		}
	}
}

// Subscribe calls fn with every event recorded after it, under the
// recorder's lock, in index order. fn must not record events itself or block;
// it is meant for watchers such as a nemesis trigger that hand the event on.
func (r *Recorder) Subscribe(fn func(Event)) {
	r.mu.Lock()
	r.subs = append(r.subs, fn)
	r.mu.Unlock()
}

// Record stamps e with the next index and the current time, appends it and
// returns the stamped event.
func (r *Recorder) Record(e Event) Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return e
	}
	t := r.clock()
	if t < r.last { // never let time run backwards in the file
		t = r.last
	}
	r.last = t
	e.Index = r.n
	e.Time = t
	r.append(e)
	return e
}

// RecordAll records events in order, under one lock and at one time: what
// happened together, such as the messages one write hands a node.
func (r *Recorder) RecordAll(es []Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	t := max(r.clock(), r.last)
	r.last = t
	for i := range es {
		es[i].Index = r.n
		es[i].Time = t
		r.append(es[i])
	}
}

func (r *Recorder) append(e Event) {
	if r.h != nil {
		r.h.Add(e)
	}
	r.n++
	if r.w != nil && r.err == nil {
		var err error
		r.line, err = AppendJSON(r.line[:0], &e)
		if err != nil {
			r.err = fmt.Errorf("encode event %d: %w", e.Index, err)
			return
		}
		if _, err := r.w.Write(r.line); err != nil {
			r.err = fmt.Errorf("write history: %w", err)
		}
	}
	for _, fn := range r.subs {
		fn(e)
	}
}

// Events returns a copy of the events recorded so far (only when keep was
// true), every one in a slice: for tests and small histories.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.h == nil {
		return nil
	}
	out := make([]Event, 0, r.h.Len())
	for e := range r.h.All() {
		out = append(out, *e)
	}
	return out
}

// Now returns the recorder's current time without recording anything.
func (r *Recorder) Now() int64 { return r.clock() }

// Close flushes the history and stops recording; later events are ignored.
// It returns the first write error, if any.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return r.err
	}
	r.closed = true
	if r.w != nil && r.err == nil {
		r.err = r.w.Flush()
	}
	r.mu.Unlock()
	if r.stop != nil {
		close(r.stop)
		<-r.done
	}
	return r.err
}
