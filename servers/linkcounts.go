package servers

import (
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
)

// Link counters over time: what the proxies passed on, per directed link,
// recorded once a second as link events (history.KindLink) for the
// report's links view. The counts are taken where each chunk's fate is
// decided (policy.Chunk, under the driver's lock it already holds, so a
// chunk costs a map lookup and two additions, and no lock of its own): a chunk passed on
// counts in bytes and chunks, one a loss holds in dropped bytes. A chunk
// held by a stall is decided, and counted, when the stall ends; one on a
// refused link is never decided, nor counted. So a cut link reads as
// nothing carried, and its held bytes as a burst at the heal. A network
// that carries packets counts each packet the same way (count, with the
// unit set to history.LinkPackets): passed on, or dropped by a cut or a
// loss; its events then count packets and dropped packets.

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
	r.mu.Unlock()
}
