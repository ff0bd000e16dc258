package verdict

import (
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
)

// A check the scenario lists under expect.either is as expected whether it
// holds or fails, but not when it cannot be judged; the others keep their
// expectations.
func TestEitherCheck(t *testing.T) {
	T, F, U := checks.True, checks.False, checks.Unknown
	tests := []struct {
		two, term checks.Validity
		outcome   string
	}{
		{T, T, AsExpected},
		{F, T, AsExpected},
		{U, T, Unknown},
		{F, F, Unexpected},
	}
	for _, tt := range tests {
		r := &Results{Expected: history.Expect{Valid: true, Either: []string{"two-leaders"}}, Complete: true, Checks: map[string]checks.Result{}}
		r.Checks["two-leaders"] = checks.Result{Name: "two-leaders", Valid: tt.two}
		r.Checks["termination"] = checks.Result{Name: "termination", Valid: tt.term}
		r.Order = []string{"two-leaders", "termination"}
		r.Valid = checks.Compose(tt.two, tt.term)
		r.compare()
		if r.Outcome != tt.outcome {
			t.Errorf("two-leaders %s, termination %s: outcome %s, want %s (notes %q)", tt.two, tt.term, r.Outcome, tt.outcome, r.Notes)
		}
	}
}

// A run of real servers says what its links carried, and warns when a
// connection no node could be found to have dialled was still open at
// the end; a run of protocol nodes keeps its message line.
func TestLinksLine(t *testing.T) {
	r := &Results{Scenario: "s", Complete: true, Stats: Stats{Counts: map[string]int64{
		history.CountLinkConns: 7, history.CountLinkResets: 2, history.CountLinkUnattributed: 1}}}
	s := r.Summary()
	if !strings.Contains(s, "links: 7 connections through coup's proxies, 2 reset by a fault") || !strings.Contains(s, "1 unattributed") {
		t.Errorf("summary lacks the links line:\n%s", s)
	}
	if strings.Contains(s, "WARNING") || strings.Contains(s, "messages:") {
		t.Errorf("summary warns or counts messages with no cause:\n%s", s)
	}
	r.Stats.Counts[history.CountLinkUnattributedOpen] = 1
	if s := r.Summary(); !strings.Contains(s, "WARNING: 1 connection could not be attributed") {
		t.Errorf("summary does not warn of the open unattributed connection:\n%s", s)
	}
	r.Stats.Counts = nil
	if s := r.Summary(); !strings.Contains(s, "messages: 0 sent") || strings.Contains(s, "links:") {
		t.Errorf("a protocol run's summary:\n%s", s)
	}
}

// The headline names the checks allowed either way and what each gave,
// and says whether every other check was as expected, so that a false
// verdict where a valid run was expected reads as what it is; without
// such a check it says what the scenario expected, as before. The console's
// first line adds the same clause, and only then.
func TestEitherHeadline(t *testing.T) {
	T, F, U := checks.True, checks.False, checks.Unknown
	valid := history.Expect{Valid: true, Either: []string{"two-leaders"}}
	tests := []struct {
		name      string
		exp       history.Expect
		two, term checks.Validity
		headline  string
		console   string // the summary's first line
	}{
		{"either gave false", valid, F, T,
			"valid = false — two-leaders is allowed either way (it gave false); every other check as expected, so the outcome is as expected (exit code 0)",
			"s: valid=false, as expected (exit 0) — two-leaders is allowed either way (it gave false); every other check as expected"},
		{"either gave true", valid, T, T,
			"valid = true — two-leaders is allowed either way (it gave true); every other check as expected, so the outcome is as expected (exit code 0)",
			"s: valid=true, as expected (exit 0) — two-leaders is allowed either way (it gave true); every other check as expected"},
		{"another check failed", valid, F, F,
			"valid = false — two-leaders is allowed either way (it gave false); not every other check as expected, so the outcome is unexpected (exit code 1)",
			"s: valid=false, unexpected (exit 1) — two-leaders is allowed either way (it gave false); not every other check as expected"},
		{"either could not judge", valid, U, T,
			"valid = unknown — two-leaders is allowed either way (it gave unknown); every other check as expected, so the outcome is unknown (exit code 3)",
			"s: valid=unknown, unknown (exit 3) — two-leaders is allowed either way (it gave unknown); every other check as expected"},
		{"a violation expected besides", history.Expect{Valid: false, Violations: []string{"termination"}, Either: []string{"two-leaders"}}, T, F,
			"valid = false — two-leaders is allowed either way (it gave true); every other check as expected (the scenario expected a violation of termination), so the outcome is as expected (exit code 0)",
			"s: valid=false, as expected (exit 0) — two-leaders is allowed either way (it gave true); every other check as expected (the scenario expected a violation of termination)"},
		{"every check either way", history.Expect{Valid: true, Either: []string{"termination", "two-leaders"}}, F, T,
			"valid = false — two-leaders (it gave false) and termination (it gave true) are allowed either way, so the outcome is as expected (exit code 0)",
			"s: valid=false, as expected (exit 0) — two-leaders (it gave false) and termination (it gave true) are allowed either way"},
		{"the either check did not run", history.Expect{Valid: true, Either: []string{"agreement"}}, T, T,
			"valid = true — the scenario expected a valid run, so the outcome is as expected (exit code 0)",
			"s: valid=true, as expected (exit 0)"},
		{"no either", history.Expect{Valid: false, Violations: []string{"two-leaders"}}, F, T,
			"valid = false — the scenario expected a violation of two-leaders, so the outcome is as expected (exit code 0)",
			"s: valid=false, as expected (exit 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Results{Scenario: "s", Expected: tt.exp, Complete: true, Checks: map[string]checks.Result{}}
			r.Checks["two-leaders"] = checks.Result{Name: "two-leaders", Valid: tt.two}
			r.Checks["termination"] = checks.Result{Name: "termination", Valid: tt.term}
			r.Order = []string{"two-leaders", "termination"}
			r.Valid = checks.Compose(tt.two, tt.term)
			r.compare()
			if r.Headline != tt.headline {
				t.Errorf("headline\n%q\nwant\n%q", r.Headline, tt.headline)
			}
			if got, _, _ := strings.Cut(r.Summary(), "\n"); got != tt.console {
				t.Errorf("console\n%q\nwant\n%q", got, tt.console)
			}
		})
	}
}

// A node cannot forge a console line through the name of a check it
// allows either way (a hand-made history's meta event names them).
func TestEitherHeadlineIsPrintable(t *testing.T) {
	name := "x\n\x1b[2Ks: valid=true, as expected (exit 0)"
	r := &Results{Scenario: "s", Expected: history.Expect{Valid: true, Either: []string{name}}, Complete: true,
		Checks: map[string]checks.Result{name: {Name: name, Valid: checks.False}}, Order: []string{name}, Valid: checks.False}
	r.compare()
	if s := r.Summary(); strings.Count(s, "\n") != 3 || strings.ContainsAny(s, "\x1b") {
		t.Errorf("the either check's name reached the console raw:\n%q", s)
	}
}
