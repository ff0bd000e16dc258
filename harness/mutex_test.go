package harness

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"coup/checks"
	"coup/harness/history"
)

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

// The documents checks make land in the run's folder under their base
// names, and nowhere else.
func TestWriteCheckFiles(t *testing.T) {
	dir := t.TempDir()
	res := &Results{Order: []string{"a", "b"}, Checks: map[string]checks.Result{
		"a": {Files: []checks.File{{Name: "a.html", Data: []byte("<html>a")}}},
		"b": {Files: []checks.File{{Name: "../escape me.html", Data: []byte("b")}}},
	}}
	if err := WriteCheckFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.html": "<html>a", "escape_me.html": "b"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape me.html")); err == nil {
		t.Error("a file escaped the run's folder")
	}
}
