package verdict

import (
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
)

func TestCompareWithExpectation(t *testing.T) {
	res := func(exp history.Expect, complete bool, verdicts map[string]checks.Validity) *Results {
		r := &Results{Expected: exp, Complete: complete, Checks: map[string]checks.Result{}}
		var vs []checks.Validity
		for _, name := range []string{"two-leaders", "termination"} {
			v := verdicts[name]
			r.Checks[name] = checks.Result{Name: name, Valid: v, Explanation: "because"}
			r.Order = append(r.Order, name)
			vs = append(vs, v)
		}
		r.Valid = checks.Compose(vs...)
		r.compare()
		return r
	}
	T, F, U := checks.True, checks.False, checks.Unknown
	valid := history.Expect{Valid: true}
	termFails := history.Expect{Valid: false, Violations: []string{"termination"}}
	someFail := history.Expect{Valid: false}
	tests := []struct {
		name     string
		exp      history.Expect
		complete bool
		two, ter checks.Validity
		want     int
	}{
		{"valid as expected", valid, true, T, T, ExitOK},
		{"unexpected violation", valid, true, F, T, ExitUnexpected},
		{"expected violation found", termFails, true, T, F, ExitOK},
		{"expected violation missing", termFails, true, T, T, ExitUnexpected},
		{"another check fails too", termFails, true, F, F, ExitUnexpected},
		{"expected violation unknown", termFails, true, T, U, ExitUnknown},
		{"unknown beside an unexpected failure", valid, true, F, U, ExitUnexpected},
		{"some violation expected, found", someFail, true, F, T, ExitOK},
		{"some violation expected, none", someFail, true, T, T, ExitUnexpected},
		{"incomplete history", valid, false, T, T, ExitUnknown},
	}
	for _, tt := range tests {
		r := res(tt.exp, tt.complete, map[string]checks.Validity{"two-leaders": tt.two, "termination": tt.ter})
		if r.ExitCode != tt.want {
			t.Errorf("%s: exit %d (%s), want %d; notes %v", tt.name, r.ExitCode, r.Outcome, tt.want, r.Notes)
		}
	}
}
