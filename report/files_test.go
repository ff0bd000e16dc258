package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/verdict"
)

// The documents checks make land in the run's folder under their base
// names, and nowhere else.
func TestWriteCheckFiles(t *testing.T) {
	dir := t.TempDir()
	res := &verdict.Results{Order: []string{"a", "b"}, Checks: map[string]checks.Result{
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
