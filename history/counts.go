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
	// CountRefused counts everything refused from nodes.
	CountRefused = "refused"
	// CountLateReplies counts the answers that came after their operation
	// was recorded as info.
	CountLateReplies = "replies.late"
)
