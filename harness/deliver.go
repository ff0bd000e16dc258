package harness

import (
	"errors"
	"io"
	"syscall"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/nodes/wire"
)

// Delivery: how a due message reaches its node. A copy due now goes into
// the node's outbox (enqueue) and the node's writer (write) takes the
// outbox whole and writes it at once; a delayed copy that comes due while
// nothing waits for its node is written by the delay queue itself
// (deliverDue). Either way the delivery is recorded, under the member's
// lock, before the node can read it.

// write hands a member's queued deliveries to whichever incarnation is up.
// It runs for the whole run, one goroutine per member. While the node is
// paused it holds the deliveries (the outbox fills and then overflows, as
// a stopped process's socket buffer would); nothing else waits for it.
func (r *run) write(m *member) {
	var events []history.Event
	for {
		batch, lines, ok := m.box.take()
		if !ok {
			return
		}
		r.writeBatch(m, batch, lines, &events)
		m.box.done()
	}
}

// writeBatch writes a batch of deliveries (their lines one after another
// in lines) to whichever incarnation is up, in one write, once it is not
// paused.
func (r *run) writeBatch(m *member, batch []delivery, lines []byte, events *[]history.Event) {
	m.mu.Lock()
	for m.resumed != nil {
		ch := m.resumed
		m.mu.Unlock()
		<-ch
		m.mu.Lock()
	}
	p := m.proc
	if p != nil {
		// Recorded under m.mu, so that a delivery is never recorded
		// after the pause that holds it.
		*events = r.deliveredAll(batch, m.name, *events)
	}
	m.mu.Unlock()
	if p == nil {
		for _, d := range batch {
			if d.msg != 0 { // a client request or control message is just lost
				r.dropped(d, m.name, "down")
			}
		}
		return
	}
	if _, err := p.Stdin.Write(lines); err != nil {
		for _, d := range batch {
			if d.msg != 0 {
				r.dropped(d, m.name, "write-failed")
			}
		}
	}
}

// deliverDue hands a delayed delivery, now due, to its node without ever
// blocking: written at once when nothing waits for the node and its pipe
// takes the line whole, else through the outbox. Written at once, it
// saves the wake-up of the node's writer, which on an idle machine is
// much of a delayed message's lateness.
func (r *run) deliverDue(m *member, d delivery) {
	if len(d.line) <= pipeAtomic && m.box.claim() {
		written := r.deliverNow(m, &d)
		m.box.done()
		if written {
			return
		}
	}
	r.enqueue(m, d)
}

// MaxDelayed bounds each node's deliveries waiting in the delay queue; a
// copy that finds it reached is dropped as an overflow.
const MaxDelayed = 4 * lifecycle.OutboxSize

// pipeAtomic is the longest write a pipe takes whole or not at all (Linux's
// PIPE_BUF): a direct delivery is never cut in two.
const pipeAtomic = 4096

// deliverNow records a delivery and writes it to the node at once, without
// waiting: it reports false when the node is down or paused, or its pipe
// is full, leaving the delivery to the writer (recorded, in that last
// case). The caller holds the node's write turn.
func (r *run) deliverNow(m *member, d *delivery) bool {
	m.mu.Lock()
	p := m.proc
	if p == nil || m.resumed != nil {
		m.mu.Unlock()
		return false
	}
	if d.msg != 0 {
		var scratch [2]history.Event
		one := [1]delivery{*d}
		r.deliveredAll(one[:], m.name, scratch[:0])
		d.recorded = true
	}
	m.mu.Unlock()
	err := writeNow(p.Stdin, d.line)
	switch {
	case err == nil:
		return true
	case errors.Is(err, syscall.EAGAIN):
		return false // the pipe is full; the writer waits for room
	}
	if d.msg != 0 {
		r.dropped(*d, m.name, "write-failed")
	}
	return true
}

// writeNow makes one write of b to f that does not wait: a pipe of the
// runtime's poller is non-blocking, and a write of at most pipeAtomic
// bytes goes whole or fails with EAGAIN.
func writeNow(f io.Writer, b []byte) error {
	sc, ok := f.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return syscall.EAGAIN // no way to try: leave it to the writer
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	n := 0
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), b)
		return true // one attempt, whatever it gives
	}); err != nil {
		return err
	}
	if werr == nil && n < len(b) {
		_, werr = f.Write(b[n:]) // not expected of a pipe; finish the line
	}
	return werr
}

// enqueue hands a due delivery to its node's outbox without ever blocking.
func (r *run) enqueue(m *member, d delivery) { r.queued(m, d, m.box.putQuiet(d), nil) }

// enqueueEnvelope is enqueue with the delivery's line given as its
// envelope, for a node's reader, which wakes the writers it fed once it
// has routed every line it has in hand (wk), so that a burst of messages
// goes out in one write rather than one each.
func (r *run) enqueueEnvelope(m *member, d delivery, e *wire.Envelope, wk *wakes) {
	r.queued(m, d, m.box.putEnvelope(d, e), wk)
}

// queued finishes putting d into m's outbox: a delivery the outbox did not
// take (ok false) is an overflow; one it took wakes the writer, now or
// with wk's flush.
func (r *run) queued(m *member, d delivery, ok bool, wk *wakes) {
	switch {
	case !ok && d.msg != 0:
		r.dropped(d, m.name, "overflow")
	case !ok:
	case wk == nil:
		m.box.signal()
	default:
		wk.add(m)
	}
}

// wakes are the members whose outboxes a reader has put deliveries into
// and not yet handed on; events is the reader's scratch space for their
// records.
type wakes struct {
	members []*member
	events  []history.Event
}

func (w *wakes) add(m *member) {
	for _, x := range w.members {
		if x == m {
			return
		}
	}
	w.members = append(w.members, m)
}

// flush hands on what the reader put into each outbox since the last
// flush: written by the reader itself when it can be (writeFed), else by
// the member's writer, woken.
func (w *wakes) flush(r *run) {
	for _, m := range w.members {
		if !r.writeFed(m, &w.events) {
			m.box.signal()
		}
	}
	clear(w.members)
	w.members = w.members[:0]
}

// writeFed writes a member's waiting deliveries from the reader that put
// them there, as the relay does, when nobody else is writing to the node,
// the node is up and not paused, and their lines go into the pipe in one
// write that does not wait (at most pipeAtomic bytes, and room for them).
// It saves the wake-up of the node's writer, a thread woken on another
// core, which was most of what a message one at a time cost over the
// relay's. It reports false when the writer must be woken for them.
func (r *run) writeFed(m *member, events *[]history.Event) bool {
	batch, lines, ok := m.box.takeNow(pipeAtomic)
	if !ok {
		return false
	}
	m.mu.Lock()
	p := m.proc
	if p == nil || m.resumed != nil {
		m.mu.Unlock()
		m.box.giveBack(batch, lines) // the writer drops or holds them
		return true
	}
	// Recorded under m.mu, as the writer does, before the node can read
	// them.
	*events = r.deliveredAll(batch, m.name, *events)
	for i := range batch {
		batch[i].recorded = true
	}
	m.mu.Unlock()
	err := writeNow(p.Stdin, lines)
	switch {
	case errors.Is(err, syscall.EAGAIN):
		m.box.giveBack(batch, lines) // the pipe is full: the writer waits for room
		return true
	case err != nil:
		for _, d := range batch {
			if d.msg != 0 {
				r.dropped(d, m.name, "write-failed")
			}
		}
	}
	m.box.done()
	return true
}

// deliveredAll records the deliveries of one write to a node: for each
// message between nodes, its corrupt event first (always, with the body it
// carries when messages are recorded, so that a receiver's rejection can
// be matched with it), then its delivery. events is scratch space,
// returned for reuse.
func (r *run) deliveredAll(batch []delivery, to string, events []history.Event) []history.Event {
	rt := r.router
	events = events[:0]
	n := int64(0)
	rt.mu.Lock()
	for i := range batch {
		d := &batch[i]
		if d.msg == 0 || d.recorded {
			continue
		}
		n++
		if d.corrupt != "" {
			rt.counts[history.CountCorrupted]++
			rt.counts[history.CountCorrupted+"."+d.corrupt]++
			e := history.Event{Kind: history.KindMsg, What: history.MsgCorrupt, Msg: d.msg, Src: d.src, Dest: to, MType: d.mtype, Reason: d.corrupt, Detail: d.detail}
			if d.rec {
				e.Body = string(d.body)
			}
			if !d.capped {
				events = append(events, e)
			}
		}
		if d.rec {
			events = append(events, history.Event{Kind: history.KindMsg, What: history.MsgDeliver, Msg: d.msg, Src: d.src, Dest: to, MType: d.mtype})
		}
	}
	rt.counts[history.CountDelivered] += n
	rt.mu.Unlock()
	if len(events) > 0 {
		r.rec.RecordAll(events)
	}
	return events
}

func (r *run) dropped(d delivery, to, reason string) {
	r.router.count(history.CountDropped, history.CountDropped+"."+reason)
	if d.rec {
		r.rec.Record(history.Event{Kind: history.KindMsg, What: history.MsgDrop, Msg: d.msg, Src: d.src, Dest: to, MType: d.mtype, Reason: reason})
	}
}
