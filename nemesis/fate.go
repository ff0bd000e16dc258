package nemesis

import "time"

// Why the net dropped a message, a packet or a chunk (Fate.Reason).
const (
	DropPartition = "partition"
	DropLoss      = "loss"
	// DropOverflow: a bandwidth fault's queue was longer than the
	// carrier lets a packet wait (Msg.Queue), as a full router queue.
	DropOverflow = "overflow"
)

// NoCut is the cut of a link no partition cuts (Fate.Cut, Net.Cut).
const NoCut CutKind = ""

// Fate is what becomes of one message on a link, and every carrier takes
// it as it is: the simulator and the node-process router a message, coup's
// packet network a packet, the TCP proxy a chunk of a stream. It is made
// by Net.Decide alone, so a new link fault is a change there and in what
// each carrier does with the fields below, not a translation per carrier.
//
//   - cut: Drop with Cut set; a carrier of bytes stalls or refuses them,
//     a carrier of messages drops them either way;
//   - loss: Drop;
//   - delay, jitter, reordering and bandwidth: each copy's Delay (a
//     bandwidth fault's wait for the link is in it, Net.Decide);
//   - duplication: more than one copy;
//   - corruption: a copy's Body.
type Fate struct {
	// Drop drops the message; Reason says why (DropPartition, DropLoss,
	// DropOverflow).
	Drop   bool
	Reason string
	// Cut, when a partition dropped the message, says how the link is cut
	// (Stall or Refuse); NoCut otherwise.
	Cut CutKind
	// Copies are the deliveries: the message itself first, then any
	// duplicates. A Fate that does not drop and has none delivers one
	// copy, at once, unaltered (First).
	Copies []Copy
}

// First is the fate's first copy: the message itself, or the zero Copy
// (at once, unaltered) when the fate has none.
func (f Fate) First() Copy {
	if len(f.Copies) == 0 {
		return Copy{}
	}
	return f.Copies[0]
}

// Copy is one delivery of a message.
type Copy struct {
	// Delay is how long after its sending the copy is delivered.
	Delay time.Duration
	// Body, when not nil, is the altered body delivered instead, of the
	// same length (a packet's transport payload, a chunk's bytes).
	Body []byte
	// Corrupt says how Body was altered: "bitflip", "mutate", "joker", or
	// two of them joined with "+"; "" when it was not.
	Corrupt string
	// Resum asks the driver to recompute the envelope's sum over Body (a
	// joker's alteration, which the sender's own sum must cover).
	Resum bool
	// Duplicate marks a copy the net added.
	Duplicate bool
}
