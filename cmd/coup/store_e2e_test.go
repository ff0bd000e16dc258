package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lastLine is the last line of out, without its newline.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// checkReport checks that a line ends with the absolute path of a report
// that exists, under root, and returns the path.
func checkReport(t *testing.T, line, prefix, root string) string {
	t.Helper()
	path, ok := strings.CutPrefix(line, prefix)
	if !ok {
		t.Fatalf("line %q does not begin %q", line, prefix)
	}
	if !filepath.IsAbs(path) || filepath.Base(path) != "report.html" || !strings.HasPrefix(path, root+string(filepath.Separator)) {
		t.Errorf("%q: want the absolute path of a report.html under %s", path, root)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Errorf("the report %s: %v", path, err)
	}
	return path
}

// The console of coup run ends with the absolute path of the report: the
// run's own for one run; for many, that of the run not as expected, or of
// the last run when every run was as expected.
func TestRunEndsWithTheReport(t *testing.T) {
	dir := t.TempDir()
	good := writeScenario(t, dir, "good.toml", quick)
	bad := writeScenario(t, dir, "bad.toml", quick+"[[faults]]\nkind = \"loss\"\nprobability = 1.0\n")
	store := filepath.Join(dir, "store")

	one := coupIn(t, dir, "run", "--quiet", good)
	if one.code != 0 {
		t.Fatalf("one run: exit %d\n%s%s", one.code, one.stdout, one.stderr)
	}
	p := checkReport(t, lastLine(one.stdout), "  report: ", store)
	if !strings.Contains(one.stdout, "  store: "+filepath.Dir(p)+"\n") {
		t.Errorf("the store line does not give the report's folder, absolute:\n%s", one.stdout)
	}

	all := coupIn(t, dir, "run", "--quiet", "--repeat", "2", good)
	if all.code != 0 {
		t.Fatalf("two runs: exit %d\n%s%s", all.code, all.stdout, all.stderr)
	}
	if !strings.Contains(all.stdout, "summary.json: "+filepath.Join(store, "summary.json")+"\n") {
		t.Errorf("summary.json is not given by its absolute path:\n%s", all.stdout)
	}
	checkReport(t, lastLine(all.stdout), "report of the last run: ", store)

	mixed := coupIn(t, dir, "run", "--quiet", good, bad)
	if mixed.code != 1 {
		t.Fatalf("a good and a bad run: exit %d, want 1\n%s%s", mixed.code, mixed.stdout, mixed.stderr)
	}
	p = checkReport(t, lastLine(mixed.stdout), "report of the run not as expected: ", store)
	if !strings.Contains(p, string(filepath.Separator)+"bad"+string(filepath.Separator)) {
		t.Errorf("%s is not the bad run's report", p)
	}
}

// Without --store, a run goes to $COUP_STORE, else to store/ at the root
// of the checkout (or module) that holds the working folder, else to
// ./store; --store wins over all.
func TestStoreHome(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	file := writeScenario(t, root, "quick.toml", quick)
	runIn := func(dir string, env []string, args ...string) {
		t.Helper()
		r := coupEnv(t, dir, env, append([]string{"run", "--quiet"}, args...)...)
		if r.code != 0 {
			t.Fatalf("in %s with %v: exit %d\n%s%s", dir, env, r.code, r.stdout, r.stderr)
		}
	}
	stored := func(store string) bool {
		_, err := os.Stat(filepath.Join(store, "quick", "latest", "report.html"))
		return err == nil
	}

	// No checkout: ./store, as before.
	runIn(sub, nil, file)
	if !stored(filepath.Join(sub, "store")) {
		t.Errorf("outside a checkout the run is not in ./store")
	}
	// A module: its root.
	if err := os.WriteFile(filepath.Join(root, "a", "go.mod"), []byte("module example.com/a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(sub, nil, file)
	if !stored(filepath.Join(root, "a", "store")) {
		t.Errorf("inside a module the run is not in the module's store/")
	}
	// A checkout around the module: the checkout's root wins.
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	runIn(sub, nil, file)
	if !stored(filepath.Join(root, "store")) {
		t.Errorf("inside a checkout the run is not in the checkout's store/")
	}
	// COUP_STORE, then --store.
	env := filepath.Join(t.TempDir(), "env-store")
	runIn(sub, []string{StoreEnv + "=" + env}, file)
	if !stored(env) {
		t.Errorf("the run is not in $%s", StoreEnv)
	}
	flag := filepath.Join(t.TempDir(), "flag-store")
	runIn(sub, []string{StoreEnv + "=" + env}, "--store", flag, file)
	if !stored(flag) {
		t.Errorf("the run is not in --store's folder")
	}
}
