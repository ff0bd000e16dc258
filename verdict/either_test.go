package verdict

import (
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
