package explore

import (
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

func TestKind(t *testing.T) {
	tests := []struct{ explanation, want string }{
		{"n5 and n4 both believed they were the leader from 0.309s to 0.310s (819µs): n5 claimed leadership at 0.307s (restarted under the same id at 0.307s after it crashed at 0.302s), and n4 claimed it at 0.309s",
			"N both believed they were the leader"},
		{"n5 and n4 both believed they were the leader at 0.307s, for 115µs: n5 claimed leadership at 0.305s", "N both believed they were the leader"},
		{"n4 and n3 both believed they were the leader from 0.017s to 0.035s (17ms): n5 claimed leadership at 0.000s; 8 pairs of claims overlap in all",
			"N both believed they were the leader"},
		{"the 16 operations are not linearizable against a lock: the longest order porcupine can fit takes 1 operation", "the # operation are not linearizable against a lock"},
		{"the 1 operation is not linearizable against a lock: the longest order", "the # operation are not linearizable against a lock"},
		{"n1, n2, n3 and n5, live at 0.320s (300ms after the last elect request at 0.020s), believed in no leader: the election did not finish", "N, live, believed in no leader"},
		{"n5, live at 0.585s (400ms after the last nemesis event (crash start) at 0.185s), believed in no leader: the election", "N, live, believed in no leader"},
		{"8 of the 8 acquires invoked at live nodes after the last nemesis event (crash start at 0.300s) were not granted within 300ms: the first", "# of the # acquire invoked at live nodes after the last nemesis event were not granted"},
		{"1 of the 3 acquires invoked at live nodes after the last nemesis event (crash start at 0.300s) was not granted within 300ms: the first", "# of the # acquire invoked at live nodes after the last nemesis event were not granted"},
		{`message 3 (election, n3→n4) was corrupted by the nemesis at 0.040s (field "round": 1 → 3; body now {}) and delivered`, "message # were corrupted by the nemesis"},
		{`message 3 (election, n3→n4) was altered by a joker, n3, at 0.038s (field "payload": "n1/1/c7e" → "i1/1/c7e"`, "message # were altered by a joker, N"},
		{"every correct node (n1, n2, n3, n4 and n5) has trusted n1 since 1.019s, when n3 changed from n2 to n1: 419ms later", "every correct node has trusted N, when N changed from N to N"},
	}
	for _, tt := range tests {
		if got := Kind(tt.explanation); got != tt.want {
			t.Errorf("Kind(%.60q…) = %q, want %q", tt.explanation, got, tt.want)
		}
	}
}

func results(expect history.Expect, verdicts ...checks.Result) *verdict.Results {
	r := &verdict.Results{Expected: expect, Checks: map[string]checks.Result{}, Outcome: verdict.AsExpected, Valid: checks.True}
	for _, v := range verdicts {
		r.Checks[v.Name] = v
		r.Order = append(r.Order, v.Name)
		r.Valid = checks.Compose(r.Valid, v.Valid)
	}
	return r
}

func TestSignature(t *testing.T) {
	held := checks.Result{Name: "agreement", Valid: checks.True}
	two := checks.Result{Name: "two-leaders", Valid: checks.False, Explanation: "n1 and n2 both believed they were the leader at 0.1s, for 3ms: …"}
	term := checks.Result{Name: "termination", Valid: checks.False, Explanation: "n1, live at 0.3s, believed in no leader: …"}
	unk := checks.Result{Name: "termination", Valid: checks.Unknown, Explanation: "the history ends early"}
	tests := []struct {
		name string
		res  *verdict.Results
		want string
	}{
		{"as expected and valid", results(history.Expect{Valid: true}, with(two, checks.True), held), ""},
		{"a violation", results(history.Expect{Valid: true}, two, held), "two-leaders: N both believed they were the leader"},
		{"an expected violation", results(history.Expect{Violations: []string{"two-leaders"}}, two, held), "two-leaders: N both believed they were the leader"},
		{"two violations, in check order", results(history.Expect{Valid: true}, two, held, term), "two-leaders: N both believed they were the leader + termination: N, live, believed in no leader"},
		{"unknown", results(history.Expect{Valid: true}, held, unk), "termination: unknown"},
		{"an expected violation missing", results(history.Expect{Violations: []string{"termination"}}, held, with(term, checks.True)), "termination: held (a violation was expected)"},
		{"any violation expected, none found", results(history.Expect{}, held), "no violation (one was expected)"},
	}
	for _, tt := range tests {
		if tt.want != "" && tt.res.Valid != checks.False {
			tt.res.Outcome = verdict.Unexpected
		}
		if got := Signature(tt.res); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func with(r checks.Result, v checks.Validity) checks.Result { r.Valid = v; return r }
