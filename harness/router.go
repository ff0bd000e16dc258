package harness

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/nodes/wire"
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
			} else if r.checksums {
				r.members[from].unsummed.Add(1) // one map look-up, for an unsummed message only
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
		if env.Sum == "" && r.checksums {
			r.members[from].unsummed.Add(1)
		}
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
	fate := rt.nem.DecideInto(rt.fate, nemesis.Msg{Link: nemesis.Link{From: env.Src, To: env.Dest}, Type: mtype, Body: env.Body, Size: len(env.Body)}, time.Duration(now))
	rt.fate = fate.Copies[:0]
	var few [2]nemesis.Copy
	copies := append(few[:0], fate.Copies...) // fate's are the router's, reused
	for range len(copies) - 1 {
		rt.counts[history.CountDuplicated]++
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

// recording says whether a message from src is recorded one by one, and
// whether the limit has bitten (called under mu). The message that finds
// the limit reached records the limit event.
func (rt *router) recording(src string) (rec, capped bool) {
	switch {
	case rt.capped:
		rt.counts[history.CountUnrecorded]++
		return false, true
	case rt.limit > 0 && rt.recorded >= rt.limit:
		rt.capped = true
		rt.counts[history.CountUnrecorded] = 1
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
