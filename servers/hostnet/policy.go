package hostnet

import "github.com/coupharness/coup/nemesis"

// Policy is the driver's side of the network: the nemesis's view of each
// link. It is asked about every packet, from the goroutine that read it
// (one per host), so it does its own locking and answers quickly; it
// must not call back into the network.
//
// Its answer is the nemesis's own Fate, taken as it is: a cut drops the
// packet (Stall) or answers it (Refuse); any other drop is a loss, or a
// bandwidth fault's full queue (nemesis.DropOverflow); each copy is a
// delivery after its delay (a bandwidth fault's wait is in it), with
// Body, when set, the transport payload delivered instead (of the same
// length; the transport's checksum is recomputed over it, so that it
// reaches the application). Copies due at one moment on a link keep the
// order they were read in; a Fate with none delivers the packet at once.
type Policy interface {
	// Packet decides the fate of a packet: m.Link is its link, m.Type
	// names its protocol ("tcp", "udp", "icmp", "vrrp", "ip"), m.Size is
	// the whole IP packet's length, m.Queue MaxBacklog, and m.Body its
	// transport payload, valid only during the call and not to be
	// changed (a corruption returns an altered copy).
	Packet(m nemesis.Msg) nemesis.Fate
}

// PolicyFunc is a Policy of one function.
type PolicyFunc func(m nemesis.Msg) nemesis.Fate

// Packet calls the function.
func (f PolicyFunc) Packet(m nemesis.Msg) nemesis.Fate { return f(m) }

// The kinds of Event.
const (
	// EventRefuse: a packet on a refused link was answered with a reset
	// or an ICMP unreachable; Detail says which.
	EventRefuse = "refuse"
	// EventCorrupt: a packet was delivered with its payload altered;
	// Detail is the copy's Corrupt. It is emitted before the packet is written.
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
