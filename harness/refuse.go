package harness

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/coupharness/coup/history"
)

// What the harness refuses from a node, by class. Every refusal is counted
// under history.CountRefused and history.CountRefused+"."+class; the first
// RefusalsRecorded of each class from each node are logged and recorded as
// refused events, and the rest only counted, so that a node cannot grow the history or the
// log by misbehaving.
const (
	// RefusedOutput: a line that is not a message envelope.
	RefusedOutput = "output"
	// RefusedLine: a line longer than MaxLine, discarded unread.
	RefusedLine = "line"
	// RefusedReport: a report to the harness that is not one.
	RefusedReport = "report"
	// RefusedReply: an answer to a client that does not answer a request
	// the client sent to that node: from another node, for another
	// client, of the wrong type, to a request already answered or timed
	// out.
	RefusedReply = "reply"
	// RefusedDest: a message to a destination that is neither a node nor
	// a client of the run.
	RefusedDest = "dest"
)

// RefusalsRecorded is how many refusals of one class from one node are
// logged and recorded as events; later ones are counted only.
const RefusalsRecorded = 16

// Bounds on what a node can put into the history through one line.
const (
	// MaxLine is the longest line a node may write, newline excluded. A
	// longer line is discarded, unread, and refused.
	MaxLine = 1 << 20
	// MaxField is the longest string a node can put into one field of an
	// event (a report's value, a reply's value, an error's text); a longer
	// one is cut, with a marker that says how long it was.
	MaxField = 1 << 10
	// MaxTypeLen is the longest message type kept; MaxTypes is how many
	// distinct message types are kept apart. Messages of further types
	// are recorded and counted under OtherTypes.
	MaxTypeLen = 128
	MaxTypes   = 256
)

// OtherTypes names, in events and counts, the messages whose type came
// after MaxTypes distinct others.
const OtherTypes = "(other types)"

// refusals decides which refusals are logged and recorded.
type refusals struct {
	mu   sync.Mutex
	seen map[[2]string]int // (node, class) → refusals so far
}

// refuse logs, counts and records that the harness refused something node
// wrote. detail says what and why; it is cut to MaxField.
func (r *run) refuse(node, class, detail string) {
	r.router.count(history.CountRefused, history.CountRefused+"."+class)
	n := r.refused.note(node, class)
	switch {
	case n < RefusalsRecorded:
	case n == RefusalsRecorded:
		detail += fmt.Sprintf("; further refusals of this kind from %s are counted, not recorded", node)
	default:
		return
	}
	detail = Clip(detail, MaxField)
	r.logf("%s: refused (%s): %s", node, class, detail)
	r.rec.Record(history.Event{Kind: history.KindRefused, Node: node, What: class, Detail: detail})
}

// note counts one more occurrence of class from node and returns the count.
func (rf *refusals) note(node, class string) int {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	if rf.seen == nil {
		rf.seen = map[[2]string]int{}
	}
	k := [2]string{node, class}
	rf.seen[k]++
	return rf.seen[k]
}

// Clip returns s cut to at most max bytes (on a rune boundary), with a
// marker saying how long it was when it was cut.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	marker := fmt.Sprintf("…[cut: %d bytes]", len(s))
	keep := max - len(marker)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + marker
}

// quote is a node-supplied string for a log line or an event's detail:
// quoted, cut to a short length.
func quote(b []byte) string {
	const short = 200
	if len(b) > short {
		return fmt.Sprintf("%q…[cut: %d bytes]", b[:short], len(b))
	}
	return fmt.Sprintf("%q", b)
}
