package lifecycle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// Whatever a scenario is named, its runs are stored in a new folder inside
// the store, never above it and never in its root.
func TestRunDirStaysInTheStore(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"..", ".", "", "../../etc", "a/b", "/abs", ".hidden", "...", "ok-name_1.2"} {
		dir, err := NewRunDir(root, name, time.Now())
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil || strings.HasPrefix(rel, "..") || strings.Count(rel, string(filepath.Separator)) != 1 {
			t.Errorf("scenario %q is stored in %s, not in a folder of the store %s", name, dir, root)
		}
		if scen := filepath.Base(filepath.Dir(dir)); scen == "." || scen == ".." || strings.HasPrefix(scen, ".") {
			t.Errorf("scenario %q is stored under %q", name, scen)
		}
	}
	if got := SafeName("ok-name_1.2"); got != "ok-name_1.2" {
		t.Errorf("a safe name was changed to %q", got)
	}
}

// Saving a run points latest at it, but never replaces a file, a folder or
// a link that coup did not make.
func TestLatestReplacesOnlyItsOwnLink(t *testing.T) {
	root := t.TempDir()
	h := &history.History{Meta: history.Meta{Scenario: "s", Algorithm: "a"}}
	save := func() string {
		dir, err := NewRunDir(root, "s", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		r, err := verdict.Evaluate(h)
		if err != nil {
			t.Fatal(err)
		}
		var logged []string
		if err := Save(dir, r, h, func(f string, a ...any) { logged = append(logged, f) }); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	latest := filepath.Join(root, "s", "latest")
	first := save()
	if target, err := os.Readlink(latest); err != nil || target != filepath.Base(first) {
		t.Fatalf("latest -> %q (%v), want %q", target, err, filepath.Base(first))
	}
	second := save()
	if target, _ := os.Readlink(latest); target != filepath.Base(second) {
		t.Fatalf("latest -> %q, want the newer %q", target, filepath.Base(second))
	}
	for name, make := range map[string]func() error{
		"a file":    func() error { return os.WriteFile(latest, []byte("mine"), 0o644) },
		"a folder":  func() error { return os.Mkdir(latest, 0o755) },
		"a symlink": func() error { return os.Symlink("/etc/passwd", latest) },
	} {
		_ = os.RemoveAll(latest)
		if err := make(); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Lstat(latest)
		save()
		after, err := os.Lstat(latest)
		if err != nil || after.Mode() != before.Mode() || after.ModTime() != before.ModTime() {
			t.Errorf("%s named latest was replaced", name)
		}
	}
}
