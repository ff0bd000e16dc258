package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/wire"
)

// send handles a message a node sends: it is numbered, recorded, its fate
// decided by the nemesis, and each copy queued for its delivery. The
// message travels as a Go value; its bytes are made only when the nemesis
// may alter them, or a bandwidth fault counts them (or with RoundTrip).
func (s *Sim) send(from *node, to string, m nodes.Msg) {
	// The receiver by name: a scan of a few nodes, not a map's hash.
	dest := s.node(to)
	if dest == nil {
		s.logf("%s: sent %s to %q, which is no node; ignored", from.name, m.Type(), to)
		return
	}
	to = dest.name
	mtype := m.Type()
	s.msgID++
	id := s.msgID
	// Counting: a field and a tally of a few types, no map.
	s.cnt.sent++
	s.cnt.sentBy.add(mtype, 1)
	if s.cfg.RecordMessages {
		s.recordMsg(history.MsgSend, id, from.name, to, mtype, "")
	}
	link := nemesis.Link{From: from.name, To: to}
	var body []byte
	if s.cfg.RoundTrip || s.nem.Alters(link) || s.nem.Sized(link) {
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
	// The fate: the nemesis's network, handed the link's state that the
	// first message on it looked up (no lookup by two names), and the
	// buffer of the last fate (no allocation).
	fate := s.nem.DecideInto(s.copies, nemesis.Msg{Link: link, Type: mtype, Body: body, Size: len(body), Port: s.port(from, dest, link)}, s.now)
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
		s.cnt.corruptBy.add(it.x.how, 1)
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
	if s.inputs != nil { // the floor's capture: an input of 150 bytes made only then
		s.capture(input{kind: inReceive, node: n.index, from: from, msg: m})
	}
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
	if n.s.inputs != nil { // the floor's capture: an input of 150 bytes made only then
		n.s.capture(input{kind: inReceive, node: n.index, from: env.Src, msg: m})
	}
	n.call(func() { n.m.Receive(env.Src, m) })
}

// drop records a copy that never reaches its receiver.
func (s *Sim) drop(it *item, to *node, reason string) {
	s.cnt.dropped++
	s.cnt.dropBy.add(reason, 1)
	if s.cfg.RecordMessages {
		s.recordMsg(history.MsgDrop, it.id, s.nodes[it.from].name, to.name, it.msg.Type(), reason)
	}
}

// port is the network's state of the link from → to, looked up by name
// once a run and kept by the nodes' numbers.
func (s *Sim) port(from, to *node, l nemesis.Link) *nemesis.Port {
	i := int(from.index)*len(s.nodes) + int(to.index)
	if s.ports == nil {
		s.ports = make([]*nemesis.Port, len(s.nodes)*len(s.nodes))
	}
	p := s.ports[i]
	if p == nil {
		p = s.nem.Port(l)
		s.ports[i] = p
	}
	return p
}

// node is the node named name, or nil: a scan, for the few nodes of most
// clusters (a string compared to itself costs no more than its length),
// and the map beyond them.
func (s *Sim) node(name string) *node {
	if len(s.nodes) > 16 {
		return s.byName[name]
	}
	for _, n := range s.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

// counters are the run's message and operation counts, kept in fields
// and tallies of a few constant strings, so that counting allocates
// nothing and hashes nothing; snapshot turns them into the end event's
// counters.
type counters struct {
	sent, delivered, dropped, duplicated, corrupted, steps int64

	sentBy, dropBy, corruptBy, ops, other tally
}

// tally counts by key, for a handful of keys (message types, drop
// reasons, operation types): a slice searched in order.
type tally []tallied

type tallied struct {
	key string
	n   int64
}

func (t *tally) add(key string, n int64) {
	for i := range *t {
		if (*t)[i].key == key {
			(*t)[i].n += n
			return
		}
	}
	*t = append(*t, tallied{key, n})
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
		t      tally
	}{{history.CountSent + ".", c.sentBy}, {history.CountDropped + ".", c.dropBy}, {history.CountCorrupted + ".", c.corruptBy}, {"ops.", c.ops}, {"", c.other}} {
		t := slices.Clone(g.t)
		slices.SortFunc(t, func(a, b tallied) int { return strings.Compare(a.key, b.key) })
		for _, k := range t {
			put(g.prefix+k.key, k.n)
		}
	}
	return out
}
