package harness

import (
	"encoding/json"
	"fmt"
	"sync"
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
func (r *run) route(from string, line []byte) {
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
			r.router.sendTyped(env, raw.Type)
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
		r.router.send(env, typ)
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
func (rt *router) send(env wire.Envelope, typ string) {
	rt.mu.Lock()
	rt.sendLocked(env, rt.typeName(typ))
}

// sendTyped is send with the type as the line's bytes: a type seen before
// is found without making a string of it.
func (rt *router) sendTyped(env wire.Envelope, typ []byte) {
	rt.mu.Lock()
	name, ok := rt.types[string(typ)]
	if !ok {
		name = rt.typeName(string(typ))
	}
	rt.sendLocked(env, name)
}

// sendLocked is send, under the router's lock (which it releases), with
// the type's name.
func (rt *router) sendLocked(env wire.Envelope, mtype string) {
	r := rt.r
	rt.nextID++
	id := rt.nextID
	rt.sent++
	if rt.sentBy == nil {
		rt.sentBy = map[string]int64{}
	}
	rt.sentBy[mtype]++
	var now int64
	if rt.record {
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
		if rt.record {
			r.rec.Record(history.Event{Kind: history.KindMsg, What: history.MsgDuplicate, Msg: id, Src: env.Src, Dest: env.Dest, MType: mtype})
		}
	}
	rt.mu.Unlock()

	d := delivery{msg: id, src: env.Src, mtype: mtype}
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
		dc.line = e.Append(make([]byte, 0, len(e.Body)+len(e.Src)+len(e.Dest)+len(e.Sum)+64))
		if c.Delay <= 0 && dest.delayed.Load() == 0 {
			// Due now, and nothing older for this node is waiting: no
			// queue, no hand-off.
			r.enqueue(dest, dc)
			continue
		}
		// Counted until it is in the outbox, so that a later message
		// never overtakes it there.
		dest.delayed.Add(1)
		rt.queue.push(r.zero.Add(time.Duration(now)+c.Delay), func() {
			r.enqueue(dest, dc)
			dest.delayed.Add(-1)
		})
	}
}

// enqueue hands a due delivery to its node's outbox without ever blocking.
func (r *run) enqueue(m *member, d delivery) {
	if !m.box.put(d) && d.msg != 0 {
		r.dropped(d, m.name, "overflow")
	}
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
		if d.msg == 0 {
			continue
		}
		n++
		if d.corrupt != "" {
			rt.counts[CountCorrupted]++
			rt.counts[CountCorrupted+"."+d.corrupt]++
			e := history.Event{Kind: history.KindMsg, What: history.MsgCorrupt, Msg: d.msg, Src: d.src, Dest: to, MType: d.mtype, Reason: d.corrupt, Detail: d.detail}
			if rt.record {
				e.Body = string(d.body)
			}
			events = append(events, e)
		}
		if rt.record {
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
	if r.router.record {
		r.rec.Record(history.Event{Kind: history.KindMsg, What: history.MsgDrop, Msg: d.msg, Src: d.src, Dest: to, MType: d.mtype, Reason: reason})
	}
}
