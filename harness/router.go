package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"syscall"
	"time"

	"coup/harness/history"
	"coup/nemesis"
	"coup/nodes/wire"
)

// router carries messages between nodes: it records each send, asks the
// nemesis for its fate and schedules each copy's delivery.
type router struct {
	r      *run
	record bool // record every message as an event
	// limit is the most messages recorded one by one (history.max_messages);
	// recorded counts them, and capped is set once the limit has bitten.
	limit    int64
	recorded int64
	capped   bool

	mu     sync.Mutex // guards nem (but for Apply of process actions), nextID, the counts, types and fate
	nem    *nemesis.Nemesis
	nextID int64
	counts map[string]int64
	// sent and sentBy count the messages sent, in all and by type, apart
	// from counts so that counting costs no string per message; snapshot
	// merges them in.
	sent   int64
	sentBy map[string]int64
	fate   []nemesis.Copy // the nemesis's copies, reused from message to message
	queue  *delayQueue
	// types are the message types seen so far, at most MaxTypes.
	types map[string]string
}

// typeName is the name under which a message of type t is recorded and
// counted: t cut to MaxTypeLen, or OtherTypes once MaxTypes others have
// been seen, so that no node can make the counts, the history's end event
// or the report grow by inventing types (called under mu).
func (rt *router) typeName(t string) string {
	if t == "" {
		t = "?" // no type, or a body ParseHead cannot read
	}
	t = Clip(t, MaxTypeLen)
	if name, ok := rt.types[t]; ok {
		return name // the one string of this name: cheap to keep and to compare
	}
	if len(rt.types) >= MaxTypes {
		return OtherTypes
	}
	if rt.types == nil {
		rt.types = map[string]string{}
	}
	rt.types[t] = t
	return t
}

func (rt *router) count(keys ...string) {
	rt.mu.Lock()
	for _, k := range keys {
		rt.counts[k]++
	}
	rt.mu.Unlock()
}

// route handles one line written by a node, in the order the node wrote
// it.
func (r *run) route(from string, line []byte, wk *wakes) {
	// The common case, a message to a node in plain JSON, makes no string:
	// the names are the members' own, the type the router's.
	if raw, ok := wire.ScanRaw(line); ok {
		if m := r.members[string(raw.Dest)]; m != nil {
			if string(raw.Src) != from {
				r.logf("%s: wrote a message with src %s; routing it as from %s", from, quote(raw.Src), from)
			}
			env := wire.Envelope{ID: raw.ID, Src: from, Dest: m.name, Body: raw.Body}
			if len(raw.Sum) > 0 {
				env.Sum = string(raw.Sum)
			}
			r.router.sendTyped(env, raw.Type, wk)
			return
		}
	}
	env, typ, err := wire.Scan(line)
	if err != nil {
		r.refuse(from, RefusedOutput, fmt.Sprintf("%v: %s", err, quote(line)))
		return
	}
	if env.Src != from {
		r.logf("%s: wrote a message with src %s; routing it as from %s", from, quote([]byte(env.Src)), from)
	}
	env.Src = from // the member's own string, as every event keeps it
	switch m := r.members[env.Dest]; {
	case env.Dest == wire.Harness:
		r.report(from, env.Body)
	case m != nil:
		env.Dest = m.name
		r.router.send(env, typ, wk)
	default:
		r.clients.reply(from, env)
	}
}

// report records a node's report. Every string in it is cut to MaxField.
func (r *run) report(from string, body []byte) {
	var rb wire.ReportBody
	err := json.Unmarshal(body, &rb) // a term that is not an integer fails here
	if err == nil && rb.Type != "report" {
		err = fmt.Errorf("type %q is not \"report\"", rb.Type)
	}
	if err == nil {
		err = rb.CheckTerm()
	}
	if err != nil {
		// A report with a bad term is refused whole: recorded without its
		// term, a claim would read as one that gave none.
		r.refuse(from, RefusedReport, fmt.Sprintf("%v: %s", err, quote(body)))
		return
	}
	r.rec.Record(history.Event{Kind: history.KindReport, Node: from, What: Clip(rb.What, MaxField), Value: Clip(rb.Value, MaxField), Name: Clip(rb.Name, MaxField), Msg: rb.Msg, Term: rb.Term})
}

// send records a message and schedules its copies by its fate. Its cost,
// hop by hop (docs/performance.md has the figures):
//   - under the router's lock: an id, the counts, the send event (written
//     as a JSON line into the history's buffer), the nemesis's fate;
//   - per copy: the line the receiver reads (the envelope with the id
//     first), then either straight into the receiver's outbox, when it is
//     due now and nothing for that receiver waits in the delay queue, or
//     into the delay queue (a heap and one goroutine), which moves it to
//     the outbox when due.
func (rt *router) send(env wire.Envelope, typ string, wk *wakes) {
	rt.mu.Lock()
	rt.sendLocked(env, rt.typeName(typ), wk)
}

// sendTyped is send with the type as the line's bytes: a type seen before
// is found without making a string of it.
func (rt *router) sendTyped(env wire.Envelope, typ []byte, wk *wakes) {
	rt.mu.Lock()
	name, ok := rt.types[string(typ)]
	if !ok {
		name = rt.typeName(string(typ))
	}
	rt.sendLocked(env, name, wk)
}

// sendLocked is send, under the router's lock (which it releases), with
// the type's name.
func (rt *router) sendLocked(env wire.Envelope, mtype string, wk *wakes) {
	r := rt.r
	rt.nextID++
	id := rt.nextID
	rt.sent++
	if rt.sentBy == nil {
		rt.sentBy = map[string]int64{}
	}
	rt.sentBy[mtype]++
	rec, capped := rt.recording(env.Src)
	var now int64
	if rec {
		// Recording under the router's lock keeps the send events of one
		// link in the order of their fates.
		e := r.rec.Record(history.Event{Kind: history.KindMsg, What: history.MsgSend, Msg: id, Src: env.Src, Dest: env.Dest, MType: mtype})
		now = e.Time
	} else {
		now = r.rec.Now()
	}
	fate := rt.nem.DecideInto(rt.fate, nemesis.Msg{Link: nemesis.Link{From: env.Src, To: env.Dest}, Type: mtype, Body: env.Body}, time.Duration(now))
	rt.fate = fate.Copies[:0]
	var few [2]nemesis.Copy
	copies := append(few[:0], fate.Copies...) // fate's are the router's, reused
	for range len(copies) - 1 {
		rt.counts[CountDuplicated]++
		if rec {
			r.rec.Record(history.Event{Kind: history.KindMsg, What: history.MsgDuplicate, Msg: id, Src: env.Src, Dest: env.Dest, MType: mtype})
		}
	}
	rt.mu.Unlock()

	d := delivery{msg: id, src: env.Src, mtype: mtype, rec: rec, capped: capped}
	if fate.Drop {
		r.dropped(d, env.Dest, fate.Reason)
		return
	}
	dest := r.members[env.Dest]
	for _, c := range copies {
		e, dc := env, d
		e.ID = id
		if c.Body != nil {
			e.Body, dc.corrupt, dc.body = c.Body, c.Corrupt, c.Body
			dc.detail = nemesis.Change(env.Body, c.Body)
			if c.Resum && e.Sum != "" {
				e.Sum = wire.Sum(c.Body)
			}
		}
		if c.Delay <= 0 && dest.delayed.Load() == 0 {
			// Due now, and nothing older for this node is waiting: no
			// queue, and the line is written straight into the outbox.
			r.enqueueEnvelope(dest, dc, &e, wk)
			continue
		}
		dc.line = e.Append(make([]byte, 0, len(e.Body)+len(e.Src)+len(e.Dest)+len(e.Sum)+64))
		// Counted until it is in the outbox, so that a later message
		// never overtakes it there; bounded, like the outbox, so that a
		// flood cannot fill the delay queue.
		if dest.delayed.Load() >= MaxDelayed {
			r.dropped(dc, dest.name, "overflow")
			continue
		}
		dest.delayed.Add(1)
		rt.queue.push(r.zero.Add(time.Duration(now)+c.Delay), func() {
			r.deliverDue(dest, dc)
			dest.delayed.Add(-1)
		})
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
const MaxDelayed = 4 * OutboxSize

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

// recording says whether a message from src is recorded one by one, and
// whether the limit has bitten (called under mu). The message that finds
// the limit reached records the limit event.
func (rt *router) recording(src string) (rec, capped bool) {
	switch {
	case rt.capped:
		rt.counts[CountUnrecorded]++
		return false, true
	case rt.limit > 0 && rt.recorded >= rt.limit:
		rt.capped = true
		rt.counts[CountUnrecorded] = 1
		rt.r.rec.Record(history.Event{Kind: history.KindLimit, What: history.LimitMessages, Node: src, Value: strconv.FormatInt(rt.limit, 10),
			Detail: fmt.Sprintf("%d messages were recorded, history.max_messages; from this one on, sent by %s, messages are counted, not recorded", rt.limit, src)})
		rt.r.logf("recording stopped at %d messages (history.max_messages), on a message from %s; messages are still counted", rt.limit, src)
		return false, true
	case !rt.record:
		return false, false
	}
	rt.recorded++
	return true, false
}

// CountUnrecorded counts the messages past history.max_messages.
const CountUnrecorded = "messages.unrecorded"

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
		wk.add(m.box)
	}
}

// wakes are the outboxes a reader has put deliveries into and not yet
// signalled.
type wakes struct{ boxes []*outbox }

func (w *wakes) add(o *outbox) {
	for _, b := range w.boxes {
		if b == o {
			return
		}
	}
	w.boxes = append(w.boxes, o)
}

// flush signals every outbox added since the last flush.
func (w *wakes) flush() {
	for _, b := range w.boxes {
		b.signal()
	}
	clear(w.boxes)
	w.boxes = w.boxes[:0]
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
			rt.counts[CountCorrupted]++
			rt.counts[CountCorrupted+"."+d.corrupt]++
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
	rt.counts[CountDelivered] += n
	rt.mu.Unlock()
	if len(events) > 0 {
		r.rec.RecordAll(events)
	}
	return events
}

func (r *run) dropped(d delivery, to, reason string) {
	r.router.count(CountDropped, CountDropped+"."+reason)
	if d.rec {
		r.rec.Record(history.Event{Kind: history.KindMsg, What: history.MsgDrop, Msg: d.msg, Src: d.src, Dest: to, MType: d.mtype, Reason: reason})
	}
}
