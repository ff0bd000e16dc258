package hostnet

import (
	"container/heap"
	"sync"
	"time"
)

// wire is the way into one host: packets are written to its TUN device at
// once (write) or when they are due (at), in the order of their times,
// and those due at one moment in the order they came.
type wire struct {
	h    *Host
	mu   sync.Mutex
	q    due
	seq  uint64
	wake chan struct{}
}

func newWire(h *Host) *wire { return &wire{h: h, wake: make(chan struct{}, 1)} }

// write writes a packet to the host now. A write that fails (the device
// is going, or the host's queue is full) drops the packet, as a full
// interface queue would.
func (w *wire) write(b []byte) { _, _ = w.h.tun.Write(b) }

// at writes b to the host at t; b is the wire's from then on.
func (w *wire) at(t time.Time, b []byte) {
	w.mu.Lock()
	w.seq++
	heap.Push(&w.q, pending{at: t, seq: w.seq, b: b})
	first := w.q[0].seq == w.seq
	w.mu.Unlock()
	if first {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// run writes each packet when it is due, until the network closes; what
// is still waiting then is dropped.
func (w *wire) run() {
	defer w.h.n.wg.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		w.mu.Lock()
		var wait time.Duration = time.Hour
		for w.q.Len() > 0 {
			if d := time.Until(w.q[0].at); d > 0 {
				wait = d
				break
			}
			p := heap.Pop(&w.q).(pending)
			w.mu.Unlock()
			w.write(p.b)
			w.mu.Lock()
		}
		w.mu.Unlock()
		t.Reset(wait)
		select {
		case <-w.h.n.done:
			return
		case <-w.wake:
		case <-t.C:
		}
	}
}

// pending is a packet waiting for its time.
type pending struct {
	at  time.Time
	seq uint64
	b   []byte
}

// due is a heap of pending packets, the earliest first.
type due []pending

func (d due) Len() int { return len(d) }
func (d due) Less(i, j int) bool {
	if !d[i].at.Equal(d[j].at) {
		return d[i].at.Before(d[j].at)
	}
	return d[i].seq < d[j].seq
}
func (d due) Swap(i, j int) { d[i], d[j] = d[j], d[i] }
func (d *due) Push(x any)   { *d = append(*d, x.(pending)) }
func (d *due) Pop() any {
	old := *d
	p := old[len(old)-1]
	*d = old[:len(old)-1]
	return p
}
