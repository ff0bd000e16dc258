package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coupharness/coup/nemesis"
)

const (
	// chunkSize is the most one read takes: a chunk is whatever the peer's
	// writes left in the socket, up to this.
	chunkSize = 32 << 10
	// maxHeld bounds the bytes held on one direction. Above it the reader
	// stops reading, and TCP's own flow control holds the sender.
	maxHeld = 4 << 20
)

// direction is one way of a connection: a reader that forwards what it
// reads, and, only while something is held, a queue and a drain
// goroutine that writes the held chunks in order.
type direction struct {
	c        *conn
	link     nemesis.Link
	src, dst *net.TCPConn
	policy   Policy
	off      int64 // the next chunk's offset; the reader's alone

	written atomic.Int64
	queued  atomic.Int32  // held items (chunks, end of stream) not yet passed on
	changed chan struct{} // Changed was called (one pending wake at most)
	space   chan struct{} // the drain freed room in the queue

	mu      sync.Mutex
	q       []*held
	bytes   int  // bytes in q
	lost    int  // chunks in q whose fate is Lost
	writing bool // a drain goroutine runs
}

// held is a chunk, or the end of the stream, that waits to be passed on.
type held struct {
	data    []byte
	off     int64
	eof     bool         // the end of the stream, passed on with CloseWrite
	decided bool         // lost and copy are Policy.Chunk's answer
	lost    bool         // its fate drops it: a loss holds it
	copy    nemesis.Copy // its fate's first copy; Body, when set, its own
	read    time.Time    // when it was read
	since   time.Time    // when its fate was decided: Delay and LossReset count from here
	stalled bool         // held by a stall or a loss: its release is an event
}

func newDirection(c *conn, l nemesis.Link, src, dst *net.TCPConn) *direction {
	return &direction{c: c, link: l, src: src, dst: dst, policy: c.p.cfg.Policy,
		changed: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

// read forwards chunks from src until it ends, then passes the end on.
func (d *direction) read() {
	buf := make([]byte, chunkSize)
	for {
		// Read: one system call, or a park in the runtime's poller until
		// the socket is readable; it is the forwarding itself.
		n, err := d.src.Read(buf)
		if n > 0 && !d.forward(buf[:n]) {
			return
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				d.endOfStream()
			} else {
				d.c.close(fmt.Sprintf("read from %s: %v", d.link.From, err))
			}
			return
		}
	}
}

// forward passes one chunk on: written now, or held. It returns false
// when the connection has ended.
func (d *direction) forward(b []byte) bool {
	off := d.off
	d.off += int64(len(b))
	// Policy.Cut: a call into the driver's view of the links, under its
	// lock; a partition must stop the very next chunk.
	switch d.policy.Cut(d.link) {
	case nemesis.Refuse:
		d.c.reset(d.link, off, "a chunk on a refused link")
		return false
	case nemesis.Stall:
		now := time.Now()
		return d.hold(&held{data: bytes.Clone(b), off: off, read: now, since: now, stalled: true})
	}
	// Policy.Chunk: a second call into the driver, for the chunk's delay,
	// loss or corruption.
	gen := d.c.p.policyChanges.Load()
	lost, c := d.chunk(off, b)
	// The hot path: nothing is held before this chunk and nothing holds
	// it, so this goroutine writes it straight from the read buffer: no
	// copy, no hand-over to another goroutine.
	if d.queued.Load() == 0 && c.Delay <= 0 && !lost {
		return d.write(b, off, c)
	}
	now := time.Now()
	h := &held{data: bytes.Clone(b), off: off, decided: true, lost: lost, copy: c, read: now, since: now, stalled: lost}
	h.copy.Body = bytes.Clone(c.Body)
	if !d.hold(h) {
		return false
	}
	if lost && d.c.p.policyChanges.Load() != gen {
		// The policy changed after this chunk's fate was asked, and the
		// drain may have looked at what was held before it was: it looks
		// again, or the lost chunk would wait out its LossReset after
		// the loss had ended.
		d.wake()
	}
	return true
}

// chunk asks the policy the fate of the chunk b at off: whether it is lost
// (any drop), and its first copy (a stream has no duplicates).
func (d *direction) chunk(off int64, b []byte) (lost bool, c nemesis.Copy) {
	f := d.policy.Chunk(d.link, d.c.id, off, b)
	return f.Drop, f.First()
}

// write writes a chunk whose time has come (its copy's Body instead, when
// set). It returns false when the connection has ended.
func (d *direction) write(b []byte, off int64, c nemesis.Copy) bool {
	if c.Body != nil {
		if len(c.Body) != len(b) {
			panic(fmt.Sprintf("proxy: Policy.Chunk gave a body of %d bytes for a chunk of %d on %s→%s", len(c.Body), len(b), d.link.From, d.link.To))
		}
		b = c.Body
		d.c.p.corrupted.Add(1)
		d.c.p.emit(Event{Kind: EventCorrupt, Conn: d.c.id, Link: d.link, Off: off, Detail: c.Corrupt})
	}
	// Write: one system call; it blocks while the receiver's window is
	// full, which stops this reader too: TCP's backpressure, end to end.
	n, err := d.dst.Write(b)
	d.written.Add(int64(n))
	if err != nil {
		d.c.close(fmt.Sprintf("write to %s: %v", d.link.To, err))
		return false
	}
	return true
}

// endOfStream passes the end of src's stream on as a half-close of dst,
// after whatever is held.
func (d *direction) endOfStream() {
	cut := d.policy.Cut(d.link)
	switch {
	case cut == nemesis.Refuse:
		d.c.reset(d.link, d.off, "end of stream on a refused link")
		return
	case cut == nemesis.NoCut && d.queued.Load() == 0:
		d.closeWrite()
		return
	}
	now := time.Now()
	d.hold(&held{eof: true, off: d.off, read: now, since: now, stalled: cut == nemesis.Stall})
}

func (d *direction) closeWrite() bool {
	if err := d.dst.CloseWrite(); err != nil {
		d.c.close(fmt.Sprintf("half-close towards %s: %v", d.link.To, err))
		return false
	}
	d.c.halfClosed()
	return true
}

// hold queues an item behind those already held, starting the drain if
// none runs. While maxHeld bytes are held it waits for room. It returns
// false when the connection has ended.
func (d *direction) hold(h *held) bool {
	if h.stalled {
		// Emitted before the drain can see h, so before its release.
		d.c.p.emit(d.holdEvent(h))
	}
	for {
		d.mu.Lock()
		if d.bytes < maxHeld {
			d.q = append(d.q, h)
			d.bytes += len(h.data)
			if h.lost {
				d.lost++
			}
			d.queued.Add(1)
			start := !d.writing
			d.writing = true
			d.mu.Unlock()
			if start {
				// The drain: a goroutine that lives only while something
				// is held, so an unfaulted link costs none.
				d.c.running.Add(1)
				d.c.p.wg.Add(1)
				go d.drain()
			}
			return true
		}
		d.mu.Unlock()
		select {
		case <-d.space:
		case <-d.c.done:
			return false
		}
	}
}

// drain passes the held items on in order, each once its time has come,
// and ends when none is left (or the connection ends).
func (d *direction) drain() {
	defer d.c.p.wg.Done()
	defer d.c.leave()
	for {
		d.mu.Lock()
		if len(d.q) == 0 {
			d.writing = false
			d.mu.Unlock()
			return
		}
		h := d.q[0]
		d.mu.Unlock()
		if !d.release(h) {
			return
		}
		d.mu.Lock()
		d.q[0] = nil
		d.q = d.q[1:]
		d.bytes -= len(h.data)
		d.mu.Unlock()
		d.queued.Add(-1)
		select {
		case d.space <- struct{}{}:
		default:
		}
	}
}

// release waits until the oldest held item h may be passed on, and passes
// it on. It returns false when the connection has ended.
func (d *direction) release(h *held) bool {
	for {
		select {
		case <-d.c.done:
			return false
		default:
		}
		now := time.Now()
		if d.overdue(now) {
			return false
		}
		switch d.policy.Cut(d.link) {
		case nemesis.Refuse:
			d.c.reset(d.link, h.off, "held bytes on a refused link")
			return false
		case nemesis.Stall:
			if !h.stalled {
				h.stalled = true
				d.c.p.emit(d.holdEvent(h))
			}
			if !d.wait(time.Time{}) {
				return false
			}
			continue
		}
		if h.eof {
			d.released(h, "end of stream")
			return d.closeWrite()
		}
		if !h.decided {
			d.decide(h, now)
		}
		if h.lost {
			if !d.wait(h.since.Add(d.c.p.cfg.LossReset)) {
				return false
			}
			continue
		}
		if at := h.since.Add(h.copy.Delay); now.Before(at) {
			if !d.wait(at) {
				return false
			}
			continue
		}
		d.released(h, fmt.Sprintf("%d bytes", len(h.data)))
		return d.write(h.data, h.off, h.copy)
	}
}

// decide asks the policy for the fate of a chunk read while its link
// stalled, now that it no longer does.
func (d *direction) decide(h *held, now time.Time) {
	h.lost, h.copy = d.chunk(h.off, h.data)
	h.copy.Body = bytes.Clone(h.copy.Body)
	h.decided, h.since = true, now
	if h.lost {
		if !h.stalled {
			h.stalled = true
			d.c.p.emit(d.holdEvent(h))
		}
		d.mu.Lock()
		d.lost++
		d.mu.Unlock()
	}
}

// holdEvent is the event of an item held by a stall or a loss.
func (d *direction) holdEvent(h *held) Event {
	why := "stall"
	if h.decided && h.lost {
		why = "loss"
	}
	what := fmt.Sprintf("%d bytes", len(h.data))
	if h.eof {
		what = "end of stream"
	}
	return Event{Kind: EventHold, Conn: d.c.id, Link: d.link, Off: h.off, Detail: what + " held by a " + why}
}

// released records that a stalled or lost item is let go.
func (d *direction) released(h *held, what string) {
	if !h.stalled {
		return
	}
	d.c.p.released.Add(1)
	d.c.p.emit(Event{Kind: EventRelease, Conn: d.c.id, Link: d.link, Off: h.off,
		Detail: fmt.Sprintf("%s held %s", what, time.Since(h.read).Round(time.Microsecond))})
}

// wait waits until the time until (none when zero), the next loss
// deadline, or a Changed, whichever comes first; it returns false when
// the connection ends first.
func (d *direction) wait(until time.Time) bool {
	if t, ok := d.nextLossDeadline(); ok && (until.IsZero() || t.Before(until)) {
		until = t
	}
	var fire <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		fire = t.C
	}
	select {
	case <-fire:
	case <-d.changed:
		d.reconsider()
	case <-d.c.done:
		return false
	}
	return true
}

// wake tells the drain, if it waits, that the policy changed.
func (d *direction) wake() {
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

// lostChunks lists the held chunks whose fate is Lost (the drain's own
// fields, read by the drain alone once queued).
func (d *direction) lostChunks() []*held {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lost == 0 {
		return nil
	}
	var out []*held
	for _, h := range d.q {
		if h.decided && h.lost {
			out = append(out, h)
		}
	}
	return out
}

func (d *direction) nextLossDeadline() (time.Time, bool) {
	var first time.Time
	for _, h := range d.lostChunks() {
		if t := h.since.Add(d.c.p.cfg.LossReset); first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first, !first.IsZero()
}

// overdue resets the connection if a lost chunk has been held for its
// LossReset, and says whether it did.
func (d *direction) overdue(now time.Time) bool {
	for _, h := range d.lostChunks() {
		if !now.Before(h.since.Add(d.c.p.cfg.LossReset)) {
			d.c.reset(d.link, h.off, fmt.Sprintf("a chunk of %d bytes lost for %s", len(h.data), d.c.p.cfg.LossReset))
			return true
		}
	}
	return false
}

// reconsider asks the policy again for the fate of every lost chunk held:
// one whose new fate is not Lost goes on with that fate, from now.
func (d *direction) reconsider() {
	for _, h := range d.lostChunks() {
		lost, c := d.chunk(h.off, h.data)
		if lost {
			continue
		}
		c.Body = bytes.Clone(c.Body)
		h.lost, h.copy, h.since = false, c, time.Now()
		d.mu.Lock()
		d.lost--
		d.mu.Unlock()
	}
}
