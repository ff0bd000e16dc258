package hostnet

import (
	"fmt"
	"time"

	"github.com/coupharness/coup/nemesis"
)

// Cut is how a directed link is cut.
type Cut int

const (
	// None: the packet meets the fate Policy.Packet gives it.
	None Cut = iota
	// Stall drops every packet on the link, a SYN as any other: the
	// sender hears nothing and retransmits until the heal or its own
	// timeout.
	Stall
	// Refuse drops every packet on the link and answers it as a host
	// that refuses would: a TCP segment with a reset, anything else with
	// an ICMP destination unreachable.
	Refuse
)

// String names the cut as the history does.
func (c Cut) String() string {
	switch c {
	case None:
		return "none"
	case Stall:
		return "stall"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("Cut(%d)", int(c))
}

// Fate is what becomes of one packet on a link. The zero Fate delivers
// it at once, unaltered.
type Fate struct {
	// Cut, when not None, drops the packet (and Refuse answers it); the
	// rest of the fate is then not looked at.
	Cut Cut
	// Lost drops the packet (a loss).
	Lost bool
	// Rate, when above 0, limits the link to that many bytes a second:
	// the packet leaves once the link has sent what came before it at
	// that rate (its copies' delays count from then), and is dropped
	// when that is more than MaxBacklog away, as by a full router
	// queue.
	Rate float64
	// Copies are the deliveries when the packet is neither cut nor lost:
	// the packet itself first, then any duplicates. None at all means
	// one, at once, unaltered.
	Copies []Copy
}

// Copy is one delivery of a packet.
type Copy struct {
	// Delay is how long after it was read the copy is delivered. Copies
	// due at the same moment on one link keep the order they were read in.
	Delay time.Duration
	// Payload, when not nil, is the transport payload delivered instead of
	// the packet's (a corruption), of the same length; the transport's
	// checksum is recomputed over it, so that it reaches the application.
	Payload []byte
	// How says how Payload was altered, for the event.
	How string
}

// Policy is the driver's side of the network: the nemesis's view of each
// link. It is asked about every packet, from the goroutine that read it
// (one per host), so it does its own locking and answers quickly; it
// must not call back into the network.
type Policy interface {
	// Packet decides the fate of a packet on l: proto names its protocol
	// ("tcp", "udp", "icmp", "vrrp", "ip"), and payload is its transport
	// payload, valid only during the call and not to be changed (a
	// corruption returns an altered copy).
	Packet(l nemesis.Link, proto string, payload []byte) Fate
}

// PolicyFunc is a Policy of one function.
type PolicyFunc func(l nemesis.Link, proto string, payload []byte) Fate

// Packet calls the function.
func (f PolicyFunc) Packet(l nemesis.Link, proto string, payload []byte) Fate {
	return f(l, proto, payload)
}

// The kinds of Event.
const (
	// EventRefuse: a packet on a refused link was answered with a reset
	// or an ICMP unreachable; Detail says which.
	EventRefuse = "refuse"
	// EventCorrupt: a packet was delivered with its payload altered;
	// Detail is Copy.How. It is emitted before the packet is written.
	EventCorrupt = "corrupt"
)

// Event is something the network did to one packet that the history
// should record (drops by a cut or a loss are only counted: there may be
// thousands a second).
type Event struct {
	// Kind is one of the Event constants.
	Kind string
	// Link is the packet's.
	Link nemesis.Link
	// Packet numbers the packet among those the network read, from 1.
	Packet uint64
	// Proto is the packet's protocol, as Policy.Packet is told.
	Proto string
	// Detail says more, in words.
	Detail string
}
