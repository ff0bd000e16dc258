package report

import (
	"fmt"
	"strings"

	"github.com/coupharness/coup/history"
)

// What a real server's belief was read from (history.Evidence: a log
// line with its file and number, or a poll's question and answer) is
// shown where the belief is: in the hover text of its span in the
// timeline, and beside each report in a check's evidence and in its
// violations' rows, so that a person checks a finding without opening a
// log. Each reading is at most history.MaxEvidence bytes; the timeline's
// hovers hold at most maxHoverReadings of them, so that a history of many
// short beliefs cannot grow the page without bound.

// maxHoverReadings bounds the readings the timeline's (and the magnified
// views') hover texts quote, over the whole page.
const maxHoverReadings = 2000

// readingText is one reading for a person: "n1.etcd.log:57: LINE", or
// "QUESTION answered: ANSWER" for a poll.
func readingText(ev history.Evidence) string {
	var s string
	switch {
	case ev.Line > 0:
		s = fmt.Sprintf("%s:%d: %s", ev.From, ev.Line, ev.Text)
	case ev.From != "":
		s = ev.From + " answered: " + ev.Text
	default:
		s = ev.Text
	}
	if ev.Cut {
		s += " … (cut at " + itoa(history.MaxEvidence) + " bytes)"
	}
	return s
}

// readings are an event's readings, one text each.
func readings(evs []history.Evidence) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, readingText(ev))
	}
	return out
}

// hoverReadings is the end of a span's hover text that says what its
// belief was read from ("\nread from n1.etcd.log:57: …"), within the
// page's budget of readings; "" when there are none.
func (m *reportModel) hoverReadings(evs []history.Evidence) string {
	if len(evs) == 0 {
		return ""
	}
	if m.hoverLeft < len(evs) {
		return "\n(read from: the history says; the page quotes the first " + itoa(maxHoverReadings) + " readings)"
	}
	m.hoverLeft -= len(evs)
	return "\nread from " + strings.Join(readings(evs), "\nand ")
}
