package main

// End-to-end tests of Maelstrom's workloads with foreign nodes: the
// examples' scenarios in the catalogue (the go-kv store, the python
// election), run.sh building go-kv on first use, and an echo node.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coupharness/coup/history"
	debian "github.com/coupharness/coup/internal/needs"
)

var (
	buildOnce sync.Map // program -> *built
)

type built struct {
	once sync.Once
	bin  string
	err  error
}

// buildProgram builds the Go program in dir (a package path of this
// module, like "../../examples/go-kv") once, beside the coup binary (so
// that TestMain removes it).
func buildProgram(t *testing.T, name, dir string) string {
	t.Helper()
	v, _ := buildOnce.LoadOrStore(name, &built{})
	b := v.(*built)
	b.once.Do(func() {
		b.bin = filepath.Join(filepath.Dir(coupBin), name)
		out, err := exec.Command("go", "build", "-o", b.bin, dir).CombinedOutput()
		if err != nil {
			b.err = err
			t.Logf("%s", out)
		}
	})
	if b.err != nil {
		t.Fatalf("build %s: %v", name, b.err)
	}
	return b.bin
}

// goKV runs a go-kv scenario of the catalogue with the go-kv binary built
// by the test (rather than by run.sh, which builds into the source tree)
// and returns its results and history.
func goKV(t *testing.T, file string) (results, *history.History, string) {
	t.Helper()
	bin := buildProgram(t, "go-kv", "../../examples/go-kv")
	run := coup(t, "run", scenarioPath(t, file), "--set", `command=["`+bin+`"]`, "--set", "init_timeout=10s")
	if run.code != 0 {
		t.Fatalf("exit %d, want 0 (as expected)\n%s%s", run.code, run.stdout, run.stderr)
	}
	latest := filepath.Join(run.store, strings.TrimSuffix(file, ".toml"), "latest")
	h, err := history.ReadFile(filepath.Join(latest, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return readResults(t, latest), h, latest
}

// kvOps counts the lin-kv operation events of h by f and type, and
// checks that every value is in Jepsen's form, [k, v], as JSON.
func kvOps(t *testing.T, h *history.History) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, e := range h.Events {
		if e.Kind != history.KindOp {
			continue
		}
		n[e.F+" "+e.Type]++
		if e.Type == history.OpInvoke || e.Type == history.OpOK {
			var pair []json.RawMessage
			if json.Unmarshal([]byte(e.Value), &pair) != nil || len(pair) != 2 {
				t.Errorf("event %d: %s %s value %q is not [key, value]", e.Index, e.F, e.Type, e.Value)
			}
		}
	}
	return n
}

// The go-kv example with no faults: linearizable, one leader.
func TestGoKVLinearizable(t *testing.T) {
	res, h, latest := goKV(t, "go-kv.toml")
	kv := checkResult(t, res, "kv-linearizable")
	if kv.Valid != true {
		t.Errorf("kv-linearizable = %v, want true: %s", kv.Valid, kv.Explanation)
	}
	ops := kvOps(t, h)
	if ops["read ok"] < 20 || ops["write ok"] < 10 || ops["cas invoke"] < 10 {
		t.Errorf("too few operations to judge: %v", ops)
	}
	if h.Meta.Workload != "lin-kv" {
		t.Errorf("meta workload %q, want lin-kv", h.Meta.Workload)
	}
	if _, err := os.Stat(filepath.Join(latest, "kv-linearizable.html")); err == nil {
		t.Error("a linearizable run has porcupine's page")
	}
}

// The go-kv example with its leader isolated: the old leader serves stale
// reads while a new one, in a higher term, accepts writes. Not
// linearizable, with porcupine's page in the store; one leader per term;
// two leaders at once, in two terms; timed-out operations judged as
// maybe-happened.
func TestGoKVStaleRead(t *testing.T) {
	res, h, latest := goKV(t, "go-kv-stale-read.toml")
	kv := checkResult(t, res, "kv-linearizable")
	if kv.Valid != false || !strings.Contains(kv.Explanation, "kv-linearizable.html") || len(kv.Evidence) < 2 {
		t.Errorf("kv-linearizable = %v, want false with evidence and the page: %s", kv.Valid, kv.Explanation)
	}
	if n, _ := kv.Figures["indeterminate"].(float64); n < 1 {
		t.Errorf("no timed-out operation (figures %v): the isolated leader's writes should time out", kv.Figures)
	}
	page, err := os.ReadFile(filepath.Join(latest, "kv-linearizable.html"))
	if err != nil || !strings.Contains(string(page), "leader (term 1)") {
		t.Errorf("porcupine's page is missing or does not show the leader's term: %v", err)
	}
	if v := checkValid(t, res, "one-leader-per-term"); v != true {
		t.Errorf("one-leader-per-term = %v, want true", v)
	}
	two := checkResult(t, res, "two-leaders")
	if two.Valid != false || !strings.Contains(two.Explanation, "was a stale leader") {
		t.Errorf("two-leaders = %v, want false naming a stale leader: %s", two.Valid, two.Explanation)
	}
	stale := checkResult(t, res, "stale-leader")
	if w, _ := stale.Figures["longest_ns"].(float64); w < 1e8 {
		t.Errorf("stale-leader window %vns, want the isolated leader's, over 100ms: %s", w, stale.Explanation)
	}
	ops := kvOps(t, h)
	if ops["write info"]+ops["cas info"] == 0 {
		t.Errorf("no write or cas timed out: %v", ops)
	}
	// coup check, from the history alone, says the same.
	check := coup(t, "check", filepath.Join(latest, "history.jsonl"))
	if !strings.Contains(check.stdout, "kv-linearizable") || !strings.Contains(check.stdout, "not linearizable against a key-value store") {
		t.Errorf("coup check does not judge the history alike:\n%s%s", check.stdout, check.stderr)
	}
	// Its report, written elsewhere, has porcupine's page beside it, so
	// the page's link works.
	report := filepath.Join(t.TempDir(), "again", "report.html")
	if err := os.MkdirAll(filepath.Dir(report), 0o755); err != nil {
		t.Fatal(err)
	}
	coup(t, "check", "--report", report, filepath.Join(latest, "history.jsonl"))
	again, err := os.ReadFile(filepath.Join(filepath.Dir(report), "kv-linearizable.html"))
	if err != nil || string(again) != string(page) {
		t.Errorf("coup check --report left no copy of porcupine's page beside the report: %v", err)
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), `href="kv-linearizable.html"`) {
		t.Errorf("the report does not link porcupine's page: %v", err)
	}
}

// run.sh builds go-kv on first use, from the scenario's folder, whatever
// the current directory, and the node it starts stays in coup's hands.
// The example is copied into a module of its own in a temporary folder,
// as a user who starts from it would.
func TestGoKVRunScriptBuilds(t *testing.T) {
	root := t.TempDir()
	ex := filepath.Join(root, "examples", "go-kv")
	if err := os.MkdirAll(ex, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"main.go", "run.sh"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "go-kv", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ex, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module mykv\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := filepath.Join(root, "scenarios")
	if err := os.MkdirAll(sc, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(sc, "kv.toml")
	if err := os.WriteFile(file, []byte(`command = ["sh", "../examples/go-kv/run.sh"]
init_timeout = "60s"
nodes = 3
duration = "1.5s"
recovery = "200ms"

[workload]
kind = "lin-kv"
at = "800ms"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := coup(t, "run", file)
	if run.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", run.code, run.stdout, run.stderr)
	}
	if _, err := os.Stat(filepath.Join(ex, "go-kv")); err != nil {
		t.Errorf("run.sh left no binary: %v", err)
	}
	res := readResults(t, filepath.Join(run.store, "kv", "latest"))
	if v := checkValid(t, res, "kv-linearizable"); v != true {
		t.Errorf("kv-linearizable = %v, want true (the default check of a lin-kv workload)", v)
	}
	if len(res.Checks) != 1 {
		t.Errorf("%d checks ran, want kv-linearizable alone", len(res.Checks))
	}
}

// The python-election example: valid with its leader crashed; with its
// leader isolated, two leaders in one term.
func TestPythonElection(t *testing.T) {
	debian.Program(t, "python3", "python3")
	run := coup(t, "run", scenarioPath(t, "python-election.toml"), scenarioPath(t, "python-election-lonely.toml"))
	if run.code != 0 {
		t.Fatalf("exit %d, want 0 (both as expected)\n%s%s", run.code, run.stdout, run.stderr)
	}
	valid := readResults(t, filepath.Join(run.store, "python-election", "latest"))
	if valid.Valid != true {
		t.Errorf("python-election: valid = %v, want true", valid.Valid)
	}
	lonely := readResults(t, filepath.Join(run.store, "python-election-lonely", "latest"))
	one := checkResult(t, lonely, "one-leader-per-term")
	if one.Valid != false || !strings.Contains(one.Explanation, "both claimed leadership in term") {
		t.Errorf("one-leader-per-term = %v, want false: %s", one.Valid, one.Explanation)
	}
}

// An echo node: every echo matches; with a bug, the echo check finds the
// one that came back with another payload.
func TestEchoWorkload(t *testing.T) {
	bin := buildProgram(t, "echonode", "./testdata/echonode")
	dir := t.TempDir()
	scenario := func(name, args string) string {
		file := filepath.Join(dir, name+".toml")
		body := `command = ["` + bin + `"` + args + `]
nodes = 2
duration = "400ms"
recovery = "100ms"

[workload]
kind = "echo"
rate = 200
`
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	run := coup(t, "run", scenario("echo", ""), scenario("echo-stale", `, "-bug", "stale"`), "--quiet")
	if run.code != 1 {
		t.Fatalf("exit %d, want 1 (the stale echo is unexpected)\n%s%s", run.code, run.stdout, run.stderr)
	}
	good := readResults(t, filepath.Join(run.store, "echo", "latest"))
	if c := checkResult(t, good, "echo"); c.Valid != true || c.Figures["ok"].(float64) < 20 {
		t.Errorf("echo = %v with %v ok, want true with many: %s", c.Valid, c.Figures["ok"], c.Explanation)
	}
	bad := readResults(t, filepath.Join(run.store, "echo-stale", "latest"))
	if c := checkResult(t, bad, "echo"); c.Valid != false || !strings.Contains(c.Explanation, "came back with another payload") || len(c.Evidence) != 2 {
		t.Errorf("echo = %v, want false with the echo and its answer: %s", c.Valid, c.Explanation)
	}
}
