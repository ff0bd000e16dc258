package verdict

import (
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
)

// An incomplete history is never unexpected: whatever its prefix shows,
// the outcome is unknown (exit 3), and the notes say what it showed.
func TestIncompleteRunIsNeverUnexpected(t *testing.T) {
	T, F := checks.True, checks.False
	tests := []struct {
		name     string
		exp      history.Expect
		two, ter checks.Validity
		note     string
	}{
		{"a violation no one expected", history.Expect{Valid: true}, F, T, "in the recorded prefix, two-leaders: unexpected violation: because"},
		{"the expected violation not yet found", history.Expect{Valid: false, Violations: []string{"two-leaders"}}, T, T, "in the recorded prefix, two-leaders: expected a violation, but the check holds"},
		{"no violation yet, some expected", history.Expect{Valid: false}, T, T, "in the recorded prefix, expected the run to be invalid, but every check holds"},
		{"the expected violation found, another too", history.Expect{Valid: false, Violations: []string{"two-leaders"}}, F, F, "in the recorded prefix, termination: unexpected violation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Results{Expected: tt.exp, Complete: false, Error: "interrupted", Checks: map[string]checks.Result{}}
			for name, v := range map[string]checks.Validity{"two-leaders": tt.two, "termination": tt.ter} {
				r.Checks[name] = checks.Result{Name: name, Valid: v, Explanation: "because"}
			}
			r.Order = []string{"two-leaders", "termination"}
			r.Valid = checks.Compose(tt.two, tt.ter)
			r.compare()
			if r.ExitCode != ExitUnknown || r.Outcome != Unknown {
				t.Errorf("exit %d (%s), want %d (%s)", r.ExitCode, r.Outcome, ExitUnknown, Unknown)
			}
			if len(r.Notes) < 2 || !strings.Contains(r.Notes[0], "no end event") || !strings.Contains(strings.Join(r.Notes, "\n"), tt.note) {
				t.Errorf("notes %q, want first the missing end, then %q", r.Notes, tt.note)
			}
			if s := r.Summary(); !strings.HasPrefix(s, ": valid=false, unknown (exit 3)\n") && !strings.HasPrefix(s, ": valid=true, unknown (exit 3)\n") {
				t.Errorf("summary begins %q, want the unknown outcome and exit 3", strings.SplitN(s, "\n", 2)[0])
			}
		})
	}
}

// What a node writes cannot forge a line of the summary: control
// characters, escape sequences and line breaks are shown, not obeyed.
func TestSummaryEscapesNodeStrings(t *testing.T) {
	forged := "\r\n\x1b[2K\x1b[1A" + "chang-roberts: valid=true, as expected (exit 0)\n\u202e"
	r := &Results{
		Scenario: "chang-roberts" + forged, Valid: checks.False, Outcome: Unexpected, ExitCode: ExitUnexpected,
		Checks: map[string]checks.Result{"two-leaders": {Name: "two-leaders", Valid: checks.False, Explanation: "n1 reported leader " + forged}},
		Order:  []string{"two-leaders"},
		Notes:  []string{"two-leaders: unexpected violation: " + forged},
		Error:  "node n1 said " + forged,
		Stats:  Stats{Messages: MessageStats{Sent: 1, ByType: map[string]int64{"x" + forged: 1}}},
	}
	s := r.Summary()
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) != 5 {
		t.Errorf("%d lines, want 5 (verdict, check, messages, note, error):\n%s", len(lines), s)
	}
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "chang-roberts: valid=true") {
			t.Errorf("forged line %q", l)
		}
		for _, c := range l {
			if c < 0x20 || c == 0x7f || c == '\u202e' {
				t.Errorf("control character %U in %q", c, l)
			}
		}
	}
	if !strings.Contains(s, `\r\n\x1b[2K\x1b[1Achang-roberts: valid=true, as expected (exit 0)\n\u202e`) {
		t.Errorf("the hostile text is not shown escaped:\n%s", s)
	}
}

// A history that names no checks is judged by the defaults of its
// algorithm, or, for a foreign node, of its workload.
func TestEvaluateDefaultsByWorkload(t *testing.T) {
	tests := []struct {
		algorithm, workload string
		want                []string
	}{
		{"my-store", "lin-kv", checks.KVDefaults},
		{"my-echo", "echo", checks.EchoDefaults},
		{"my-lock", "mutex", checks.MutexDefaults},
		{"my-raft", "none", checks.ElectionDefaults},
		{"ricart-agrawala", "", checks.MutexDefaults},
	}
	for _, tt := range tests {
		h, err := history.FromEvents([]history.Event{{Kind: history.KindMeta, Meta: &history.Meta{Algorithm: tt.algorithm, Workload: tt.workload, Nodes: []string{"n1"}, IDs: []int{1}}}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(h)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(r.Order, ","), strings.Join(tt.want, ","); got != want {
			t.Errorf("%s with workload %q: checks %s, want %s", tt.algorithm, tt.workload, got, want)
		}
	}
}

// A history that names no checks runs its algorithm's defaults: the mutex
// checks for a mutual-exclusion algorithm, the election checks otherwise.
func TestEvaluateDefaultsByAlgorithm(t *testing.T) {
	for algo, want := range map[string][]string{
		"token-ring":      checks.MutexDefaults,
		"ricart-agrawala": checks.MutexDefaults,
		"chang-roberts":   checks.ElectionDefaults,
		"a-foreign-node":  checks.ElectionDefaults,
	} {
		h, err := history.FromEvents([]history.Event{
			{Kind: history.KindMeta, Meta: &history.Meta{Scenario: "t", Algorithm: algo, Nodes: []string{"n1"}}},
			{Index: 1, Kind: history.KindEnd},
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Evaluate(h)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Order, want) {
			t.Errorf("%s: ran %v, want %v", algo, res.Order, want)
		}
	}
}

// A run whose nodes did not start is not judged, whoever reads its
// history: it is summed up by its cause alone, with an input error's exit
// code when the start failed and unknown's when it was interrupted.
func TestNotStartedSummary(t *testing.T) {
	for _, c := range []struct {
		what, detail, want string
		code               int
	}{
		{history.UnstartedFailed, "n1 exited before answering init (exit status 1)",
			"s: not run (exit 2): n1 exited before answering init (exit status 1)\n", ExitInput},
		{history.UnstartedInterrupted, "interrupted before every node was up",
			"s: not run (exit 3): interrupted before every node was up\n", ExitUnknown},
		// A history's detail can hold anything: no line of it can pass
		// for coup's own.
		{history.UnstartedFailed, "boom\nx: valid=true, as expected (exit 0)\x1b[2K",
			"s: not run (exit 2): boom\n  x: valid=true, as expected (exit 0)\\x1b[2K\n", ExitInput},
	} {
		h, err := history.FromEvents([]history.Event{
			{Kind: history.KindMeta, Meta: &history.Meta{Scenario: "s", Algorithm: "bully", Nodes: []string{"n1"}, IDs: []int{1}}},
			{Kind: history.KindUnstarted, What: c.what, Detail: c.detail},
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Evaluate(h)
		if err != nil {
			t.Fatal(err)
		}
		if !res.NotStarted() || res.ExitCode != c.code || len(res.Checks) != 0 || res.Unstarted != c.what {
			t.Errorf("%s: not started %v, exit %d (want %d), %d checks, unstarted %q", c.what, res.NotStarted(), res.ExitCode, c.code, len(res.Checks), res.Unstarted)
		}
		if got := res.StartInterrupted(); got != (c.what == history.UnstartedInterrupted) {
			t.Errorf("%s: StartInterrupted %v", c.what, got)
		}
		if got := res.Summary(); got != c.want {
			t.Errorf("summary %q, want %q", got, c.want)
		}
	}
}
