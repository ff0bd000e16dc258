package harness

import (
	"container/heap"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// delayQueue runs functions at their due times, in due order, ties in push
// order, on one goroutine. It never blocks a pusher.
type delayQueue struct {
	mu     sync.Mutex
	items  dueItems
	seq    uint64
	wake   chan struct{}
	closed bool
	done   chan struct{}
}

type dueItem struct {
	due time.Time
	seq uint64
	fn  func()
}

func newDelayQueue() *delayQueue {
	q := &delayQueue{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.loop()
	return q
}

// push schedules fn at due.
func (q *delayQueue) push(due time.Time, fn func()) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.seq++
	heap.Push(&q.items, &dueItem{due: due, seq: q.seq, fn: fn})
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close stops the queue; items not yet due are discarded and their number
// returned.
func (q *delayQueue) close() int {
	q.mu.Lock()
	q.closed = true
	n := len(q.items)
	q.items = nil
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.done
	return n
}

// shortWait is the longest wait the queue sleeps out by itself rather than
// with a timer: Go's timers fire up to a millisecond late on an otherwise
// idle process (its poller sleeps in whole milliseconds), which would make
// every delay of a few hundred microseconds a millisecond and more.
const shortWait = 2 * time.Millisecond

// napMax is the longest one nap of a short wait, after which the queue
// looks again for items pushed meanwhile: the most a newly pushed item
// that is due at once can be late.
const napMax = 20 * time.Microsecond

func (q *delayQueue) loop() {
	defer close(q.done)
	// Short waits are slept on this goroutine's own thread, with a fine
	// timer slack, in naps of at most napMax.
	runtime.LockOSThread()
	fineTimerSlack()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return
		}
		var wait time.Duration = time.Hour
		var ready []func()
		now := time.Now()
		for len(q.items) > 0 {
			it := q.items[0]
			if it.due.After(now) {
				wait = it.due.Sub(now)
				break
			}
			heap.Pop(&q.items)
			ready = append(ready, it.fn)
		}
		q.mu.Unlock()
		for _, fn := range ready {
			fn()
		}
		if len(ready) > 0 {
			continue
		}
		if wait < shortWait {
			nap(min(wait, napMax))
			continue
		}
		timer.Reset(wait - shortWait) // wake early: the timer may be late; the rest is napped
		select {
		case <-timer.C:
		case <-q.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
	}
}

type dueItems []*dueItem

func (h dueItems) Len() int { return len(h) }
func (h dueItems) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h dueItems) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueItems) Push(x any)   { *h = append(*h, x.(*dueItem)) }
func (h *dueItems) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// nap sleeps the calling thread for d (nanosleep, not a Go timer).
func nap(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}

// fineTimerSlack asks Linux to wake the calling thread from a sleep within
// a microsecond of its time, instead of the default 50µs later.
func fineTimerSlack() {
	const prSetTimerSlack = 29
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1000, 0)
}
