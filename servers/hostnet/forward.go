package hostnet

import (
	"time"

	"github.com/coupharness/coup/nemesis"
)

// maxPacket bounds a packet read from a TUN device (its MTU is smaller).
const maxPacket = 65535

// MaxBacklog is how far behind a link under a bandwidth fault may fall:
// a packet that would leave later than this is dropped (the Policy is
// told so: nemesis.Msg.Queue).
const MaxBacklog = 200 * time.Millisecond

// read forwards every packet host h sends out, until the network closes:
// to its destination host, or to every other host for a multicast or
// broadcast destination, each copy on its own link's fate.
func (n *Network) read(h *Host) {
	defer n.wg.Done()
	buf := make([]byte, maxPacket)
	for {
		k, err := h.tun.Read(buf)
		if err != nil {
			select {
			case <-n.done:
				return
			default:
			}
			if k == 0 {
				// A TUN read fails only as the device goes: a short wait
				// keeps a device in trouble from spinning a core.
				time.Sleep(time.Millisecond)
				continue
			}
		}
		p, ok := parse(buf[:k])
		if !ok {
			n.notIPv4.Add(1)
			continue
		}
		if to, ok := n.byIP[p.dst]; ok {
			if to != h {
				n.forward(h, to, p, false)
			}
			continue
		}
		if !p.dst.IsMulticast() && p.dst != broadcast && p.dst != subnetBroadcast {
			n.unrouted.Add(1)
			continue
		}
		for _, to := range n.hosts {
			if to != h {
				n.forward(h, to, p, true)
			}
		}
	}
}

// The broadcast addresses: every host's.
var (
	broadcast       = netipAddr4(255, 255, 255, 255)
	subnetBroadcast = netipAddr4(10, 77, 0, 255)
)

// forward carries one packet from h to to, as its link's fate says. The
// packet's bytes are the reader's buffer: whatever is written later is
// copied first. shared marks a packet sent to more than one host.
func (n *Network) forward(h, to *Host, p packet, shared bool) {
	ln := n.links[h.i][to.i]
	seq := n.seq.Add(1)
	proto := protoName(p.proto)
	f := n.cfg.Policy.Packet(nemesis.Msg{Link: ln.l, Type: proto, Body: p.b[p.payload:], Size: len(p.b), Queue: MaxBacklog})
	switch {
	case f.Cut == nemesis.Refuse:
		ln.refused.Add(1)
		ln.droppedBytes.Add(int64(len(p.b)))
		if shared {
			return // a multicast is never answered
		}
		answer, what := resetFor(p), "tcp reset"
		if answer == nil && p.proto != protoTCP {
			answer, what = unreachableFor(p), "icmp unreachable"
		}
		if answer == nil {
			return
		}
		n.event(Event{Kind: EventRefuse, Link: ln.l, Packet: seq, Proto: proto, Detail: what})
		h.wire.write(answer)
		return
	case f.Cut != nemesis.NoCut:
		ln.cut.Add(1)
		ln.droppedBytes.Add(int64(len(p.b)))
		return
	case f.Drop && f.Reason == nemesis.DropOverflow:
		ln.overflow.Add(1)
		ln.droppedBytes.Add(int64(len(p.b)))
		return
	case f.Drop:
		ln.lost.Add(1)
		ln.droppedBytes.Add(int64(len(p.b)))
		return
	}
	copies := f.Copies
	if len(copies) == 0 {
		copies = []nemesis.Copy{{}}
	}
	now := time.Now()
	for i, c := range copies {
		b := p.b
		if c.Body != nil && len(c.Body) == len(p.b)-p.payload {
			b = append([]byte(nil), p.b...)
			copy(b[p.payload:], c.Body)
			q := p
			q.b = b
			fixTransport(q)
			ln.corrupted.Add(1)
			n.event(Event{Kind: EventCorrupt, Link: ln.l, Packet: seq, Proto: proto, Detail: c.Corrupt})
		}
		if i > 0 {
			ln.duplicated.Add(1)
		}
		ln.packets.Add(1)
		ln.bytes.Add(int64(len(b)))
		if c.Delay <= 0 {
			to.wire.write(b)
			continue
		}
		ln.delayed.Add(1)
		if &b[0] == &p.b[0] {
			b = append([]byte(nil), b...)
		}
		to.wire.at(now.Add(c.Delay), b)
	}
}

func (n *Network) event(e Event) {
	if n.cfg.Events != nil {
		n.cfg.Events(e)
	}
}

// Counts is what a network did, per link and in all.
type Counts struct {
	// Links are the counts of each directed link that carried or dropped
	// anything.
	Links map[nemesis.Link]LinkCounts
	// Unrouted counts packets to an address no host has (dropped);
	// NotIPv4 counts what was not IPv4 (dropped: the network is IPv4's).
	Unrouted, NotIPv4 int64
}

// LinkCounts is what a network did on one directed link.
type LinkCounts struct {
	// Packets and Bytes are what was delivered, duplicates included;
	// Bytes are whole IP packets', headers and all.
	Packets, Bytes int64
	// Cut counts the packets dropped by a stalled cut, Refused those
	// answered by a refused one, Lost those dropped by a loss, Overflow
	// those dropped by a bandwidth fault's full queue.
	Cut, Refused, Lost, Overflow int64
	// DroppedBytes are the whole packets' bytes of those four.
	DroppedBytes int64
	// Delayed, Duplicated and Corrupted count deliveries so treated.
	Delayed, Duplicated, Corrupted int64
}

// Total is the sum of every link's counts.
func (c Counts) Total() LinkCounts {
	var t LinkCounts
	for _, l := range c.Links {
		t.Packets += l.Packets
		t.Bytes += l.Bytes
		t.Cut += l.Cut
		t.Refused += l.Refused
		t.Lost += l.Lost
		t.Overflow += l.Overflow
		t.DroppedBytes += l.DroppedBytes
		t.Delayed += l.Delayed
		t.Duplicated += l.Duplicated
		t.Corrupted += l.Corrupted
	}
	return t
}

// Counts is what the network has done so far.
func (n *Network) Counts() Counts {
	out := Counts{Links: map[nemesis.Link]LinkCounts{}, Unrouted: n.unrouted.Load(), NotIPv4: n.notIPv4.Load()}
	for _, row := range n.links {
		for _, ln := range row {
			if ln == nil {
				continue
			}
			c := ln.counts()
			if c != (LinkCounts{}) {
				out.Links[ln.l] = c
			}
		}
	}
	return out
}

// Reset sets every count back to zero (a Session's next episode counts
// anew).
func (n *Network) Reset() {
	n.unrouted.Store(0)
	n.notIPv4.Store(0)
	for _, row := range n.links {
		for _, ln := range row {
			if ln != nil {
				ln.reset()
			}
		}
	}
}
