package harness

import "sync"

// outbox is a node's queue of deliveries waiting to be written to it:
// bounded (a delivery that finds it full is dropped as an overflow), never
// blocking whoever puts into it, and taken whole by the node's writer, so
// that one write carries everything that came while the last was going
// out. It grows only as far as it is used.
type outbox struct {
	mu     sync.Mutex
	items  []delivery
	spare  []delivery
	wake   chan struct{} // holds a token when items may be waiting
	closed bool
	max    int // the most deliveries it holds
}

// newOutbox returns an outbox that holds at most max deliveries.
func newOutbox(max int) *outbox { return &outbox{wake: make(chan struct{}, 1), max: max} }

// put adds d, and reports false when the outbox is full or closed.
func (o *outbox) put(d delivery) bool {
	o.mu.Lock()
	if o.closed || len(o.items) >= o.max {
		o.mu.Unlock()
		return false
	}
	o.items = append(o.items, d)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return true
}

// take waits for deliveries and returns them all, in the order they were
// put; the slice is the outbox's until the next call. It returns false once
// the outbox is closed.
func (o *outbox) take() ([]delivery, bool) {
	for {
		o.mu.Lock()
		if o.closed {
			o.mu.Unlock()
			return nil, false
		}
		if len(o.items) > 0 {
			got := o.items
			o.items, o.spare = o.spare[:0], got
			o.mu.Unlock()
			return got, true
		}
		o.mu.Unlock()
		<-o.wake
	}
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
	o.items = nil
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return n
}
