package explore

import (
	"fmt"
	"strings"

	"github.com/coupharness/coup/checks"
)

// Finish names the shrunk scenario after the original (its name with
// "-shrunk"), describes it by its failure, and gives it an [expect] of
// its own: the violations it shows (valid = false, and the checks that
// fail), so that the file states what it demonstrates. A run that failed
// without a violation (an expected violation missing, or a check
// undecided) keeps the original expectation, and so keeps failing the
// same way.
func (r *ShrinkResult) Finish(name string) {
	sc := r.Scenario
	sc.Name = name + "-shrunk"
	sc.Description = fmt.Sprintf("%s, shrunk: %s", name, r.Signature)
	var violations []string
	for _, c := range r.Run.Results.Order {
		if r.Run.Results.Checks[c].Valid == checks.False {
			violations = append(violations, c)
		}
	}
	if len(violations) > 0 {
		f := false
		sc.Expect.Valid, sc.Expect.Violations = &f, violations
	}
}

// SizeTable writes the original and shrunk sizes as a table, one line per
// figure, each line starting with indent.
func (r *ShrinkResult) SizeTable(indent string) string {
	var b strings.Builder
	row := func(name string, a, c any) { fmt.Fprintf(&b, "%s%-18s %10v %10v\n", indent, name, a, c) }
	o, s := r.Original, r.Shrunk
	row("", "original", "shrunk")
	row("faults", o.Faults, s.Faults)
	row("fault occurrences", o.Occurrences, s.Occurrences)
	row("nodes", o.Nodes, s.Nodes)
	if o.Messages > 0 || s.Messages > 0 { // real servers' messages are not counted
		row("messages", o.Messages, s.Messages)
	}
	row("history events", o.Events, s.Events)
	row("duration", o.Duration, s.Duration)
	row("recovery", o.Recovery, s.Recovery)
	return b.String()
}
