package verdict

import (
	"fmt"
	"strings"

	"github.com/coupharness/coup/checks"
)

// headline is Results.Headline: the verdict, what the scenario expected
// and so the outcome, in one sentence:
//
//	valid = true — the scenario expected a valid run, so the outcome is as expected (exit code 0)
//	valid = false — two-leaders is allowed either way (it gave false); every other check as expected, so the outcome is as expected (exit code 0)
func (r *Results) headline() string {
	if r.NotStarted() {
		return fmt.Sprintf("valid = %s — not run: a node did not start, so nothing was judged (exit code %d)", r.Valid, r.ExitCode)
	}
	return fmt.Sprintf("valid = %s — %s%s, so the outcome is %s (exit code %d)", r.Valid, r.Expectation(), r.ExitsText(), r.Outcome, r.ExitCode)
}

// Expectation says what the scenario expected of the checks, for the
// headline: "the scenario expected a valid run", "… a violation of
// two-leaders". When it allows checks either way (expect.either), it
// names those that ran and what each gave instead, and says whether every
// other check was as expected: "two-leaders is allowed either way (it
// gave false); every other check as expected". A run whose verdict is
// false although the scenario expected a valid one then says why that is
// as expected.
func (r *Results) Expectation() string {
	if s, ok := r.eitherWay(); ok {
		return s
	}
	return r.expected()
}

// expected is what the scenario expected: "the scenario expected a valid
// run", "… a violation of two-leaders".
func (r *Results) expected() string {
	switch {
	case r.Expected.Valid:
		return "the scenario expected a valid run"
	case len(r.Expected.Violations) > 0:
		return "the scenario expected a violation of " + strings.Join(r.Expected.Violations, ", ")
	default:
		return "the scenario expected a violation"
	}
}

// eitherWay names the checks that ran and that the scenario allows either
// way, with what each gave, and says whether every other check was as
// expected; false when no such check ran.
func (r *Results) eitherWay() (string, bool) {
	j := newJudge(r.Expected)
	var names []string
	for _, name := range r.Order {
		if j.either[name] {
			names = append(names, name)
		}
	}
	var s string
	switch len(names) {
	case 0:
		return "", false
	case 1:
		s = fmt.Sprintf("%s is allowed either way (it gave %s)", names[0], r.Checks[names[0]].Valid)
	default:
		gave := make([]string, len(names))
		for i, name := range names {
			gave[i] = fmt.Sprintf("%s (it gave %s)", name, r.Checks[name].Valid)
		}
		s = joinAnd(gave) + " are allowed either way"
	}
	switch {
	case len(names) == len(r.Order):
	case r.othersAsExpected(j):
		s += "; every other check as expected"
	default:
		s += "; not every other check as expected"
	}
	if !r.Expected.Valid {
		s += " (" + r.expected() + ")"
	}
	return s, true
}

// othersAsExpected reports whether every check the scenario does not
// allow either way gave what it expects, as compare judges it.
func (r *Results) othersAsExpected(j judge) bool {
	if j.anyFailure && r.Valid == checks.True {
		return false
	}
	for _, name := range r.Order {
		if !j.either[name] && !j.asExpected(name, r.Checks[name].Valid) {
			return false
		}
	}
	return true
}

// joinAnd lists items for a sentence: "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// ExitsText says, for the headline, which processes exited on their own
// although the scenario does not expect it: ", but n2 exited on its own
// at 1.360s, which it does not expect"; "" when none did.
func (r *Results) ExitsText() string {
	var names []string
	for _, x := range r.Exits {
		if !x.Expected {
			names = append(names, fmt.Sprintf("%s at %.3fs", x.Process, float64(x.Time)/1e9))
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return ", but " + names[0] + " exited on its own, which it does not expect"
	}
	return ", but " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " exited on their own, which it does not expect"
}
