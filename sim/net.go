package sim

import (
	"fmt"
	"sort"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/wire"
)

// send handles a message a node sends: it is numbered, recorded, its fate
// decided by the nemesis, and each copy queued for its delivery. The
// message travels as a Go value; its bytes are made only when the nemesis
// may alter them (or with RoundTrip).
func (s *Sim) send(from *node, to string, m nodes.Msg) {
	dest := s.byName[to]
	if dest == nil {
		s.logf("%s: sent %s to %q, which is no node; ignored", from.name, m.Type(), to)
		return
	}
	mtype := m.Type()
	s.msgID++
	id := s.msgID
	s.cnt.sent++
	s.cnt.sentBy[mtype]++
	if s.cfg.RecordMessages {
		s.recordMsg(history.MsgSend, id, from.name, to, mtype, "")
	}
	link := nemesis.Link{From: from.name, To: to}
	var body []byte
	if s.cfg.RoundTrip || s.nem.Alters(link) {
		var err error
		if body, err = nodes.Encode(m); err != nil {
			panic(fmt.Sprintf("%s: %v", s.cfg.Spec.Name, err)) // as in a real node: a message that cannot be encoded is a bug
		}
		if s.cfg.RoundTrip {
			if m, err = s.cfg.Spec.Codec.Decode(body); err != nil {
				panic(fmt.Sprintf("%s: %s does not decode: %v", s.cfg.Spec.Name, mtype, err))
			}
		}
	}
	if s.pct != nil {
		s.pct.sending(from.index, s.now)
	}
	fate := s.nem.DecideInto(s.copies, nemesis.Msg{Link: link, Type: mtype, Body: body}, s.now)
	s.copies = fate.Copies
	for range len(fate.Copies) - 1 {
		s.cnt.duplicated++
		if s.cfg.RecordMessages {
			s.recordMsg(history.MsgDuplicate, id, from.name, to, mtype, "")
		}
	}
	it := item{kind: kDeliver, to: dest.index, from: from.index, id: id, msg: m}
	if fate.Drop {
		s.drop(&it, dest, fate.Reason)
		return
	}
	for _, c := range fate.Copies {
		it.at = s.now + c.Delay
		it.x = nil
		if c.Body != nil {
			x := &extra{body: c.Body, how: c.Corrupt, detail: nemesis.Change(body, c.Body)}
			if s.cfg.Checksums {
				x.sum = wire.Sum(body)
				if c.Resum {
					x.sum = wire.Sum(c.Body)
				}
			}
			it.x = x
		}
		s.push(it)
	}
}

// deliver hands a due copy to its receiver, or drops it if the receiver is
// down, or holds it if the receiver is paused.
func (s *Sim) deliver(it *item) {
	n := s.nodes[it.to]
	switch {
	case n.state != up:
		s.drop(it, n, "down")
	case n.paused:
		n.hold(it)
	default:
		s.handOver(n, it)
	}
}

// handOver records a delivery (a corrupted copy first as corrupt) and
// gives the message to the machine.
func (s *Sim) handOver(n *node, it *item) {
	from := s.nodes[it.from].name
	mtype := it.msg.Type()
	if it.x != nil {
		s.cnt.corrupted++
		s.cnt.corruptBy[it.x.how]++
		e := history.Event{Kind: history.KindMsg, What: history.MsgCorrupt, Msg: it.id, Src: from, Dest: n.name, MType: mtype, Reason: it.x.how, Detail: it.x.detail}
		if s.cfg.RecordMessages {
			e.Body = string(it.x.body)
		}
		s.record(e)
	}
	s.cnt.delivered++
	if s.cfg.RecordMessages {
		s.recordMsg(history.MsgDeliver, it.id, from, n.name, mtype, "")
	}
	if it.x != nil {
		n.receiveBytes(from, it)
		return
	}
	m := it.msg
	s.capture(input{kind: inReceive, node: n.index, from: from, msg: m})
	n.call(func() { n.m.Receive(from, m) })
}

// receiveBytes is what a real node does with an altered copy: it parses
// the line the router would have written, checks the sum when checksums
// are on, decodes the body, and rejects (and reports) what fails.
func (n *node) receiveBytes(from string, it *item) {
	e := wire.Envelope{ID: it.id, Src: from, Dest: n.name, Body: it.x.body, Sum: it.x.sum}
	line := e.Append(nil)
	env, err := wire.Parse(line[:len(line)-1])
	if err != nil {
		n.reject("unparsable", wire.LeadingID(line))
		return
	}
	if n.s.cfg.Checksums && !env.Verify() {
		n.reject("checksum", env.ID)
		return
	}
	m, err := n.s.cfg.Spec.Codec.Decode(env.Body)
	if err != nil {
		n.reject("undecodable", env.ID)
		return
	}
	n.s.capture(input{kind: inReceive, node: n.index, from: env.Src, msg: m})
	n.call(func() { n.m.Receive(env.Src, m) })
}

// drop records a copy that never reaches its receiver.
func (s *Sim) drop(it *item, to *node, reason string) {
	s.cnt.dropped++
	s.cnt.dropBy[reason]++
	if s.cfg.RecordMessages {
		s.recordMsg(history.MsgDrop, it.id, s.nodes[it.from].name, to.name, it.msg.Type(), reason)
	}
}

// counters are the run's message and operation counts, kept in fields
// and small maps keyed by constant strings, so that counting allocates
// nothing; snapshot turns them into the end event's counters.
type counters struct {
	sent, delivered, dropped, duplicated, corrupted, steps int64

	sentBy, dropBy, corruptBy, ops, other map[string]int64
}

func newCounters() counters {
	return counters{sentBy: map[string]int64{}, dropBy: map[string]int64{}, corruptBy: map[string]int64{},
		ops: map[string]int64{}, other: map[string]int64{}}
}

// snapshot returns the counters under the real harness's keys, present
// only once counted, as the real harness's are.
func (c *counters) snapshot() map[string]int64 {
	out := map[string]int64{}
	put := func(k string, v int64) {
		if v != 0 {
			out[k] = v
		}
	}
	put(history.CountSent, c.sent)
	put(history.CountDelivered, c.delivered)
	put(history.CountDropped, c.dropped)
	put(history.CountDuplicated, c.duplicated)
	put(history.CountCorrupted, c.corrupted)
	for _, g := range []struct {
		prefix string
		m      map[string]int64
	}{{history.CountSent + ".", c.sentBy}, {history.CountDropped + ".", c.dropBy}, {history.CountCorrupted + ".", c.corruptBy}, {"ops.", c.ops}, {"", c.other}} {
		keys := make([]string, 0, len(g.m))
		for k := range g.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			put(g.prefix+k, g.m[k])
		}
	}
	return out
}
