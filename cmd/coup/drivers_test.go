package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/verdict"
)

// Both drivers go through the one lifecycle: a scenario with a crash, run
// by the pipe driver with real processes (coup run) and by the simulator
// (coup sim), gives
// histories of the same kinds of event (meta first, end last, the
// nemesis's events between) and verdicts of the same shape (the same
// checks in the same order, the same verdicts and outcome), and a store
// folder with the same files.
//
// Both run a copy of the file whose bully times and schedule are four
// times slower (T = 200ms, the crash at 1.2s): with T = 50ms, a node of
// the pipe driver whose answer comes late on a loaded machine passes for
// a crashed one and claims leadership beside another, a verdict the
// simulator does not share.
func TestDriversShareTheLifecycle(t *testing.T) {
	src, err := os.ReadFile(scenarioPath(t, "bully-crash-coordinator.toml"))
	if err != nil {
		t.Fatal(err)
	}
	slower := string(src)
	for _, r := range [][2]string{
		{`t_trans = "20ms"`, `t_trans = "80ms"`}, {`t_process = "10ms"`, `t_process = "40ms"`},
		{`probe_every = "40ms"`, `probe_every = "160ms"`}, {`duration = "500ms"`, `duration = "2s"`},
		{`recovery = "500ms"`, `recovery = "2s"`}, {`at = "300ms"`, `at = "1.2s"`},
	} {
		if !strings.Contains(slower, r[0]) {
			t.Fatalf("bully-crash-coordinator.toml has no %s to slow down", r[0])
		}
		slower = strings.Replace(slower, r[0], r[1], 1)
	}
	path := filepath.Join(t.TempDir(), "bully-crash-coordinator.toml")
	if err := os.WriteFile(path, []byte(slower), 0o644); err != nil {
		t.Fatal(err)
	}
	real := coup(t, "run", "--quiet", path)
	simulated := coup(t, "sim", "--quiet", path)
	if real.code != 0 || simulated.code != 0 {
		t.Fatalf("coup run exit %d, coup sim exit %d:\n%s\n%s", real.code, simulated.code, real.stdout+real.stderr, simulated.stdout+simulated.stderr)
	}
	realRes, realHist := storedRun(t, real.store, "bully-crash-coordinator")
	simRes, simHist := storedRun(t, simulated.store, "bully-crash-coordinator")

	if realKinds, simKinds := eventKinds(realHist), eventKinds(simHist); !slices.Equal(realKinds, simKinds) {
		t.Errorf("event kinds: pipe driver %v, simulator %v", realKinds, simKinds)
	}
	for name, h := range map[string]*history.History{"pipe driver": realHist, "simulator": simHist} {
		if n := len(h.Events); n < 2 || h.Events[0].Kind != history.KindMeta || h.Events[n-1].Kind != history.KindEnd {
			t.Errorf("%s: the history does not run from a meta event to an end event", name)
		}
		if h.Meta.Simulated != (name == "simulator") {
			t.Errorf("%s: meta says simulated=%v", name, h.Meta.Simulated)
		}
		if !slices.Contains(eventKinds(h), history.KindNemesis) {
			t.Errorf("%s: no nemesis event recorded", name)
		}
	}
	assertSameShape(t, realRes, simRes)
}

// storedRun reads the results and the history of the latest run of a
// scenario in a store, and checks that the run's folder holds every file a
// run saves.
func storedRun(t *testing.T, store, name string) (*verdict.Results, *history.History) {
	t.Helper()
	dir := filepath.Join(store, name, "latest")
	for _, f := range []string{lifecycle.HistoryFile, lifecycle.ResultsFile, lifecycle.ReportFile, lifecycle.HarnessLog} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, lifecycle.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var res verdict.Results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	h, err := history.ReadFile(filepath.Join(dir, lifecycle.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	return &res, h.Expanded()
}

// eventKinds are the kinds of event a history holds, sorted.
func eventKinds(h *history.History) []history.Kind {
	var kinds []history.Kind
	for i := range h.Events {
		if k := h.Events[i].Kind; !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// assertSameShape fails the test unless two verdicts ran the same checks
// in the same order, with the same verdict for each and overall, the same
// outcome and exit code, and both on complete histories.
func assertSameShape(t *testing.T, a, b *verdict.Results) {
	t.Helper()
	if !slices.Equal(a.Order, b.Order) {
		t.Fatalf("checks: pipe driver %v, simulator %v", a.Order, b.Order)
	}
	for _, name := range a.Order {
		if va, vb := a.Checks[name].Valid, b.Checks[name].Valid; va != vb {
			t.Errorf("%s: pipe driver %v, simulator %v", name, va, vb)
		}
	}
	if a.Valid != b.Valid || a.Outcome != b.Outcome || a.ExitCode != b.ExitCode || a.Complete != b.Complete {
		t.Errorf("verdict: pipe driver %v %s (exit %d, complete %v), simulator %v %s (exit %d, complete %v)",
			a.Valid, a.Outcome, a.ExitCode, a.Complete, b.Valid, b.Outcome, b.ExitCode, b.Complete)
	}
}
