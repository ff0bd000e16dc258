package coup_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup"
	"github.com/coupharness/coup/scenario"
)

// beat is the toy machines' one message.
type beat struct{}

func (beat) Type() string { return "beat" }

// highest trusts the highest node it heard from in the last five beats
// (itself included): unsafe when a partition cuts the highest off.
// fixed trusts n1 always: safe.
var (
	highest = coup.Node{Name: "highest", New: toy(false), Messages: []coup.Msg{beat{}}}
	fixed   = coup.Node{Name: "fixed", New: toy(true), Messages: []coup.Msg{beat{}}}
)

func toy(fixed bool) func(p *coup.Params) (coup.Machine, error) {
	return func(p *coup.Params) (coup.Machine, error) {
		period, err := p.PositiveDuration("period", 20*time.Millisecond)
		if err != nil {
			return nil, err
		}
		return &toyMachine{fixed: fixed, period: period, heard: map[string]int{}}, p.Unused()
	}
}

type toyMachine struct {
	env    coup.Env
	fixed  bool
	period time.Duration
	beats  int
	heard  map[string]int
	leader string
}

func (m *toyMachine) Start(env coup.Env) {
	m.env = env
	if m.fixed {
		env.Report(coup.Report{What: "leader", Value: env.Nodes()[0]})
		return
	}
	m.Timeout("beat")
}

func (m *toyMachine) Receive(from string, _ coup.Msg) { m.heard[from] = m.beats }

func (m *toyMachine) Timeout(string) {
	m.beats++
	leader := m.env.Self()
	for _, n := range m.env.Nodes() {
		if n == leader {
			continue
		}
		if at, ok := m.heard[n]; ok && m.beats-at <= 5 && m.env.ElectionID(n) > m.env.ElectionID(leader) {
			leader = n
		}
		m.env.Send(n, beat{})
	}
	if leader != m.leader && m.beats > 5 {
		m.leader = leader
		m.env.Report(coup.Report{What: "leader", Value: leader})
	}
	m.env.SetTimer("beat", m.period)
}

func (m *toyMachine) Request(r coup.Request) {
	m.env.Fail(r, coup.Error{Code: 10, Text: "not supported", Definite: true})
}

// partition is the toy scenario built in Go: three nodes, one cut off at
// random for 400ms; two-leaders must hold.
func partition() *coup.Scenario {
	return &coup.Scenario{
		Name:     "toy-partition",
		Nodes:    3,
		Duration: scenario.Duration{D: time.Second, Set: true},
		Recovery: scenario.Duration{D: 300 * time.Millisecond, Set: true},
		Workload: scenario.Workload{Kind: "none"},
		Faults: []scenario.Fault{{
			Kind: "partition", Shape: "isolate",
			Target: scenario.Target{Names: []string{"random"}, Set: true},
			At:     scenario.Duration{D: 300 * time.Millisecond, Set: true},
			For:    scenario.Duration{D: 400 * time.Millisecond, Set: true},
		}},
		Checks: scenario.Checks{Run: []string{"two-leaders"}},
	}
}

func TestRunSweep(t *testing.T) {
	store := t.TempDir()
	safe, err := coup.Run(partition(), fixed, coup.Options{Seeds: 50, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if !safe.OK() || safe.Saved != nil || safe.Seeds != 50 || safe.From != 1 {
		t.Errorf("fixed: OK %v, saved %v, %d seeds from %d; want OK, nothing saved, 50 seeds from 1", safe.OK(), safe.Saved, safe.Seeds, safe.From)
	}

	unsafe, err := coup.Run(partition(), highest, coup.Options{Seeds: 50, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.OK() || len(unsafe.Failing) == 0 {
		t.Fatalf("highest: no seed of 50 failed; the partition should give two leaders")
	}
	s := unsafe.Saved
	if s == nil || s.Seed != unsafe.Failing[0] || s.Valid != "false" || s.AsExpected || !strings.HasPrefix(s.Signature, "two-leaders:") {
		t.Fatalf("highest: saved %+v; want the first failing seed %d, a two-leaders violation", s, unsafe.Failing[0])
	}
	for _, f := range []string{"history.jsonl", "results.json", "report.html", "harness.log"} {
		if _, err := os.Stat(filepath.Join(s.Dir, f)); err != nil {
			t.Errorf("the saved run's folder: %v", err)
		}
	}
	if !strings.HasPrefix(s.Dir, filepath.Join(store, "toy-partition")) {
		t.Errorf("saved in %s, not under the store %s", s.Dir, store)
	}

	// The same seed alone gives the same history.
	one, err := coup.Run(partition(), highest, coup.Options{Seed: s.Seed, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if one.Saved == nil || one.Saved.Hash != s.Hash {
		t.Errorf("seed %d alone: history %v, want %s as in the sweep", s.Seed, one.Saved, s.Hash)
	}
}

func TestRunShrink(t *testing.T) {
	store := t.TempDir()
	res, err := coup.Run(partition(), highest, coup.Options{Seed: 1, Seeds: 20, Store: store, Shrink: true, Budget: 200})
	if err != nil {
		t.Fatal(err)
	}
	sh := res.Shrunk
	if sh == nil {
		t.Fatal("no shrink")
	}
	if sh.File != filepath.Join(store, "toy-partition", "shrunk.toml") {
		t.Errorf("shrunk to %s", sh.File)
	}
	if sh.After.Messages >= sh.Before.Messages || sh.After.Nodes > sh.Before.Nodes {
		t.Errorf("shrunk %+v → %+v: no smaller", sh.Before, sh.After)
	}
	// The file, loaded, fails the same way: as it expects now.
	sc, err := coup.Load(sh.File)
	if err != nil {
		t.Fatal(err)
	}
	again, err := coup.Run(sc, highest, coup.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if !again.OK() || again.Saved.Signature != sh.Signature {
		t.Errorf("the shrunk file: as expected %v, signature %q; want as expected, %q", again.OK(), again.Saved.Signature, sh.Signature)
	}
}

func TestRunRefuses(t *testing.T) {
	bad := func(sc *coup.Scenario) *coup.Scenario { return sc }
	noName := partition()
	noName.Name = ""
	noNodes := partition()
	noNodes.Nodes = 0
	badParam := partition()
	badParam.Params = map[string]any{"perod": "10ms"}
	for _, c := range []struct {
		name string
		sc   *coup.Scenario
		node coup.Node
		opts coup.Options
		want string
	}{
		{"no scenario", nil, fixed, coup.Options{}, "no scenario"},
		{"no name", noName, fixed, coup.Options{}, "needs a Name"},
		{"no nodes", bad(noNodes), fixed, coup.Options{}, "scenario toy-partition: nodes: must be at least 1, got 0"},
		{"unknown param", badParam, fixed, coup.Options{}, "params.perod: unknown parameter"},
		{"no New", partition(), coup.Node{Messages: []coup.Msg{beat{}}}, coup.Options{}, "New is nil"},
		{"no messages", partition(), coup.Node{New: fixed.New}, coup.Options{}, "Messages is empty"},
		{"pointer message", partition(), coup.Node{New: fixed.New, Messages: []coup.Msg{&beat{}}}, coup.Options{}, "Messages[0] is a pointer"},
		{"twice", partition(), coup.Node{New: fixed.New, Messages: []coup.Msg{beat{}, beat{}}}, coup.Options{}, `type "beat" twice`},
		{"negative seeds", partition(), fixed, coup.Options{Seeds: -1}, "negative Seeds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := coup.Run(c.sc, c.node, c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got error %v, want one with %q", err, c.want)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lin.toml")
	src := "nodes = 3\n[workload]\nkind = \"lin-kv\"\nkeys = 2\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := coup.Load(path)
	if err != nil {
		t.Fatalf("a lin-kv scenario for a machine of one's own, with no command: %v", err)
	}
	if sc.Name != "lin" || len(sc.Checks.Run) != 1 || sc.Checks.Run[0] != "kv-linearizable" {
		t.Errorf("name %q, checks %v; want lin, [kv-linearizable]", sc.Name, sc.Checks.Run)
	}
	if err := os.WriteFile(path, []byte("nodes = 3\nfaults = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := coup.Load(path); err == nil || !strings.Contains(err.Error(), path+":2:") {
		t.Errorf("a bad file: %v; want its line", err)
	}
}

// recorder is a testing.TB that keeps what Test says.
type recorder struct {
	testing.TB
	name        string
	logs, fails []string
}

func (r *recorder) Helper()                    {}
func (r *recorder) Name() string               { return r.name }
func (r *recorder) Log(args ...any)            { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recorder) Logf(f string, args ...any) { r.logs = append(r.logs, fmt.Sprintf(f, args...)) }
func (r *recorder) Error(args ...any)          { r.fails = append(r.fails, fmt.Sprint(args...)) }
func (r *recorder) Errorf(f string, args ...any) {
	r.fails = append(r.fails, fmt.Sprintf(f, args...))
}
func (r *recorder) Fatalf(f string, args ...any) {
	r.fails = append(r.fails, fmt.Sprintf(f, args...))
	runtime.Goexit()
}

// run calls Test with r on a goroutine of its own, as testing would, so
// that Fatalf ends only it.
func (r *recorder) run(sc *coup.Scenario, node coup.Node, opts coup.Options) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		coup.Test(r, sc, node, opts)
	}()
	<-done
}

func TestTestFailsWithReplay(t *testing.T) {
	t.Setenv("COUP_STORE", t.TempDir())
	r := &recorder{TB: t, name: "TestToy/sub case"}
	r.run(partition(), highest, coup.Options{Seeds: 20})
	if len(r.fails) != 1 {
		t.Fatalf("Test failed %d times, want once: %q", len(r.fails), r.fails)
	}
	msg := r.fails[0]
	for _, want := range []string{
		"not as expected (", "two-leaders false", "store: ", "history sha256 ",
		`replay: COUP_SEED=`, ` go test -run '^TestToy$/^sub case$' .`,
		"shrink: COUP_SEED=",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure lacks %q:\n%s", want, msg)
		}
	}

	pass := &recorder{TB: t, name: "TestToy"}
	pass.run(partition(), fixed, coup.Options{Seeds: 20})
	if len(pass.fails) != 0 {
		t.Errorf("a safe machine failed: %q", pass.fails)
	}
}

func TestTestEnvironment(t *testing.T) {
	t.Setenv("COUP_STORE", t.TempDir())
	t.Setenv("COUP_SEED", "7")
	r := &recorder{TB: t, name: "TestToy"}
	r.run(partition(), fixed, coup.Options{Seeds: 1000})
	if len(r.fails) != 0 || len(r.logs) != 1 || !strings.Contains(r.logs[0], "seed 7: valid=true, as expected") {
		t.Errorf("COUP_SEED=7: fails %q, logs %q; want seed 7 alone, as expected", r.fails, r.logs)
	}

	t.Setenv("COUP_SEED", "seven")
	r = &recorder{TB: t, name: "TestToy"}
	r.run(partition(), fixed, coup.Options{})
	if len(r.fails) != 1 || !strings.Contains(r.fails[0], `COUP_SEED="seven": want an integer seed`) {
		t.Errorf("COUP_SEED=seven: %q", r.fails)
	}
}
