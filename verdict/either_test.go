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
