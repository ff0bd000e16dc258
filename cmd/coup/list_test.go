package main

import (
	"path/filepath"
	"reflect"
	"testing"
)

// A command's paths, made absolute when the scenario was loaded, are shown
// relative to the current directory where they lie under it.
func TestShortPaths(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	got := shortPaths([]string{
		"sh",
		filepath.Join(dir, "examples", "run.sh"),
		filepath.Join(filepath.Dir(dir), "elsewhere", "node.py"),
		"--flag=../x",
	})
	want := []string{
		"sh",
		filepath.Join("examples", "run.sh"),
		filepath.Join(filepath.Dir(dir), "elsewhere", "node.py"),
		"--flag=../x",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shortPaths = %q, want %q", got, want)
	}
}
