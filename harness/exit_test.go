package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// A node that exits on its own is a finding: the console says so at once
// (who, the status, the end of its log), results.json holds it, and the
// run is unexpected (exit 1) though every check holds; a scenario that
// expects the exit ([expect] exits) is as expected.
func TestOwnExitIsAFinding(t *testing.T) {
	for _, c := range []struct {
		name, expect string
		code         int
		outcome      string
	}{
		{"unexpected", "", verdict.ExitUnexpected, verdict.Unexpected},
		{"expected", "[expect]\nexits = [\"n2\"]\n", verdict.ExitOK, verdict.AsExpected},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, err := scenario.Parse(t.Name()+".toml", hostileScenario("exit", 2, c.expect))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var console bytes.Buffer
			res, dir, err := Run(ctx, sc, Options{Store: t.TempDir(), NodeCommand: []string{os.Args[0]}, Progress: &console})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("console:\n%s\nsummary:\n%s", console.String(), res.Summary())
			if left := children(dir); len(left) > 0 {
				t.Errorf("node processes outlived the run: %v", left)
			}
			if res.ExitCode != c.code || res.Outcome != c.outcome {
				t.Errorf("got %s (exit %d), want %s (exit %d): %s", res.Outcome, res.ExitCode, c.outcome, c.code, res.Summary())
			}
			if res.Valid != checks.True {
				t.Errorf("valid: got %v, want true (no check fails: the exit is a finding of its own)", res.Valid)
			}
			line := "n2 exited on its own at "
			if !strings.Contains(console.String(), line) || !strings.Contains(console.String(), "exit status 3") || !strings.Contains(console.String(), "| about to exit: boom") {
				t.Errorf("the console does not say n2 exited, with its status and its log's end:\n%s", console.String())
			}
			raw, err := os.ReadFile(filepath.Join(dir, lifecycle.ResultsFile))
			if err != nil {
				t.Fatal(err)
			}
			var saved struct {
				Exits []verdict.Exit `json:"exits"`
			}
			if err := json.Unmarshal(raw, &saved); err != nil {
				t.Fatal(err)
			}
			if len(saved.Exits) != 1 {
				t.Fatalf("results.json's exits: %+v, want n2's", saved.Exits)
			}
			x := saved.Exits[0]
			if x.Node != "n2" || x.Status != "exit status 3" || x.Time <= 0 || x.Expected != (c.expect != "") || !strings.Contains(strings.Join(x.Log, "\n"), "about to exit: boom") {
				t.Errorf("results.json's exit: %+v", x)
			}
			if c.expect == "" && !strings.Contains(res.Headline, "n2 at ") {
				t.Errorf("the headline does not name n2's exit: %s", res.Headline)
			}
			if !strings.Contains(res.Summary(), "exit: n2 exited on its own") {
				t.Errorf("the summary does not name n2's exit:\n%s", res.Summary())
			}
		})
	}
}
