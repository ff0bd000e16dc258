// Package skipper is run by needs' own test: its tests need Debian
// packages that are never installed, so `go test` on it ends with the
// one line that names them.
package skipper

import (
	"testing"

	"github.com/coupharness/coup/internal/needs"
)

func TestNeedsAProgram(t *testing.T) {
	needs.Program(t, "coup-no-such-program", "coup-no-such-package")
	t.Fatal("ran without its program")
}

func TestNeedsAFile(t *testing.T) {
	needs.File(t, "/coup/no/such/file", "coup-no-such-package")
	t.Fatal("ran without its file")
}

func TestNeedsAnother(t *testing.T) {
	needs.Program(t, "coup-no-such-program-either", "coup-no-other-package")
	t.Fatal("ran without its program")
}

func TestNeedsNothing(t *testing.T) {
	if needs.Program(t, "go", "golang") == "" {
		t.Fatal("go is installed but not found")
	}
}
