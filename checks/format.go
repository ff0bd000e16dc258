package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
)

// fmtTime formats a history time as seconds with millisecond precision:
// "1.203s".
func fmtTime(ns int64) string {
	return fmt.Sprintf("%.3fs", float64(ns)/1e9)
}

// fmtSpan says when an interval was: "from 1.203s to 1.250s (47ms)", or,
// when both ends round to the same millisecond, "at 0.307s, for 430µs".
// until, when set, replaces the end's time in the sentence.
func fmtSpan(from, to int64, until string) string {
	if until == "" {
		until = fmtTime(to)
	}
	if fmtTime(from) == fmtTime(to) && until == fmtTime(to) {
		return fmt.Sprintf("at %s, for %s", fmtTime(from), fmtDur(to-from))
	}
	return fmt.Sprintf("from %s to %s (%s)", fmtTime(from), until, fmtDur(to-from))
}

// fmtDur formats a length of time, rounded to the millisecond when it is at
// least one: "47ms", "1.5s", "300ns".
func fmtDur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Millisecond:
		d = d.Round(time.Millisecond)
	case d >= time.Microsecond:
		d = d.Round(time.Microsecond)
	}
	return d.String()
}

// joinNames lists names for a sentence: "n1", "n1 and n2", "n1, n2 and n3";
// beyond six names the rest are counted.
func joinNames(names []string) string {
	const most = 6
	if len(names) > most {
		rest := len(names) - (most - 1)
		names = append(names[:most-1:most-1], fmt.Sprintf("%d others", rest))
	}
	switch len(names) {
	case 0:
		return "no node"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// plural returns "1 line", "2 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// isAre picks the singular or plural verb for a count.
func isAre(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// killedNote is added to the explanation of an end-state check when the
// history has no end event.
func killedNote(end int64) string {
	return fmt.Sprintf("; the history has no end event (the run was killed), so this judges its last event at %s", fmtTime(end))
}

// sortEvents puts evidence in history order.
func sortEvents(es []history.Event) {
	slices.SortFunc(es, func(x, y history.Event) int { return cmp.Compare(x.Index, y.Index) })
}

// addTime is a time plus a bound, saturating at history.MaxTime: a bound
// too long for any run gives a deadline no run reaches, never one that
// wraps around to the past.
func addTime(t, bound int64) int64 {
	if bound > 0 && t > history.MaxTime-bound {
		return history.MaxTime
	}
	return t + bound
}
