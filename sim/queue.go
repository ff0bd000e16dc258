package sim

import (
	"sync"
	"time"

	"github.com/coupharness/coup/nodes"
)

// kind is what a queued item does when it comes due.
type kind uint8

const (
	kDeliver   kind = iota // a copy of a message reaches its receiver
	kTimer                 // a node's timer expires
	kRequest               // a client request reaches a node
	kControl               // a clock-rate control message reaches a node
	kStart                 // a restarted node has answered init
	kAfter                 // a workload callback
	kOpTimeout             // a client gives up waiting for an answer
)

// item is one future happening. Items are kept by value in the queue; the
// rare fields live behind extra, so that a delivery costs no allocation of
// its own.
type item struct {
	at   time.Duration
	seq  uint64
	prio int32 // the strategy's tie-break: lower first at the same time (0 under Random)
	kind kind
	to   int32 // the node it happens at (deliveries, timers, requests)
	from int32 // the sender of a delivery
	inc  int32 // the incarnation a timer belongs to
	id   int64 // message id, timer generation or operation id
	msg  nodes.Msg
	name string // timer name
	x    *extra
}

// extra holds what few items need.
type extra struct {
	// A corrupted copy: its altered body, how it was altered, and the sum
	// its envelope carries ("" without checksums).
	body   []byte
	how    string
	detail string
	sum    string
	// A client request, a control message's rate, a workload callback.
	req  nodes.Request
	rate float64
	fn   func()
}

// extra returns an empty extra, one that an item done with gave back
// (done) when there is one: a client's request and a workload's callback
// each need one, and allocating them was a tenth of what the clients cost.
func (s *Sim) extra() *extra {
	if n := len(s.extras); n > 0 {
		x := s.extras[n-1]
		s.extras = s.extras[:n-1]
		return x
	}
	return new(extra)
}

// done gives back the extra of an item that has run and is kept nowhere
// (not held by a paused node).
func (s *Sim) done(it *item) {
	if x := it.x; x != nil {
		*x = extra{}
		s.extras = append(s.extras, x)
		it.x = nil
	}
}

// queue is a min-heap of items by time, ties by the strategy's priority
// (none under Random), then in push order. The heap
// orders small keys that hold no pointers; the items themselves stay in a
// slab, written once when pushed and read once when popped, so that moving
// keys up and down the heap costs the collector nothing. It is a 4-ary
// heap: shallow, with no interface calls.
type queue struct {
	keys []key
	slab []item
	free []int32
}

// key is an item's place in the heap.
type key struct {
	at   time.Duration
	seq  uint64
	slot int32
	prio int32
}

func (q *queue) len() int { return len(q.keys) }

// next is the time of the earliest item (the queue must not be empty).
func (q *queue) next() time.Duration { return q.keys[0].at }

func less(a, b *key) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.prio != b.prio {
		return a.prio < b.prio
	}
	return a.seq < b.seq
}

func (q *queue) push(it item) {
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.slab[slot] = it
	} else {
		slot = int32(len(q.slab))
		q.slab = append(q.slab, it)
	}
	q.keys = append(q.keys, key{at: it.at, seq: it.seq, slot: slot, prio: it.prio})
	h := q.keys
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !less(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// pop removes the earliest item and returns it.
func (q *queue) pop() item {
	slot := q.take()
	q.release(slot)
	return q.slab[slot]
}

// take removes the earliest item from the heap and returns its slot,
// which stays the item's, not reused by a push, until released: the
// simulator runs an item where it lies (88 bytes not copied out, with
// the collector's barriers on its pointers) while the item's handling
// pushes new ones.
func (q *queue) take() int32 {
	h := q.keys
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	q.keys = h
	i := 0
	for {
		c := 4*i + 1
		if c >= len(h) {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < len(h); j++ {
			if less(&h[j], &h[m]) {
				m = j
			}
		}
		if !less(&h[m], &h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return top.slot
}

// at is the item in a slot that take returned. A push may grow the slab
// meanwhile: the pointer is then to the old array's copy, which only its
// holder reads.
func (q *queue) at(slot int32) *item { return &q.slab[slot] }

// release frees a slot take returned, for a later push.
func (q *queue) release(slot int32) { q.free = append(q.free, slot) }

// each calls fn with every queued item, in no order.
func (q *queue) each(fn func(*item)) {
	for _, k := range q.keys {
		fn(&q.slab[k.slot])
	}
}

// reset empties the queue, and hands its arrays to the next run's queue
// (a campaign's runs grow one queue, not one each: a run's queue grown
// from nothing was an eighth of what the simulator allocated). The items
// left in the slab are overwritten before they are read again.
func (q *queue) reset() {
	if cap(q.slab) > 0 {
		spareQueues.Put(&queue{keys: q.keys[:0], slab: q.slab[:0], free: q.free[:0]})
	}
	*q = queue{}
}

// spareQueues holds the arrays of queues whose runs have ended.
var spareQueues sync.Pool

// newQueue is an empty queue, in the arrays of one whose run has ended
// when there is one.
func newQueue() queue {
	if q, ok := spareQueues.Get().(*queue); ok {
		return *q
	}
	return queue{}
}
