package proxy

import (
	"fmt"
	"time"

	"github.com/coupharness/coup/nemesis"
)

// Cut is how a directed link is cut.
type Cut int

const (
	// None means the link is not cut: each chunk read on it meets the fate
	// Policy.Chunk gives it.
	None Cut = iota
	// Stall holds every chunk read on the link, in order, until Changed
	// finds the link no longer cut; then the held chunks are written.
	Stall
	// Refuse resets every connection that carries the link, in either
	// direction, and refuses new connections across it.
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

// Fate is what happens to one chunk read on a link that is not cut. The
// zero Fate writes the chunk at once, unaltered.
type Fate struct {
	// Delay holds the chunk this long, counted from when it was read,
	// before it is written. Order on the connection's direction is always
	// kept: a chunk is never written before one read earlier.
	Delay time.Duration
	// Lost holds the chunk (a stall): if it is still held LossReset after
	// its fate was decided, its connection is reset. Changed asks the
	// policy again for a held lost chunk's fate, and a fate that is not
	// Lost releases it.
	Lost bool
	// LossReset is how long a lost chunk is held before its connection is
	// reset.
	LossReset time.Duration
	// Body, when not nil, is written instead of the chunk (a corruption).
	// It has the chunk's length and shares no memory with the chunk.
	Body []byte
	// How says how Body was altered, for the corrupt event.
	How string
}

// Policy is the driver's side of the proxy: the nemesis's view of each
// link. The proxy calls it from many goroutines at once, on the hot path
// of every chunk, so it does its own locking and answers quickly; it must
// not call back into the proxy.
type Policy interface {
	// Cut says whether and how the link is cut now.
	Cut(l nemesis.Link) Cut
	// Chunk decides the fate of a chunk read on a link that is not cut.
	// conn is the connection's id and off the byte offset of b in the
	// link's direction of that connection. b is valid only during the
	// call and must not be changed.
	Chunk(l nemesis.Link, conn uint64, off int64, b []byte) Fate
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
	// Link's direction and Detail is Fate.How. It is emitted before the
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
