package hostnet

import (
	"net/netip"
	"sync/atomic"

	"github.com/coupharness/coup/nemesis"
)

// link is one directed link's counters, kept without a lock: each is
// added to by the one goroutine that reads the link's sender.
type link struct {
	l nemesis.Link
	packets, bytes, cut, refused, lost, overflow,
	delayed, duplicated, corrupted, droppedBytes atomic.Int64
}

func (ln *link) counts() LinkCounts {
	return LinkCounts{Packets: ln.packets.Load(), Bytes: ln.bytes.Load(), Cut: ln.cut.Load(), Refused: ln.refused.Load(),
		Lost: ln.lost.Load(), Overflow: ln.overflow.Load(), Delayed: ln.delayed.Load(), Duplicated: ln.duplicated.Load(), Corrupted: ln.corrupted.Load(), DroppedBytes: ln.droppedBytes.Load()}
}

func (ln *link) reset() {
	for _, c := range []*atomic.Int64{&ln.packets, &ln.bytes, &ln.cut, &ln.refused, &ln.lost, &ln.overflow, &ln.delayed, &ln.duplicated, &ln.corrupted, &ln.droppedBytes} {
		c.Store(0)
	}
}

func netipAddr4(a, b, c, d byte) netip.Addr { return netip.AddrFrom4([4]byte{a, b, c, d}) }
