package history

// The counters a driver keeps and writes on the end event (Event.Counts):
// the harness's pipe driver and the simulator keep the same ones, and the
// verdict's stats are read from them. Sent, dropped and corrupted messages
// are also counted under "<key>.<type>", "<key>.<reason>" and "<key>.<how>",
// refusals under "refused.<class>", and client operations under
// "ops.<type>".
const (
	CountSent       = "messages.sent"
	CountDelivered  = "messages.delivered"
	CountDropped    = "messages.dropped"
	CountDuplicated = "messages.duplicated"
	CountCorrupted  = "messages.corrupted"
	CountInFlight   = "messages.in_flight_at_end"
	// CountUnrecorded counts the messages past history.max_messages:
	// counted, not recorded.
	CountUnrecorded = "messages.unrecorded"
	// CountFaultsSkipped counts the fault occurrences that did not happen
	// for want of a target (a "leader" when no live node claims to be
	// one, a node already down): the run went on without them.
	CountFaultsSkipped = "faults.skipped"
	// CountFaultsUnfired counts the faults armed on a trigger (when =
	// {...}) that no event fired before the heal: nothing in the run set
	// them off, so they never happened.
	CountFaultsUnfired = "faults.unfired"
	// CountRefused counts everything refused from nodes.
	CountRefused = "refused"
	// CountUnsummed, followed by "." and a node's name, counts the
	// messages that node sent another without a checksum while
	// checksums were on (pipe driver).
	CountUnsummed = "messages.unsummed"
	// The server driver's links: connections through its proxies, those
	// reset by a fault (a refused link, a loss held too long), those
	// refused at connect, those reset because no node could be found to
	// have dialled them, and those of them still open at the end (none,
	// unless the proxy failed to reset one: the run is then not to be
	// trusted, and the verdict says so). Chunks held by a stall or a loss,
	// and chunks corrupted, are counted too.
	CountLinkConns            = "links.connections"
	CountLinkResets           = "links.resets"
	CountLinkRefused          = "links.refused"
	CountLinkUnattributed     = "links.unattributed"
	CountLinkUnattributedOpen = "links.unattributed_open_at_end"
	CountLinkHeld             = "links.chunks_held"
	CountLinkCorrupted        = "links.chunks_corrupted"
	// A connect across a stalled link gets no answer: the times a proxy
	// shut its listen queue for it (new connects' SYNs dropped until the
	// heal), and the connections that completed anyway (a proxy that
	// finds its dialler by process cannot tell them apart before the
	// handshake) and were held, their target dialled only at the heal.
	CountLinkQueuesShut   = "links.queues_shut"
	CountLinkConnectsHeld = "links.connects_held"
	// coup's network between hosts (each a network namespace): the
	// packets and bytes it delivered (duplicates included), those a
	// stalled cut dropped, those a refused cut answered (a reset, an ICMP
	// unreachable), those lost, and the deliveries delayed, duplicated
	// and corrupted; packets to no host's address. Each directed link's
	// packets and bytes are under "<CountNetLink>.<from>><to>.packets"
	// and ".bytes".
	CountNetPackets    = "net.packets"
	CountNetBytes      = "net.bytes"
	CountNetCut        = "net.cut"
	CountNetRefused    = "net.refused"
	CountNetLost       = "net.lost"
	CountNetDelayed    = "net.delayed"
	CountNetDuplicated = "net.duplicated"
	CountNetCorrupted  = "net.corrupted"
	CountNetUnrouted   = "net.unrouted"
	CountNetLink       = "net.link"
	// CountLateReplies counts the answers that came after their operation
	// was recorded as info.
	CountLateReplies = "replies.late"
	// CountPolls prefixes the server driver's counts of its polls, per
	// node and by how each question ended: "polls.n1.answered", and
	// Poll* below.
	CountPolls = "polls"
	// CountDiskLostBytes, CountDiskLostFiles and CountDiskFlips count what
	// storage faults did over the run: the bytes power failures lost, the
	// files that lost any, and the bits flipped.
	CountDiskLostBytes = "disk.lost_bytes"
	CountDiskLostFiles = "disk.lost_files"
	CountDiskFlips     = "disk.flips"
)

// How a poll's question ended (CountPolls): answered; not answered
// within the poll's timeout (a paused or cut-off server); failed before
// it (a refused connection, an HTTP error, a missing file, a command that
// failed); and a round skipped, the node being down. PollUnknown counts
// the node's beliefs that its polls made unknown (LeaderUnknown).
const (
	PollAnswered   = "answered"
	PollUnanswered = "unanswered"
	PollFailed     = "failed"
	PollSkipped    = "skipped"
	PollUnknown    = "unknown"
)
