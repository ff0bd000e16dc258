package needs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"not a record\n\n", ""},
		{"chromium\tTestReport\n", "coup: 1 test skipped for want of Debian packages (chromium 1); to run them: apt-get install chromium"},
		{"zookeeper\tTestA\netcd-server\tTestA\nzookeeper\tTestB\nzookeeper\tTestA\n",
			"coup: 3 tests skipped for want of Debian packages (etcd-server 1, zookeeper 2); to run them: apt-get install etcd-server zookeeper"},
	} {
		if got := Line(strings.NewReader(c.in)); got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// `go test` on a package whose tests need packages that are not
// installed passes, and its output ends with the one line that names
// them; a second run is not served from the cache, so it names them
// again; and nothing is left in the module or the temporary folder.
func TestGoTestEndsWithTheLine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	want := "coup: 3 tests skipped for want of Debian packages (coup-no-other-package 1, coup-no-such-package 2); to run them: apt-get install coup-no-other-package coup-no-such-package"
	for run := 1; run <= 2; run++ {
		cmd := exec.Command("go", "test", "./internal/needs/testdata/skipper")
		cmd.Dir = root
		// Output waits for every writer of the pipe, the watcher too.
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run %d: go test: %v\n%s", run, err, out)
		}
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "ok ") || strings.Contains(lines[0], "(cached)") || lines[1] != want {
			t.Errorf("run %d: go test printed\n%s\nwant an uncached ok line, then\n%s", run, out, want)
		}
		pid := strconv.Itoa(cmd.Process.Pid)
		for _, f := range []string{filepath.Join(root, ".coup-needs-"+pid), filepath.Join(os.TempDir(), "coup-needs-"+pid)} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("run %d: %s was left", run, f)
			}
		}
	}
}

// Every Debian package a test of coup's, or a test's helper, names is in
// the README's install command and installed by CI.
func TestEveryPackageIsNamed(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`apt-get install ([^`]*)`").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README names no apt-get install command")
	}
	named := strings.Fields(string(m[1]))
	call := regexp.MustCompile(`(?:needs|debian)\.(?:(?:Program|File|Python)\(t, "[^"]*", |Skip\(t, )"([^"]+)"`)
	found := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		// Tests' helpers (internal/slurmtest) call needs too.
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, c := range call.FindAllSubmatch(b, -1) {
			found++
			pkg := string(c[1])
			if !slices.Contains(named, pkg) {
				t.Errorf("%s needs %s, which the README's install command does not name", path, pkg)
			}
			if !strings.Contains(string(ci), "missing $missing "+pkg+"\"") && !strings.Contains(string(ci), "missing=\"$missing "+pkg+"\"") {
				t.Errorf("%s needs %s, which .ci/run does not install", path, pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 5 {
		t.Errorf("found %d uses of needs in coup's tests, want the five known at least", found)
	}
}
