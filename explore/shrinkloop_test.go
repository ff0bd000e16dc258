package explore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The failure a file was kept for is read from its head: a campaign's
// kept run, a shrunk scenario; a file that names none gives "".
func TestKeptSignature(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ text, want string }{
		{"# run 3 of a guided campaign of x.toml (seed 1): seed 3: pause n1 at 1s\n# signature: two-leaders: nodes both believed they were the leader (cut off; in force: partition)\nname = \"x\"\n",
			"two-leaders: nodes both believed they were the leader (cut off; in force: partition)"},
		{"# Shrunk by coup from x.toml, on processes:\n#   coup shrink x.toml\n# It fails as the original failed: agreement: nodes believe in different leaders\nname = \"x\"\n",
			"agreement: nodes believe in different leaders"},
		{"name = \"x\"\n# signature: not the head\n", ""},
	} {
		p := filepath.Join(dir, "s.toml")
		if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := keptSignature(p); got != tt.want {
			t.Errorf("%.40q…: %q, want %q", tt.text, got, tt.want)
		}
	}
}

// A run that did not fail says so plainly, not "fails as".
func TestRunOutcomeSaysWhenARunDidNotFail(t *testing.T) {
	for sig, want := range map[string]string{
		"": "as expected, no violation",
		"no violation: two-leaders held (a violation was expected)":                             "did not fail: two-leaders held (a violation was expected)",
		"no violation (one was expected)":                                                       "did not fail: no check found a violation, and one was expected",
		"termination: unknown":                                                                  "no verdict: termination: unknown",
		"two-leaders: nodes both believed they were the leader (at start-up, before any fault)": "fails as two-leaders: nodes both believed they were the leader (at start-up, before any fault)",
	} {
		if got := runOutcome(sig, nil); got != want || (strings.HasPrefix(got, "fails") && sig == "") {
			t.Errorf("%q: %q, want %q", sig, got, want)
		}
	}
}
