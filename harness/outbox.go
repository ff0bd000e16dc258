package harness

import (
	"sync"

	"github.com/coupharness/coup/nodes/wire"
)

// outbox is a node's queue of deliveries waiting to be written to it:
// bounded (a delivery that finds it full is dropped as an overflow), never
// blocking whoever puts into it, and taken whole by the node's writer, so
// that one write carries everything that came while the last was going
// out. It grows only as far as it is used.
//
// It is also the node's write turn: whoever writes to the node holds it
// (busy), the writer from take to done, or the delay queue when it claims
// it to write a due message at once (see run.deliverDue), so that writes
// never interleave and never overtake one another.
type outbox struct {
	mu    sync.Mutex
	items []delivery
	spare []delivery
	// buf holds the items' lines, one after another: the writer writes it
	// as it is, and a line put as an envelope costs no allocation.
	buf, spareBuf []byte
	busy          bool          // someone is writing to the node
	wake          chan struct{} // holds a token when the writer may have work
	closed        bool
	max           int // the most deliveries it holds
}

// newOutbox returns an outbox that holds at most max deliveries.
func newOutbox(max int) *outbox { return &outbox{wake: make(chan struct{}, 1), max: max} }

// put adds d and wakes the writer, and reports false when the outbox is
// full or closed.
func (o *outbox) put(d delivery) bool {
	if !o.putQuiet(d) {
		return false
	}
	o.signal()
	return true
}

// putQuiet is put without waking the writer: the caller signals later.
func (o *outbox) putQuiet(d delivery) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || len(o.items) >= o.max {
		return false
	}
	o.buf = append(o.buf, d.line...)
	d.line = nil
	o.items = append(o.items, d)
	return true
}

// putEnvelope is putQuiet of d with e as its line, written straight into
// the outbox's buffer.
func (o *outbox) putEnvelope(d delivery, e *wire.Envelope) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || len(o.items) >= o.max {
		return false
	}
	o.buf = e.Append(o.buf)
	o.items = append(o.items, d)
	return true
}

// signal wakes the writer.
func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// claim takes the write turn when nothing waits and nobody writes: the
// claimer may then write to the node at once, and must call done.
func (o *outbox) claim() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.busy || len(o.items) > 0 {
		return false
	}
	o.busy = true
	return true
}

// done gives the write turn back.
func (o *outbox) done() {
	o.mu.Lock()
	o.busy = false
	waiting := len(o.items) > 0
	o.mu.Unlock()
	if waiting {
		o.signal()
	}
}

// take waits for deliveries and for the write turn, and returns every
// delivery waiting, in the order they were put, and their lines, with the
// turn: the caller writes them and calls done. The slices are the
// outbox's until the next call. It returns false once the outbox is
// closed.
func (o *outbox) take() ([]delivery, []byte, bool) {
	for {
		o.mu.Lock()
		if o.closed {
			o.mu.Unlock()
			return nil, nil, false
		}
		if len(o.items) > 0 && !o.busy {
			got, lines := o.items, o.buf
			o.items, o.spare = o.spare[:0], got
			o.buf, o.spareBuf = o.spareBuf[:0], lines
			if cap(o.buf) > 1<<20 {
				o.buf = nil // a rare burst does not pin its buffer
			}
			o.busy = true
			o.mu.Unlock()
			return got, lines, true
		}
		o.mu.Unlock()
		<-o.wake
	}
}

// takeNow is take without waiting, for at most limit bytes of lines: the
// deliveries waiting and the write turn, or false when there are none,
// someone else has the turn, or their lines are longer than limit. The
// caller writes them and calls done, or gives them back.
func (o *outbox) takeNow(limit int) ([]delivery, []byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.busy || len(o.items) == 0 || len(o.buf) > limit {
		return nil, nil, false
	}
	got, lines := o.items, o.buf
	o.items, o.spare = o.spare[:0], got
	o.buf, o.spareBuf = o.spareBuf[:0], lines
	o.busy = true
	return got, lines, true
}

// giveBack puts deliveries taken by takeNow back in front of those put
// since, gives the write turn back, and wakes the writer to write them.
func (o *outbox) giveBack(batch []delivery, lines []byte) {
	o.mu.Lock()
	o.items = append(append(make([]delivery, 0, len(batch)+len(o.items)), batch...), o.items...)
	o.buf = append(append(make([]byte, 0, len(lines)+len(o.buf)), lines...), o.buf...)
	o.spare, o.spareBuf = nil, nil // they were batch's and lines'
	o.busy = false
	o.mu.Unlock()
	o.signal()
}

// close ends the outbox: put refuses, take returns false, and what was
// left in it is dropped; it returns how many messages between nodes were.
func (o *outbox) close() int {
	o.mu.Lock()
	o.closed = true
	n := 0
	for _, d := range o.items {
		if d.msg != 0 {
			n++
		}
	}
	o.items, o.buf = nil, nil
	o.mu.Unlock()
	o.signal()
	return n
}
