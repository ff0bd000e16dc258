package coup_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A module outside coup's, that requires coup by its module path (a
// replace points it at this clone, and the module cache or the module
// proxy serves the rest), builds a test of its own toy machines (testdata/toy): the
// safe one passes 100 seeds, the unsafe one fails with a replay line,
// and the replay line, run as printed, fails at the same seed with the
// same history. The same module builds the coup command by its path.
func TestExternalModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own: seconds")
	}
	dir := toyModule(t)

	out, err := goCmd(t, dir, nil, "test", "-count=1", "-v", ".")
	if err == nil {
		t.Fatalf("go test passed, but TestHighest should fail:\n%s", out)
	}
	for _, want := range []string{"--- PASS: TestFixed", "--- FAIL: TestHighest", "two-leaders false"} {
		if !strings.Contains(out, want) {
			t.Errorf("go test's output lacks %q:\n%s", want, out)
		}
	}
	replay := regexp.MustCompile(`replay: (COUP_SEED=(\d+) go test -run '\^TestHighest\$' \.)\n`).FindStringSubmatch(out)
	hash := regexp.MustCompile(`history sha256 ([0-9a-f]{16})`).FindStringSubmatch(out)
	if replay == nil || hash == nil {
		t.Fatalf("no replay line or history hash for TestHighest in go test's output:\n%s", out)
	}
	if !strings.Contains(out, "store: store/toy-partition/") {
		t.Errorf("the failure does not name the run's store folder:\n%s", out)
	}

	// The replay line, as a user would paste it.
	again, err := goCmd(t, dir, nil, "sh", "-c", replay[1])
	if err == nil {
		t.Fatalf("the replay passed:\n%s", again)
	}
	if !strings.Contains(again, "seed "+replay[2]+": valid=false") || !strings.Contains(again, "history sha256 "+hash[1]) {
		t.Errorf("the replay of seed %s did not give history %s again:\n%s", replay[2], hash[1], again)
	}

	bin := filepath.Join(t.TempDir(), "coup")
	if out, err := goCmd(t, dir, nil, "build", "-o", bin, "github.com/coupharness/coup/cmd/coup"); err != nil {
		t.Fatalf("go build github.com/coupharness/coup/cmd/coup: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil || !strings.Contains(string(out), "coup") {
		t.Fatalf("the command built from a module that requires coup: coup version: %v\n%s", err, out)
	}
}

// toyModule writes testdata/toy into a temporary module that requires
// coup by its module path, replaced by this clone.
func toyModule(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	entries, err := os.ReadDir("testdata/toy")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata/toy", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mod := "module example.com/toy\n\ngo 1.26\n\nrequire github.com/coupharness/coup v0.0.0\n\nreplace github.com/coupharness/coup => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	// coup's own sums cover every module coup requires.
	sums, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goCmd runs the go command (or, when args[0] is "sh", a shell line) in
// dir. Modules come from the module cache, and what it lacks from the
// environment's module proxy: a fresh machine's cache is empty, and the
// toy module's graph holds go.mod files (of coup's dependencies' own
// dependencies) that coup's own build never reads.
func goCmd(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	name := "go"
	if args[0] == "sh" {
		name, args = args[0], args[1:]
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local",
		"COUP_SEED=", "COUP_SEEDS=", "COUP_SHRINK=", "COUP_STORE=")
	cmd.Env = append(cmd.Env, env...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}
