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

	mu     sync.Mutex // guards nem (but for Apply of process actions), nextID, counts and types
	nem    *nemesis.Nemesis
	nextID int64
	counts map[string]int64
	queue  *delayQueue
	// types are the message types seen so far, at most MaxTypes.
	types map[string]bool
}

// typeName is the name under which a message of type t is recorded and
// counted: t cut to MaxTypeLen, or OtherTypes once MaxTypes others have
// been seen, so that no node can make the counts, the history's end event
// or the report grow by inventing types (called under mu).
func (rt *router) typeName(t string) string {
	t = Clip(t, MaxTypeLen)
	if rt.types[t] {
		return t
	}
	if len(rt.types) >= MaxTypes {
		return OtherTypes
	}
	if rt.types == nil {
		rt.types = map[string]bool{}
	}
	rt.types[t] = true
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
	env, err := wire.Parse(line)
	if err != nil {
		r.refuse(from, RefusedOutput, fmt.Sprintf("%v: %s", err, quote(line)))
		return
	}
	if env.Src != from {
		r.logf("%s: wrote a message with src %s; routing it as from %s", from, quote([]byte(env.Src)), from)
		env.Src = from
	}
	switch {
	case env.Dest == wire.Harness:
		r.report(from, env.Body)
	case r.members[env.Dest] != nil:
		r.router.send(env)
	default:
		r.clients.reply(from, env)
	}
}

// report records a node's report. Every string in it is cut to MaxField.
func (r *run) report(from string, body []byte) {
	var rb wire.ReportBody
	if err := json.Unmarshal(body, &rb); err != nil || rb.Type != "report" {
		why := "not a report"
		if err != nil {
			why = err.Error()
		}
		r.refuse(from, RefusedReport, fmt.Sprintf("%s: %s", why, quote(body)))
		return
	}
	r.rec.Record(history.Event{Kind: history.KindReport, Node: from, What: Clip(rb.What, MaxField), Value: Clip(rb.Value, MaxField), Name: Clip(rb.Name, MaxField), Msg: rb.Msg})
}

// send records a message and schedules its copies by its fate.
func (rt *router) send(env wire.Envelope) {
	r := rt.r
	mtype := "?"
	if head, err := wire.ParseHead(env.Body); err == nil && head.Type != "" {
		mtype = head.Type
	}
	rt.mu.Lock()
	mtype = rt.typeName(mtype)
	rt.nextID++
	id := rt.nextID
	rt.counts[CountSent]++
	rt.counts[CountSent+"."+mtype]++
	var now int64
	if rt.record {
		// Recording under the router's lock keeps the send events of one
		// link in the order of their fates.
		e := r.rec.Record(history.Event{Kind: history.KindMsg, What: history.MsgSend, Msg: id, Src: env.Src, Dest: env.Dest, MType: mtype})
		now = e.Time
	} else {
		now = r.rec.Now()
	}
	fate := rt.nem.Decide(nemesis.Msg{Link: nemesis.Link{From: env.Src, To: env.Dest}, Type: mtype, Body: env.Body}, time.Duration(now))
	for range len(fate.Copies) - 1 {
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
	for _, c := range fate.Copies {
		e, dc := env, d
		e.ID = id
		if c.Body != nil {
			e.Body, dc.corrupt, dc.body = c.Body, c.Corrupt, c.Body
			dc.detail = nemesis.Change(env.Body, c.Body)
			if c.Resum && e.Sum != "" {
				e.Sum = wire.Sum(c.Body)
			}
		}
		dc.line = e.Append(nil)
		rt.queue.push(r.zero.Add(time.Duration(now)+c.Delay), func() { r.enqueue(dest, dc) })
	}
}

// enqueue hands a due delivery to its node's queue without ever blocking.
func (r *run) enqueue(m *member, d delivery) {
	select {
	case m.outbox <- d:
	default:
		if d.msg != 0 {
			r.dropped(d, m.name, "overflow")
		}
	}
}

// delivered records a delivery; a corrupted one is recorded as corrupt
// first, always, with the body it carries when messages are recorded, so
// that a receiver's rejection can be matched with it.
func (r *run) delivered(d delivery, to string) {
	if d.corrupt != "" {
		r.router.count(CountCorrupted, CountCorrupted+"."+d.corrupt)
		e := history.Event{Kind: history.KindMsg, What: history.MsgCorrupt, Msg: d.msg, Src: d.src, Dest: to, MType: d.mtype, Reason: d.corrupt, Detail: d.detail}
		if r.router.record {
			e.Body = string(d.body)
		}
		r.rec.Record(e)
	}
	r.router.count(CountDelivered)
	if r.router.record {
		r.rec.Record(history.Event{Kind: history.KindMsg, What: history.MsgDeliver, Msg: d.msg, Src: d.src, Dest: to, MType: d.mtype})
	}
}

func (r *run) dropped(d delivery, to, reason string) {
	r.router.count(CountDropped, CountDropped+"."+reason)
	if r.router.record {
		r.rec.Record(history.Event{Kind: history.KindMsg, What: history.MsgDrop, Msg: d.msg, Src: d.src, Dest: to, MType: d.mtype, Reason: reason})
	}
}
