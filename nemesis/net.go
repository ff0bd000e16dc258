package nemesis

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Link is one direction between two nodes.
type Link struct{ From, To string }

// Msg is what the net sees of a message: its link, its type and its body
// bytes (which a joker or a corruption may alter).
type Msg struct {
	Link
	Type string
	Body []byte
	// Size is how many bytes the message takes on the link, for a
	// bandwidth fault: its body's, a whole packet's. Only a carrier that
	// Net.Sized asks it of need set it.
	Size int
	// Queue, when above 0, is the longest a message may wait behind a
	// bandwidth fault's rate (or the time MinQueue bytes take, if longer):
	// one that would wait longer is dropped (DropOverflow), as by a full
	// router queue. A packet carrier sets
	// it; a stream is held back by TCP instead, and a message by the
	// carrier's own bounds.
	Queue time.Duration
	// Port, when set, is the link's state as Net.Port returned it: a
	// carrier that numbers its links looks each up once, and a fate then
	// costs no lookup by the nodes' names (a map keyed by two strings).
	Port *Port
}

// MinQueue is the fewest bytes a bounded queue (Msg.Queue) holds at a
// bandwidth fault's rate: four of the largest IP packets, so that a slow
// link's queue never holds less than a packet or two.
const MinQueue = 4 << 16

// Port is one link's state in the net: the latest delivery due on it, and
// when it has sent what a bandwidth fault let it (a token bucket, kept as
// the time its last byte leaves).
type Port struct{ last, free time.Duration }

// rule is a link fault in force.
type rule struct {
	name  string
	kind  Kind
	links selector
	// cut is a partition's set of cut links; refuse says how a stream
	// is cut (Refuse rather than Stall).
	cut    map[Link]bool
	refuse bool
	p      float64
	delay  time.Duration
	scale  time.Duration
	dist   Distribution
	mode   Mode
	delta  time.Duration
	// rate and burst are a bandwidth fault's bytes a second and bytes.
	rate  float64
	burst int64
}

// selector picks the links of some nodes in a direction.
type selector struct {
	nodes map[string]bool
	dir   Direction
}

func newSelector(nodes []string, dir Direction) selector {
	s := selector{nodes: map[string]bool{}, dir: dir}
	for _, n := range nodes {
		s.nodes[n] = true
	}
	return s
}

func (s selector) covers(l Link) bool {
	switch s.dir {
	case Out:
		return s.nodes[l.From]
	case In:
		return s.nodes[l.To]
	}
	return s.nodes[l.From] || s.nodes[l.To]
}

// Net is the network's behaviour on every link: the base latency, jitter and
// order, and the link faults in force. It draws every random choice from the
// source it was given, in an order fixed by the messages it is asked about,
// so the same seed and the same messages give the same fates. It is not
// safe for concurrent use; the driver serialises calls.
type Net struct {
	// Latency is the base one-way delay.
	Latency time.Duration
	// Jitter adds a uniform random delay in [0, Jitter).
	Jitter time.Duration
	// FIFO keeps each link in order: a message is never delivered before
	// one sent earlier on the same link. A link under a delay fault is not
	// kept in order.
	FIFO bool
	// Spread, when set, places each copy's jitter: the fraction of Jitter,
	// in [0, 1), that a message on the link gets, instead of a draw from
	// the net's stream (see Config.Spread).
	Spread func(l Link) float64

	rng *rand.Rand
	// last is each link's state, in a cell of its own, so that a copy
	// looks its link up once for reading and noting it (or never, when
	// the carrier hands it over: Msg.Port).
	last map[Link]*Port
	// floor is the latest delivery time of the copies decided by the
	// plain path (see DecideInto), which notes no link: every link counts
	// as having a delivery due then.
	floor time.Duration
	max   time.Duration // the latest time noted on any link
	rules []*rule
}

// NewNet returns a network drawing its random choices from rng.
func NewNet(latency, jitter time.Duration, fifo bool, rng *rand.Rand) *Net {
	return &Net{Latency: latency, Jitter: jitter, FIFO: fifo, rng: rng, last: map[Link]*Port{}}
}

func (n *Net) add(r *rule) { n.rules = append(n.rules, r) }

func (n *Net) remove(name string) {
	n.rules = slices.DeleteFunc(n.rules, func(r *rule) bool { return r.name == name })
}

// Decide returns the fate of a message sent at now. The rules apply in this
// order:
//
//  1. a timely link (a timely fault in force covers it) delivers one copy
//     within the fault's delta; only a joker still alters it;
//  2. a partition that cuts the link drops it;
//  3. each loss fault covering the link drops it with its probability;
//  4. each duplicate fault adds a copy with its probability;
//  5. the tightest bandwidth fault covering the link makes the message
//     wait for the link (Msg.Size bytes at its rate), or drops it when
//     the wait is longer than Msg.Queue;
//  6. each copy gets the base delay (latency plus jitter), the wait, and
//     every delay fault's; the link keeps FIFO order unless a delay
//     fault covers it;
//  7. a joker sender alters the copy's payload (and its sum is redone);
//     each corrupt fault alters it with its probability.
func (n *Net) Decide(m Msg, now time.Duration) Fate { return n.DecideInto(nil, m, now) }

// DecideInto is Decide with the copies in buf's array when it is large
// enough: a driver that is done with each fate before it asks for the next
// (the simulator) reuses one buffer and allocates nothing.
func (n *Net) DecideInto(buf []Copy, m Msg, now time.Duration) Fate {
	if len(n.rules) == 0 && n.Jitter <= 0 && now+n.Latency >= n.floor && now+n.Latency >= n.latest() {
		// The plain path: no fault in force, no jitter, and no copy on any
		// link due later than this one, so the copy keeps every link's
		// order with the base latency and nothing need be noted per link.
		n.floor = now + n.Latency
		return Fate{Copies: append(buf[:0], Copy{Delay: n.Latency})}
	}
	l := m.Link
	if t := n.timely(l); t != nil {
		d := min(n.base(l), t.delta)
		cell := n.port(m)
		if n.FIFO {
			if at, last := now+d, n.lastOn(cell); at < last && last-now <= t.delta {
				d = last - now
			}
		}
		n.note(cell, now+d)
		c := Copy{Delay: d}
		n.alter(&c, m, true)
		return Fate{Copies: append(buf[:0], c)}
	}
	for _, r := range n.rules {
		if r.kind == Partition && r.cut[l] {
			return Fate{Drop: true, Reason: DropPartition, Cut: n.Cut(l)}
		}
	}
	for _, r := range n.rules {
		if r.kind == Loss && r.links.covers(l) && n.rng.Float64() < r.p {
			return Fate{Drop: true, Reason: DropLoss}
		}
	}
	copies := 1
	for _, r := range n.rules {
		if r.kind == Duplicate && r.links.covers(l) && n.rng.Float64() < r.p {
			copies++
		}
	}
	reorder := false
	var limit *rule // the tightest bandwidth fault on the link
	for _, r := range n.rules {
		switch {
		case r.kind == Delay && r.links.covers(l):
			reorder = true
		case r.kind == Bandwidth && r.links.covers(l) && (limit == nil || r.rate < limit.rate):
			limit = r
		}
	}
	cell := n.port(m)
	var wait time.Duration
	if limit != nil {
		// The link's token bucket: the message leaves once the link has
		// sent what came before it, and is delivered as its last byte
		// is; every copy waits as long (the link sent it once).
		var ok bool
		if wait, ok = cell.take(limit, m.Size, now, m.Queue); !ok {
			return Fate{Drop: true, Reason: DropOverflow}
		}
	}
	f := Fate{Copies: slices.Grow(buf[:0], copies)[:copies]}
	for i := range f.Copies {
		d := n.base(l) + wait
		for _, r := range n.rules {
			if r.kind == Delay && r.links.covers(l) {
				d += r.draw(n.rng)
			}
		}
		d = max(d, 0)
		if last := n.lastOn(cell); n.FIFO && !reorder && now+d < last {
			d = last - now
		}
		n.note(cell, now+d)
		c := Copy{Delay: d, Duplicate: i > 0}
		n.alter(&c, m, false)
		f.Copies[i] = c
	}
	return f
}

// Cut is how the partitions in force cut l: Refuse when any that cuts it
// refuses, Stall when they all stall, NoCut when none cuts it. A stream
// driver holds or resets the bytes of a cut direction instead of asking
// Decide of each chunk.
func (n *Net) Cut(l Link) CutKind {
	cut := NoCut
	for _, r := range n.rules {
		if r.kind == Partition && r.cut[l] {
			if r.refuse {
				return Refuse
			}
			cut = Stall
		}
	}
	return cut
}

// Alters reports whether Decide may alter the body of a message on l: a
// joker or a corruption covers the link. A driver that keeps messages as
// values (the simulator) encodes a body only when it may be altered; the
// fates do not depend on the body otherwise.
func (n *Net) Alters(l Link) bool {
	for _, r := range n.rules {
		if (r.kind == Joker || r.kind == Corrupt) && r.links.covers(l) {
			return true
		}
	}
	return false
}

// Sized reports whether Decide needs the size of a message on l
// (Msg.Size): a bandwidth fault covers the link. A driver that makes a
// message's bytes only when asked (the simulator) makes them then.
func (n *Net) Sized(l Link) bool {
	for _, r := range n.rules {
		if r.kind == Bandwidth && r.links.covers(l) {
			return true
		}
	}
	return false
}

// take is how long a message of size bytes sent at now waits for the link
// whose state c is, under the bandwidth fault r: the link sends r.rate
// bytes a second, and an idle one r.burst bytes at once (it is as if it
// had finished sending burst/rate ago). It is not ok, and the link sends
// nothing, when the message would wait longer than queue to leave, or
// than MinQueue bytes take, whichever is longer (queue 0: any time).
func (c *Port) take(r *rule, size int, now, queue time.Duration) (time.Duration, bool) {
	perByte := float64(time.Second) / r.rate
	start := max(c.free, now-time.Duration(float64(r.burst)*perByte))
	if queue > 0 && start-now > max(queue, time.Duration(MinQueue*perByte)) {
		return 0, false
	}
	c.free = start + time.Duration(float64(size)*perByte)
	return max(c.free-now, 0), true
}

// timely returns the timely fault covering l, if any.
func (n *Net) timely(l Link) *rule {
	for _, r := range n.rules {
		if r.kind == Timely && r.links.covers(l) {
			return r
		}
	}
	return nil
}

func (n *Net) base(l Link) time.Duration {
	d := n.Latency
	switch {
	case n.Jitter <= 0:
	case n.Spread != nil:
		f := min(max(n.Spread(l), 0), 1)
		d += min(time.Duration(f*float64(n.Jitter)), n.Jitter-1)
	default:
		d += time.Duration(n.rng.Int64N(int64(n.Jitter)))
	}
	return d
}

// Port is l's state, made (no delivery due yet) if l has none. A carrier
// may keep it and hand it back with each message on l (Msg.Port).
func (n *Net) Port(l Link) *Port {
	c := n.last[l]
	if c == nil {
		c = new(Port)
		n.last[l] = c
	}
	return c
}

// port is m's link's state: the one m carries, or the one looked up.
func (n *Net) port(m Msg) *Port {
	if m.Port != nil {
		return m.Port
	}
	return n.Port(m.Link)
}

// note notes a delivery due at on the link whose state c is.
func (n *Net) note(c *Port, at time.Duration) {
	if at > c.last {
		c.last = at
	}
	n.max = max(n.max, at)
}

// latest is the latest delivery time noted on any link.
func (n *Net) latest() time.Duration { return n.max }

// lastOn is the latest delivery time due on the link whose state c is:
// its own, or the plain path's, which counts for every link.
func (n *Net) lastOn(c *Port) time.Duration { return max(c.last, n.floor) }

// alter applies jokers and, unless the link is timely, corruptions.
func (n *Net) alter(c *Copy, m Msg, timely bool) {
	body := m.Body
	var how []string
	for _, r := range n.rules {
		if r.kind == Joker && r.links.covers(m.Link) {
			if b, ok := AlterField(body, "payload", n.rng); ok {
				body, c.Resum = b, true
				how = append(how, string(Joker))
			}
			break
		}
	}
	if !timely {
		for _, r := range n.rules {
			if r.kind != Corrupt || !r.links.covers(m.Link) || n.rng.Float64() >= r.p {
				continue
			}
			switch r.mode {
			case Mutate:
				if b, ok := MutateField(body, n.rng); ok {
					body = b
					how = append(how, string(Mutate))
				}
			default:
				body = FlipBit(body, n.rng)
				how = append(how, string(BitFlip))
			}
			c.Resum = false // altered on the wire after the sender summed it
		}
	}
	if len(how) > 0 {
		c.Body = body
		c.Corrupt = joinHow(how)
	}
}

func joinHow(how []string) string {
	s := how[0]
	for _, h := range how[1:] {
		s += "+" + h
	}
	return s
}

// draw is a delay fault's delay for one message.
func (r *rule) draw(rng *rand.Rand) time.Duration {
	x := 0.0
	scale := float64(r.scale)
	switch r.dist {
	case Normal:
		x = rng.NormFloat64() * scale
	case Exponential:
		x = rng.ExpFloat64() * scale
	default:
		if r.scale > 0 {
			x = float64(rng.Int64N(int64(r.scale)))
		}
	}
	d := float64(r.delay) + x
	if d < 0 {
		return 0
	}
	return time.Duration(math.Min(d, float64(math.MaxInt64/2)))
}
