package main

// End-to-end tests of the command line: help, flags anywhere, --seed and
// --set, list, the JUnit file and summary.json, signals, and what reaches
// the console from a hostile history.

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
)

// Every command prints its own usage for --help, -h and `coup help CMD`,
// on stdout, and exits 0.
func TestHelpForEveryCommand(t *testing.T) {
	for _, c := range commands {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			r := coup(t, args...)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "usage: coup "+c.name) || r.stderr != "" {
				t.Errorf("coup %s: exit %d, stdout %.60q, stderr %.60q; want 0 and the usage of %s on stdout", strings.Join(args, " "), r.code, r.stdout, r.stderr, c.name)
			}
		}
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}} {
		if r := coup(t, args...); r.code != 0 || !strings.Contains(r.stdout, "coup run") {
			t.Errorf("coup %s: exit %d, want 0 and the general usage", args, r.code)
		}
	}
	r := coup(t, "help", "rn")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown command "rn" (did you mean "run"?)`) {
		t.Errorf("coup help rn: exit %d, stderr %q", r.code, r.stderr)
	}
	r = coup(t, "chekc")
	if r.code != 2 || !strings.Contains(r.stderr, `(did you mean "check"?)`) {
		t.Errorf("coup chekc: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := coup(t, args...)
		if r.code != 0 || !regexp.MustCompile(`^coup \S+.* \(go1\.\S+ \w+/\w+\)\n$`).MatchString(r.stdout) {
			t.Errorf("coup %s: exit %d, stdout %q", args[0], r.code, r.stdout)
		}
	}
}

// A bad flag, before or after the arguments, is a usage error for every
// command: exit 2, the flag named, the usage on stderr.
func TestBadFlagsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"run", "x.toml", "--nope"}, {"check", "--nope", "h.jsonl"}, {"sim", "x.toml", "--nope"},
		{"list", "--nope"}, {"node", "--nope"}, {"algorithms", "--nope"}, {"version", "--nope"},
		{"run", "--repeat", "0", "x.toml"}, {"run", "x.toml", "--repeat"},
	} {
		r := coup(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "coup "+args[0]+":") || !strings.Contains(r.stderr, "usage: coup "+args[0]) {
			t.Errorf("coup %s: exit %d, stderr %q; want 2, the problem and the usage", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// quick is a short election scenario, whose recovery window (the bound
// of termination) allows a loaded machine: an election of three
// processes took more than 150ms with two busy loops beside every test.
const quick = `algorithm = "chang-roberts"
nodes = 3
duration = "150ms"
recovery = "600ms"
`

func writeScenario(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// --seed and --set reach the run, after the file or before it, and the
// run records them; bad ones stop before any run with exit 2 and the flag
// named.
func TestRunSeedAndSet(t *testing.T) {
	file := writeScenario(t, t.TempDir(), "short.toml", quick)
	r := coup(t, "run", file, "--seed", "42", "--quiet", "--set", "nodes=4", "--set", "network.latency=3ms", "--set", "name=overridden")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	h, err := history.ReadFile(filepath.Join(r.store, "overridden", "latest", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Meta.Seed != 42 || len(h.Meta.Nodes) != 4 {
		t.Errorf("history meta: seed %d, %d nodes; want 42 and 4", h.Meta.Seed, len(h.Meta.Nodes))
	}
	if strings.Contains(r.stdout, "nodes up") {
		t.Errorf("--quiet after the file was ignored:\n%s", r.stdout)
	}

	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--set", "network.latency=5xs"}, `--set network.latency=5xs: bad duration "5xs"`},
		{[]string{"--seed", "x"}, `--seed x: want an integer, got "x"`},
		{[]string{"--set", "nodes=0"}, "--set nodes=0: must be at least 1, got 0"},
		{[]string{"--set", "netwrok.latency=1ms"}, "--set netwrok.latency=1ms: unknown key netwrok.latency (did you mean network.latency?)"},
		{[]string{"--set", "checks.termination=2s"}, "--set checks.termination=2s: 2s is longer than the recovery window"},
		{[]string{"--set", "algorithm=chang-robert"}, `(did you mean "chang-roberts"?`},
		{[]string{"--set", "nodes"}, "--set nodes: want key=value"},
	}
	for _, tt := range bad {
		r := coup(t, append([]string{"run", file}, tt.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
			t.Errorf("coup run %s: exit %d, stderr %q; want 2 and %q, and no run", strings.Join(tt.args, " "), r.code, r.stderr, tt.want)
		}
	}
}

// coup list prints one aligned row per scenario: name, algorithm, nodes,
// faults and the expected outcome; a file that does not load makes the
// exit code 2 without hiding the others.
func TestList(t *testing.T) {
	dir := t.TempDir()
	writeScenario(t, dir, "a.toml", quick)
	writeScenario(t, dir, "b-crash.toml", quick+"[[faults]]\nkind = \"crash\"\ntarget = \"n2\"\nat = \"10ms\"\n[[faults]]\nkind = \"partition\"\nshape = \"isolate\"\ntarget = \"leader\"\n[expect]\nvalid = false\nviolations = [\"termination\"]\n")
	r := coup(t, "list", dir)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	want := [][]string{
		{"SCENARIO", "ALGORITHM", "NODES", "FAULTS", "EXPECTED"},
		{"a", "chang-roberts", "3", "none", "valid"},
		{"b-crash", "chang-roberts", "3", "crash n2, partition isolate leader", "invalid: termination fail"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), r.stdout)
	}
	header := lines[0]
	for i, row := range want {
		for j, cellText := range row {
			col := strings.Index(header, want[0][j])
			if !strings.HasPrefix(lines[i][col:], cellText) {
				t.Errorf("line %d, column %s: %q, want %q at column %d", i, want[0][j], lines[i][col:], cellText, col)
			}
		}
	}

	// The default folder is scenarios/, and a bad file is reported.
	r = coup(t, "list", "--help")
	if r.code != 0 {
		t.Errorf("list --help: exit %d", r.code)
	}
	writeScenario(t, dir, "c-bad.toml", "algoritm = \"bully\"\n")
	r = coup(t, "list", dir)
	if r.code != 2 || !strings.Contains(r.stderr, "c-bad.toml:1:1: algoritm: unknown key (did you mean algorithm?)") || !strings.Contains(r.stdout, "b-crash") {
		t.Errorf("with a bad file: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	abs, _ := filepath.Abs(filepath.Join("..", "..", "scenarios"))
	cat := coup(t, "list", abs)
	if cat.code != 0 || !strings.Contains(cat.stdout, "bully-coordinator-paused") {
		t.Errorf("the catalogue: exit %d, %s", cat.code, cat.stderr)
	}
}

// A catalogue run writes the JUnit file (one case per run, the
// unexpected one a failure whose message is the check's sentence, with
// the store path) and summary.json at the store's root.
func TestJUnitAndSummary(t *testing.T) {
	dir := t.TempDir()
	good := writeScenario(t, dir, "good.toml", quick)
	// Every message lost from the start: no election can finish.
	bad := writeScenario(t, dir, "bad.toml", quick+"[[faults]]\nkind = \"loss\"\nprobability = 1.0\n")
	junit := filepath.Join(dir, "out", "junit.xml")
	r := coup(t, "run", "--junit", junit, "--quiet", good, bad)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (one run unexpected)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "2 runs: 1 as expected, 1 unexpected, 0 unknown, 0 failed to start, 0 not run (exit 1)") {
		t.Errorf("no totals line matching the exit code:\n%s", r.stdout)
	}
	if strings.ContainsAny(r.stdout, "\r\x1b") {
		t.Errorf("a progress line was drawn off a terminal:\n%q", r.stdout)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name      string  `xml:"name,attr"`
				Classname string  `xml:"classname,attr"`
				Time      float64 `xml:"time,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 2 {
		t.Fatalf("junit: %d tests, %d failures:\n%s", doc.Tests, doc.Failures, b)
	}
	pass, fail := doc.Suites[0].Cases[0], doc.Suites[0].Cases[1]
	if pass.Name != "good" || pass.Failure != nil || pass.Time <= 0 || fail.Name != "bad" || fail.Failure == nil {
		t.Fatalf("cases %+v", doc.Suites[0].Cases)
	}
	if !strings.HasPrefix(fail.Failure.Message, "termination: unexpected violation: ") {
		t.Errorf("failure message %q, want termination's sentence", fail.Failure.Message)
	}
	store := regexp.MustCompile(`store: (\S+)`).FindStringSubmatch(fail.Failure.Text)
	if store == nil {
		t.Fatalf("failure text %q has no store path", fail.Failure.Text)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(r.store), store[1], "results.json")); err != nil {
		t.Errorf("the store path %s: %v", store[1], err)
	}

	var sum struct {
		Finished bool           `json:"finished"`
		ExitCode int            `json:"exit_code"`
		Totals   map[string]int `json:"totals"`
		Runs     []struct {
			Scenario, File, Outcome, Store string
			Valid                          any
			ExitCode                       int   `json:"exit_code"`
			Duration                       int64 `json:"duration_ns"`
		} `json:"runs"`
	}
	sb, err := os.ReadFile(filepath.Join(r.store, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sb, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Finished || sum.ExitCode != 1 || sum.Totals["runs"] != 2 || sum.Totals["unexpected"] != 1 || len(sum.Runs) != 2 {
		t.Fatalf("summary.json: %s", sb)
	}
	if run := sum.Runs[1]; run.Scenario != "bad" || run.File != bad || run.Outcome != "unexpected" || run.Valid != false || run.ExitCode != 1 || run.Duration <= 0 || run.Store == "" {
		t.Errorf("second run in summary.json: %+v", run)
	}

	// A single run writes no summary.json, but the JUnit file when asked.
	junit1 := filepath.Join(dir, "one.xml")
	one := coup(t, "run", good, "--quiet", "--junit", junit1)
	if _, err := os.Stat(filepath.Join(one.store, "summary.json")); err == nil || one.code != 0 {
		t.Errorf("a single run: exit %d, summary.json %v", one.code, err)
	}
	if b, err := os.ReadFile(junit1); err != nil || !strings.Contains(string(b), `tests="1"`) {
		t.Errorf("a single run's JUnit file: %v\n%s", err, b)
	}
	// A JUnit path that cannot be written stops before any run.
	nowhere := coup(t, "run", good, "--junit", filepath.Join(good, "x.xml"))
	if nowhere.code != 2 || nowhere.stdout != "" {
		t.Errorf("an unwritable JUnit path: exit %d, stdout %q", nowhere.code, nowhere.stdout)
	}
}

// startRun starts `coup run args` and returns the command and its output
// so far; the caller waits for it.
func startRun(t *testing.T, tag string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(coupBin, append([]string{"run"}, args...)...)
	cmd.Env = append(os.Environ(), tag)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// waitFor polls until cond holds, or fails the test after 20 seconds.
func waitFor(t *testing.T, cmd *exec.Cmd, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("never saw %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatal(err)
	}
	return ee.ExitCode()
}

var printedExit = regexp.MustCompile(`\(exit (\d)\)`)

// An interrupted run is never "unexpected": SIGINT in the middle of a run
// that expects a violation gives exit 3 whatever the prefix shows, and the
// verdict line printed says exit 3 too.
func TestInterruptedRunIsUnknown(t *testing.T) {
	buildMemberlist(t)
	for _, name := range []string{"bully-coordinator-paused.toml", "memberlist-partition.toml"} {
		t.Run(name, func(t *testing.T) {
			tag := tagged(t)
			cmd, out := startRun(t, tag, "--store", t.TempDir(), scenarioPath(t, name))
			// Interrupt when the fault begins: the violation the file
			// expects has not happened yet, and the nodes disagree.
			waitFor(t, cmd, "the fault begin", func() bool { return strings.Contains(out.String(), "nemesis: ") })
			cmd.Process.Signal(syscall.SIGINT)
			code := exitCode(t, cmd.Wait())
			checkNoSurvivors(t, tag)
			got := out.String()
			if code != 3 {
				t.Errorf("exit %d, want 3\n%s", code, got)
			}
			if !regexp.MustCompile(`valid=\w+, unknown \(exit 3\)`).MatchString(got) || !strings.Contains(got, "in the recorded prefix") && !strings.Contains(got, "no end event") {
				t.Errorf("the verdict line does not say unknown and exit 3, with a note on the prefix:\n%s", got)
			}
			// The run was cut short: its prefix was checked, and no
			// verdict of it stands.
			if !strings.Contains(got, "coup: interrupted: the nodes were stopped and the recorded prefix checked (exit 3)") || strings.Contains(got, "verdict stands") {
				t.Errorf("the last line does not say the run was cut short:\n%s", got)
			}
			for _, m := range printedExit.FindAllStringSubmatch(got, -1) {
				if m[1] != "3" {
					t.Errorf("printed %q but exited %d:\n%s", m[0], code, got)
				}
			}
		})
	}
}

// A signal that arrives after the run was recorded, while its history is
// checked, does not change the verdict: what is printed is what coup
// exits with.
func TestSignalWhileCheckingKeepsPrintedExit(t *testing.T) {
	store := t.TempDir()
	tag := tagged(t)
	// A lock workload: porcupine has some operations to check. Only the
	// safety checks, whose verdict no slow grant on a loaded machine can
	// change (mutex-progress' 200ms bound can).
	file := writeScenario(t, t.TempDir(), "lock.toml", `algorithm = "ricart-agrawala"
nodes = 4
duration = "400ms"
recovery = "200ms"
[workload]
rate = 400
hold = "1ms"
[checks]
run = ["mutex-linearizable", "mutex-cs"]
`)
	cmd, out := startRun(t, tag, "--store", store, "--quiet", file)
	var dir string
	waitFor(t, cmd, "the run's folder", func() bool {
		m, _ := filepath.Glob(filepath.Join(store, "lock", "2*"))
		if len(m) > 0 {
			dir = m[0]
		}
		return dir != ""
	})
	hist := filepath.Join(dir, "history.jsonl")
	// The end event is recorded once the nodes are stopped, before the
	// checks run.
	waitFor(t, cmd, "the end event", func() bool {
		b, _ := os.ReadFile(hist)
		return strings.Contains(string(b), `"kind":"end"`)
	})
	cmd.Process.Signal(syscall.SIGINT)
	code := exitCode(t, cmd.Wait())
	checkNoSurvivors(t, tag)
	got := out.String()
	m := printedExit.FindAllStringSubmatch(got, -1)
	if len(m) == 0 {
		t.Fatalf("no verdict printed (exit %d):\n%s", code, got)
	}
	for _, x := range m {
		if x[1] != string(rune('0'+code)) {
			t.Errorf("printed %q but exited %d:\n%s", x[0], code, got)
		}
	}
	if code != 0 {
		t.Errorf("exit %d: a recorded run's verdict is as expected here\n%s", code, got)
	}
	if !strings.Contains(got, "interrupted after the run had been recorded; its verdict stands") {
		t.Logf("the signal arrived after coup had finished; nothing to check:\n%s", got)
	}
}

// What a node reported reaches the console escaped: a crafted history
// whose leader names carry escape sequences and line breaks cannot forge a
// verdict line.
func TestHostileHistoryIsEscaped(t *testing.T) {
	forged := "\u001b[2K\r\nx: valid=true, as expected (exit 0)\n"
	lines := []map[string]any{
		{"i": 0, "t": 1, "kind": "meta", "meta": map[string]any{"scenario": "x" + forged, "algorithm": "bully", "nodes": []string{"n1", "n2"},
			"ids": []int{1, 2}, "checks": []string{"two-leaders", "agreement"}, "expect": map[string]any{"valid": true}}},
		{"i": 1, "t": 2, "kind": "process", "node": "n1", "what": "start", "incarnation": 1},
		{"i": 2, "t": 3, "kind": "process", "node": "n2", "what": "start", "incarnation": 1},
		{"i": 3, "t": 4, "kind": "report", "node": "n1", "what": "leader", "value": "n1" + forged},
		{"i": 4, "t": 5, "kind": "report", "node": "n2", "what": "leader", "value": "n2"},
		{"i": 5, "t": 6, "kind": "msg", "what": "send", "msg": 1, "src": "n1", "dest": "n2", "mtype": "t" + forged},
		{"i": 6, "t": 1000, "kind": "end", "counts": map[string]int{"messages.sent": 1, "messages.sent.t" + forged: 1}},
	}
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	b.WriteString("not json \x1b[2K\n")
	file := filepath.Join(t.TempDir(), "history.jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := coup(t, "check", file)
	if r.code != 1 {
		t.Errorf("exit %d, want 1 (agreement fails)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.ContainsAny(r.stdout+r.stderr, "\x1b\r") {
		t.Errorf("a control character reached the console:\n%q", r.stdout)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "x: valid=true") {
			t.Errorf("forged line %q in\n%s", l, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, `\x1b[2K\r\nx: valid=true, as expected (exit 0)\n`) {
		t.Errorf("the hostile text is not shown escaped:\n%s", r.stdout)
	}

	// The flag may follow the history; the JSON keeps the node's text as
	// it was, escaped by JSON.
	j := coup(t, "check", file, "--json")
	var res struct {
		Scenario string `json:"scenario"`
		Outcome  string `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(j.stdout), &res); err != nil || j.code != 1 || res.Scenario != "x"+forged || res.Outcome != "unexpected" {
		t.Errorf("coup check FILE --json: exit %d, %v, %+v", j.code, err, res)
	}
}

// On a terminal, a catalogue run shows an overall k/N progress line, and
// clears it at the end. script(1) gives coup a terminal.
func TestProgressLineOnATerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed")
	}
	dir := t.TempDir()
	a := writeScenario(t, dir, "a.toml", quick)
	b := writeScenario(t, dir, "b.toml", quick)
	tag := tagged(t)
	cmd := exec.Command(script, "-q", "-e", "-c", strings.Join([]string{coupBin, "run", "--quiet", "--store", filepath.Join(dir, "store"), a, b}, " "), "/dev/null")
	cmd.Env = append(os.Environ(), tag, "TERM=xterm")
	outb, err := cmd.Output()
	code := exitCode(t, err)
	checkNoSurvivors(t, tag)
	out := string(outb)
	if code != 0 {
		t.Fatalf("exit %d\n%q", code, out)
	}
	for _, want := range []string{"[0/2] 0 as expected", "running a", "[1/2] 1 as expected", "running b", "\r\x1b[K"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, out)
		}
	}
	// The summary comes after the line was cleared for good.
	if i, j := strings.LastIndex(out, "\r\x1b[K"), strings.Index(out, "summary:"); i > j {
		t.Errorf("the progress line was drawn after the summary:\n%q", out)
	}
}

// A fault whose target does not exist when it is due (a leader when none
// claims to be one) does not happen; the run says so, in the real harness
// and in the simulator alike, and the count is in results.json.
func TestSkippedFaultIsSaid(t *testing.T) {
	file := writeScenario(t, t.TempDir(), "skip.toml", `algorithm = "chang-roberts"
nodes = 3
duration = "150ms"
recovery = "100ms"
[workload]
kind = "none"
[[faults]]
kind = "pause"
target = "leader"
at = "50ms"
for = "50ms"
[[faults]]
kind = "crash"
target = "n2"
at = "60ms"
[checks]
run = ["two-leaders"]
`)
	const said = "faults skipped: 1 fault occurrence did not happen, for want of a target"
	run := coup(t, "run", file)
	if run.code != 0 || !strings.Contains(run.stdout, said) || !strings.Contains(run.stdout, "pause start []: skipped, no target") {
		t.Errorf("coup run: exit %d, want 0 and the skipped pause said:\n%s%s", run.code, run.stdout, run.stderr)
	}
	b, err := os.ReadFile(filepath.Join(run.store, "skip", "latest", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Stats struct {
			Counts map[string]int64 `json:"counts"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(b, &res); err != nil || res.Stats.Counts["faults.skipped"] != 1 {
		t.Errorf("results.json counts %v (%v), want faults.skipped 1", res.Stats.Counts, err)
	}
	if page, err := os.ReadFile(filepath.Join(run.store, "skip", "latest", "report.html")); err != nil || !strings.Contains(string(page), "<th>faults skipped (no target)</th><td>1</td>") {
		t.Errorf("the report's counts do not show the skipped fault (%v)", err)
	}
	sim := coup(t, "sim", file)
	if sim.code != 0 || !strings.Contains(sim.stdout, said) {
		t.Errorf("coup sim: exit %d, want 0 and the skipped pause said:\n%s%s", sim.code, sim.stdout, sim.stderr)
	}
}
