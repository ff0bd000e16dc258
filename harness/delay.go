package harness

import (
	"container/heap"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// delayQueue runs functions at their due times, in due order, ties in push
// order, on one goroutine. It never blocks a pusher.
//
// It waits with ppoll on a pipe of its own, on a thread of its own, rather
// than with a Go timer: a Go timer fires up to a millisecond late in a
// process that is otherwise idle (the runtime's poller sleeps in whole
// milliseconds), which would make every delay of a few hundred
// microseconds a millisecond and more. ppoll's timeout is in nanoseconds,
// the thread asks Linux for a fine timer slack, and a push that makes a
// new earliest item wakes the wait at once through the pipe.
type delayQueue struct {
	mu     sync.Mutex
	items  dueItems
	seq    uint64
	closed bool
	done   chan struct{}
	// wakeR and wakeW are the pipe a pusher writes a byte to when the
	// queue must look again (an earlier item, or close); -1 when the pipe
	// could not be made, and the queue then polls every pollEvery.
	wakeR, wakeW int
}

// pollEvery is how often a queue without its pipe looks for new items.
const pollEvery = 20 * time.Microsecond

type dueItem struct {
	due time.Time
	seq uint64
	fn  func()
}

func newDelayQueue() *delayQueue {
	q := &delayQueue{done: make(chan struct{}), wakeR: -1, wakeW: -1}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err == nil {
		q.wakeR, q.wakeW = p[0], p[1]
	}
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
	it := &dueItem{due: due, seq: q.seq, fn: fn}
	heap.Push(&q.items, it)
	first := q.items[0] == it
	q.mu.Unlock()
	if first {
		q.wakeUp() // the wait in progress is for a later item
	}
}

func (q *delayQueue) wakeUp() {
	if q.wakeW >= 0 {
		_, _ = syscall.Write(q.wakeW, []byte{1}) // a full pipe is awake already
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
	q.wakeUp()
	<-q.done
	if q.wakeR >= 0 {
		syscall.Close(q.wakeR)
		syscall.Close(q.wakeW)
	}
	return n
}

func (q *delayQueue) loop() {
	defer close(q.done)
	// The wait blocks this goroutine's thread, which no other goroutine
	// needs; its timer slack is its own. The thread is given back when
	// the queue closes, its slack as before: a goroutine that ends
	// locked to its thread ends the thread, and a child started from
	// that thread before (a node of another run in this process: Go
	// starts processes from any thread) dies with it, by the SIGKILL
	// its Pdeathsig asks for.
	runtime.LockOSThread()
	fineTimerSlack()
	defer runtime.UnlockOSThread()
	defer defaultTimerSlack()
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return
		}
		wait := time.Duration(-1) // none due: until woken
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
		q.await(wait)
	}
}

// await waits until d has passed (d < 0: until woken) or a push or close
// wakes it, then empties the wake pipe.
func (q *delayQueue) await(d time.Duration) {
	if q.wakeR < 0 {
		if d < 0 || d > pollEvery {
			d = pollEvery
		}
		ts := syscall.NsecToTimespec(int64(d))
		_ = syscall.Nanosleep(&ts, nil)
		return
	}
	fds := [1]pollFd{{fd: int32(q.wakeR), events: pollIn}}
	var tsp *syscall.Timespec
	if d >= 0 {
		ts := syscall.NsecToTimespec(int64(d))
		tsp = &ts
	}
	_, _, _ = syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, uintptr(unsafe.Pointer(tsp)), 0, 0, 0)
	var buf [64]byte
	for {
		if n, err := syscall.Read(q.wakeR, buf[:]); n <= 0 || err != nil {
			return
		}
	}
}

// pollFd is Linux's struct pollfd.
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const pollIn = 0x1 // POLLIN

// fineTimerSlack asks Linux to wake the calling thread from a timed wait
// within a microsecond of its time, instead of the default 50µs later.
func fineTimerSlack() { setTimerSlack(1000) }

// defaultTimerSlack gives the thread its default timer slack back.
func defaultTimerSlack() { setTimerSlack(0) }

func setTimerSlack(ns uintptr) {
	const prSetTimerSlack = 29
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, ns, 0)
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
