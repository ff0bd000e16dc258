package proxy

import "github.com/coupharness/coup/nemesis"

// Policy is the driver's side of the proxy: the nemesis's view of each
// link. The proxy calls it from many goroutines at once, on the hot path
// of every chunk, so it does its own locking and answers quickly; it must
// not call back into the proxy.
//
// Its answers are the nemesis's own: a nemesis.CutKind for a link (Stall
// holds every chunk read on it, in order, until Changed finds it no longer
// cut; Refuse resets every connection that carries it, in either
// direction, and refuses new connections across it), and a nemesis.Fate
// for a chunk. A chunk's fate that drops it holds it (a loss: a stream
// drops nothing from its middle), and if it is still held
// Config.LossReset after its fate was decided, its connection is reset;
// Changed asks the policy again for a held lost chunk's fate, and a fate
// that does not drop releases it. Otherwise its first copy says when and
// what is written (a stream has no duplicates): Delay counted from when it
// was read (order on the connection's direction is always kept: a chunk is
// never written before one read earlier), and Body, when not nil, written
// instead (a corruption, of the chunk's length, sharing no memory with it;
// Corrupt says how, for the corrupt event).
type Policy interface {
	// Cut says whether and how the link is cut now.
	Cut(l nemesis.Link) nemesis.CutKind
	// Chunk decides the fate of a chunk read on a link that is not cut.
	// conn is the connection's id and off the byte offset of b in the
	// link's direction of that connection. b is valid only during the
	// call and must not be changed.
	Chunk(l nemesis.Link, conn uint64, off int64, b []byte) nemesis.Fate
}

// The kinds of Event.
const (
	// EventOpen: a connection was accepted, its dialler found, the target
	// dialled; Link is dialler → To and Detail the dialler's address.
	EventOpen = "open"
	// EventClose: a connection ended without a reset (both sides closed,
	// one side failed, or the proxy closed); Detail says why.
	EventClose = "close"
	// EventReset: an open connection was reset (a link refused, a chunk
	// lost too long); Link is the direction that caused it, Off the
	// chunk's offset when a chunk did, and Detail says why.
	EventReset = "reset"
	// EventRefuse: a new connection was reset at once, because a direction
	// of its link is refused or the target could not be dialled.
	EventRefuse = "refuse"
	// EventUnattributed: a new connection was reset because its dialler
	// could not be found; Link.From is empty and Detail says why.
	EventUnattributed = "unattributed"
	// EventCorrupt: a chunk was written altered; Off is its offset in
	// Link's direction and Detail is the copy's Corrupt. It is emitted before the
	// altered bytes are written.
	EventCorrupt = "corrupt"
	// EventHold: a chunk (or the end of the stream) was held by a stall
	// or a loss; Off is its offset and Detail says which.
	EventHold = "hold"
	// EventRelease: a chunk held by a stall or a loss was released;
	// Off is its offset. It is emitted before the chunk is written. Also:
	// a connection held by EventConnectHeld is let through, its target
	// about to be dialled.
	EventRelease = "release"
	// EventConnectHeld: a connection accepted on a stalled link (one whose
	// dialler is found by process, or one that came in as the cut began)
	// is held before its target is dialled, until the heal.
	EventConnectHeld = "connect-held"
	// EventShut: a proxy that knows its dialler by address shut its listen
	// queue as its link stalled: new connects get no answer (their SYNs
	// are dropped) until EventOpenQueue.
	EventShut = "shut"
	// EventOpenQueue: the listen queue shut by EventShut is open again.
	EventOpenQueue = "open-queue"
)

// Event is something the proxy did that the history should record.
type Event struct {
	// Kind is one of the Event constants.
	Kind string
	// Conn is the connection's id, unique within the proxy, from 1.
	Conn uint64
	// Link is the direction the event concerns.
	Link nemesis.Link
	// Off is a byte offset in Link's direction where the Kind says so,
	// and 0 otherwise.
	Off int64
	// Detail says more, in words.
	Detail string
}
