package checks

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/fixtures from the checks' results")

// fixtures are hand-made history files in testdata/fixtures, each with the
// verdict every check must give (a check not listed must hold). The full
// results, explanations included, are kept beside each history as
// NAME.golden; `go test ./checks -run Fixtures -update` rewrites them, and
// the difference is read before it is committed.
var fixtures = []struct {
	name, about string
	verdicts    map[string]Validity
}{
	{"touching-claims", "n1 steps down at the very instant n2 claims: the claims touch but do not overlap", map[string]Validity{
		"validity": False, // n2 is elected though n3 has the higher id
	}},
	{"paused-leader", "the leader n3 is paused; the others elect n2 while n3 still believes it leads", map[string]Validity{
		"two-leaders": False,
		"validity":    False, // once resumed, n3 (the highest id) follows n2
	}},
	{"crashed-leader", "the leader n3 crashes; its claim ends at the crash, and n2 is elected after", nil},
	{"replaced-leader", "n3 is replaced (crashed and restarted under the same id) while the others elect n2; the new n3 claims again", map[string]Validity{
		"two-leaders": False,
	}},
	{"omega-last-event", "Ω stabilises on the last event before the run ends, exactly at the deadline (GST 100ms + 100ms)", map[string]Validity{
		"termination": Unknown, // its 1s default bound outlasts the run
	}},
	{"omega-too-late", "Ω stabilises 1ms after its deadline", map[string]Validity{
		"eventual-leadership": False, "termination": Unknown,
	}},
	{"killed-run", "a killed run whose last line was cut in half: the line is reported, the rest judged", map[string]Validity{
		"two-leaders": False, "agreement": False, "validity": False, "termination": Unknown, "eventual-leadership": Unknown, "complexity": Unknown,
	}},
	{"ring-election", "a Chang–Roberts election on a ring of three, five messages against a bound of five", nil},
	{"ring-election-over-bound", "the same election against a bound of four", map[string]Validity{
		"complexity": False,
	}},
	{"election-stuck", "a Chang–Roberts election stuck behind a crashed node: nobody ever learns a leader", map[string]Validity{
		"termination": False, "eventual-leadership": False,
	}},
	{"corruption-accepted", "checksums off: a gather message corrupted by the nemesis is delivered and accepted", map[string]Validity{
		"integrity": False,
	}},
	{"isolated-leader-terms", "the leader n3 (term 1) is cut off; n1 is elected in term 2 while n3 still believes it leads, for 69ms, past a 50ms bound", map[string]Validity{
		"two-leaders": False, "stale-leader": False,
	}},
	{"same-term-claims", "the leader n3 (term 1) is cut off and n1 takes over in the same term", map[string]Validity{
		"two-leaders": False, "one-leader-per-term": False,
	}},
	{"etcd-two-leaders-evidence", "real servers: etcd's leader n1 (term 2) is cut off; n2 is elected in term 3 while n1 still claims, until n1's poll times out and its belief is unknown; every report carries the log line or poll answer it was read from", map[string]Validity{
		"two-leaders": False,
	}},
	{"corruption-rejected", "checksums on: the corrupted message is rejected; the commander's payload check reports the corruption", nil},
}

func TestFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			path := filepath.Join("testdata", "fixtures", fx.name+".jsonl")
			h, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			fmt.Fprintf(&got, "# %s\n", fx.about)
			for _, c := range electionChecks() {
				r := judge(t, c.Name, h)
				want, ok := fx.verdicts[c.Name]
				switch {
				case ok:
				case slices.Contains(termChecks, c.Name) && !hasTerms(h):
					want = Unknown // nothing to judge without terms
				default:
					want = True
				}
				if r.Valid != want {
					t.Errorf("%s: got %v (%s), want %v", c.Name, r.Valid, r.Explanation, want)
				}
				got.WriteString(goldenText(r))
			}
			golden := filepath.Join("testdata", "fixtures", fx.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got.String() != string(want) {
				t.Errorf("results differ from %s (run with -update and read the difference):\ngot:\n%s", golden, got.String())
			}
		})
	}
}

// goldenText is a result as a golden file shows it.
func goldenText(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n== %s: %v\n%s\n", r.Name, r.Valid, r.Explanation)
	if len(r.Nodes) > 0 {
		fmt.Fprintf(&b, "nodes: %s\n", strings.Join(r.Nodes, " "))
	}
	if r.Interval != nil {
		fmt.Fprintf(&b, "interval: %s to %s\n", fmtTime(r.Interval.From), fmtTime(r.Interval.To))
	}
	for _, e := range r.Evidence {
		line, _ := json.Marshal(e)
		fmt.Fprintf(&b, "evidence: %s\n", line)
	}
	if r.ViolationCount > 0 {
		fmt.Fprintf(&b, "violations: %d over %s\n", r.ViolationCount, fmtDur(r.ViolationTime))
		for i, v := range r.Violations {
			fmt.Fprintf(&b, "violation %d: %s to %s, %s, %d events: %s\n", i+1, fmtTime(v.Interval.From), fmtTime(v.Interval.To), strings.Join(v.Nodes, " "), len(v.Evidence), v.Explanation)
		}
	}
	if len(r.Figures) > 0 {
		fig, _ := json.Marshal(r.Figures)
		fmt.Fprintf(&b, "figures: %s\n", fig)
	}
	return b.String()
}

// electionChecks are the checks that judge elections: every check but the
// mutual-exclusion, key-value, set and echo ones, which have nothing to judge
// in an election's history.
func electionChecks() []Check {
	var out []Check
	for _, c := range All() {
		if !strings.HasPrefix(c.Name, "mutex-") && c.Name != "fencing" && !slices.Contains(KVDefaults, c.Name) && !slices.Contains(EchoDefaults, c.Name) && !slices.Contains(SetDefaults, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// termChecks are the checks that judge terms: they are unknown on a
// history whose leader reports carry none.
var termChecks = []string{"one-leader-per-term", "stale-leader"}

// hasTerms reports whether any leader report of h carries a term.
func hasTerms(h *history.History) bool {
	for _, e := range h.Events {
		if e.Kind == history.KindReport && e.What == history.ReportLeader && e.Term != nil {
			return true
		}
	}
	return false
}
