package servers

import (
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/servers/hostnet"
)

// Link counters over time: what each directed link carried, recorded
// once a second as link events (history.KindLink) for the report's links
// view.
//
// On the proxies' network the counts are taken where each chunk's fate is
// decided (policy.Chunk, under the driver's lock it already holds, so a
// chunk costs a map lookup and two additions, and no lock of its own): a
// chunk passed on counts in bytes (its payload) and chunks, one a loss
// holds in dropped bytes. A chunk held by a stall is decided, and
// counted, when the stall ends; one on a refused link is never decided,
// nor counted. So a cut link reads as nothing carried, and its held bytes
// as a burst at the heal. What came before the run's zero is forgotten.
//
// On coup's packet network the events are the differences between
// successive readings of the network's own counters (hostnet.Counts):
// whole IP packets, headers and all, as delivered (duplicates included),
// and those a cut, a loss or a full queue dropped. The end event's
// net.bytes is the last of those readings, so the links view's bytes and
// the counts' are the same bytes: the first event also holds what crossed
// before the run's zero (the servers' start), as the counts do.

// linkPeriod is how often the counters are recorded.
const linkPeriod = time.Second

// linkCount is one link's counts since they were last recorded: bytes and
// the chunks or packets that carried them, passed on and dropped.
type linkCount struct {
	bytes, carriers, dropped, droppedCarriers int64
}

// linkCounts are the counts of every link since the last record, guarded
// by the driver's lock (run.mu).
type linkCounts struct {
	n    map[nemesis.Link]*linkCount
	last time.Duration // when they were last recorded (run.Now)
	// unit is what carries the bytes: history.LinkChunks (the proxies',
	// the default) or history.LinkPackets.
	unit string
	// net is, on coup's packet network, its counters as last recorded
	// (empty: none since the network was made or reset).
	net hostnet.Counts
}

// count adds a chunk (or a packet) of n bytes to the link's counts: passed
// on, or dropped. The caller holds run.mu.
func (c *linkCounts) count(l nemesis.Link, n int, dropped bool) {
	lc := c.n[l]
	if lc == nil {
		if c.n == nil {
			c.n = map[nemesis.Link]*linkCount{}
		}
		lc = &linkCount{}
		c.n[l] = lc
	}
	if dropped {
		lc.dropped += int64(n)
		lc.droppedCarriers++
		return
	}
	lc.bytes += int64(n)
	lc.carriers++
}

// take returns the counts since the last take, and how long that was, and
// starts anew from now.
func (c *linkCounts) take(now time.Duration) (map[nemesis.Link]*linkCount, time.Duration) {
	n, span := c.n, now-c.last
	c.n, c.last = nil, now
	return n, span
}

// startLinkCounts records the links' counts every linkPeriod until the run
// stops (with the polls: run.polls); recordLinks records the rest at the
// end.
func (r *run) startLinkCounts() {
	r.restartLinkCounts(r.Now()) // what came before the run's zero is the start's
	r.polls.Add(1)
	go func() {
		defer r.polls.Done()
		t := time.NewTicker(linkPeriod)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				r.recordLinks()
			}
		}
	}()
}

// recordLinks records a link event for every link that carried or dropped
// anything since the last, in the order of the links' names. Between a
// Session's episodes they are dropped (observed).
func (r *run) recordLinks() {
	r.mu.Lock()
	counts, span := r.links.take(r.Now())
	unit := r.links.unit
	if r.net != nil {
		counts = r.links.fromNetwork(r.net.Counts())
	}
	r.mu.Unlock()
	if unit == "" {
		unit = history.LinkChunks
	}
	links := make([]nemesis.Link, 0, len(counts))
	for l := range counts {
		links = append(links, l)
	}
	slices.SortFunc(links, func(a, b nemesis.Link) int {
		if a.From != b.From {
			return strings.Compare(a.From, b.From)
		}
		return strings.Compare(a.To, b.To)
	})
	for _, l := range links {
		c := counts[l]
		e := history.Event{Kind: history.KindLink, Src: l.From, Dest: l.To, Counts: map[string]int64{history.LinkSpan: int64(span), history.LinkBytes: c.bytes}}
		if c.carriers > 0 {
			e.Counts[unit] = c.carriers
		}
		if c.dropped > 0 {
			e.Counts[history.LinkDroppedBytes] = c.dropped
		}
		if c.droppedCarriers > 0 && unit == history.LinkPackets {
			e.Counts[history.LinkDroppedPackets] = c.droppedCarriers
		}
		r.observed(e)
	}
}

// restartLinkCounts forgets the counts since the last record, and counts
// from at on (a time on the run's clock): the run's zero, or a Session's
// episode's, which begins at a new zero.
func (r *run) restartLinkCounts(at time.Duration) {
	r.mu.Lock()
	r.links.take(at)
	r.links.net = hostnet.Counts{} // the packet network counts from its making or its last reset
	r.mu.Unlock()
}

// fromNetwork is what each link of coup's packet network carried and
// dropped since its counters were last recorded, and records now as the
// last. The caller holds run.mu.
func (c *linkCounts) fromNetwork(now hostnet.Counts) map[nemesis.Link]*linkCount {
	out := map[nemesis.Link]*linkCount{}
	for l, n := range now.Links {
		p := c.net.Links[l]
		lc := &linkCount{bytes: n.Bytes - p.Bytes, carriers: n.Packets - p.Packets, dropped: n.DroppedBytes - p.DroppedBytes,
			droppedCarriers: n.Cut + n.Refused + n.Lost + n.Overflow - (p.Cut + p.Refused + p.Lost + p.Overflow)}
		if *lc != (linkCount{}) {
			out[l] = lc
		}
	}
	c.net = now
	return out
}

// lastNetCounts is coup's packet network's counters as the link events
// last recorded them (the end event's, so that both count the same
// bytes), or as they are when none was recorded.
func (r *run) lastNetCounts() hostnet.Counts {
	r.mu.Lock()
	c := r.links.net
	r.mu.Unlock()
	if c.Links == nil {
		c = r.net.Counts()
	}
	return c
}
