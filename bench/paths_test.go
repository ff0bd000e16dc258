package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/scenario"
)

// probeArgv runs this test binary as the probe (see TestMain).
func probeArgv() []string { return []string{os.Args[0], "bench-probe"} }

// tiny is a probe configuration that measures for a moment only.
func tiny(t *testing.T, mode string, lossy bool) probeConfig {
	pc := probeConfig{Mode: mode, Window: 8, Warmup: 10 * time.Millisecond, Time: 100 * time.Millisecond, Lossy: lossy,
		Report: filepath.Join(t.TempDir(), "report")}
	switch mode {
	case OneAtATime:
		pc.Window = 1
	case Steady:
		pc.Window, pc.Rate = 1, 2000
	}
	return pc
}

// checkFigures fails unless the figures are those of a probe that made
// round trips, and lost none without faults.
func checkFigures(t *testing.T, f Figures, faults bool) {
	t.Helper()
	if f.Completed == 0 || f.Sent < f.Completed-1 || f.P50 <= 0 || f.P99 < f.P50 || f.Max < f.P99 || f.Seconds <= 0 {
		t.Errorf("figures of a probe that did not work: %+v", f)
	}
	if !faults && (f.Lost != 0 || f.Dup != 0 || f.Late != 0) {
		t.Errorf("without faults, nothing may be lost or doubled: %+v", f)
	}
}

func TestRelayRunsTheProbe(t *testing.T) {
	for _, mode := range []string{Pipelined, OneAtATime, Steady} {
		t.Run(mode, func(t *testing.T) {
			f, err := runRelay(context.Background(), probeArgv(), tiny(t, mode, false), nil, t.TempDir(), 1)
			if err != nil {
				t.Fatal(err)
			}
			checkFigures(t, f, false)
			if f.Mode != mode {
				t.Errorf("the probe ran %q, want %q", f.Mode, mode)
			}
		})
	}
}

// With heavy loss and duplication, the pinger counts both and goes on.
func TestRelayFaultsAreCounted(t *testing.T) {
	mix := FaultMix{Loss: 0.2, Duplicate: 0.3, Delay: 50 * time.Microsecond, Jitter: 50 * time.Microsecond}
	for _, mode := range []string{Pipelined, Steady} {
		t.Run(mode, func(t *testing.T) {
			pc := tiny(t, mode, true)
			pc.Time = 300 * time.Millisecond
			f, err := runRelay(context.Background(), probeArgv(), pc, &mix, t.TempDir(), 1)
			if err != nil {
				t.Fatal(err)
			}
			checkFigures(t, f, true)
			if f.Lost == 0 || f.Dup == 0 {
				t.Errorf("20%% loss and 30%% duplication, yet %d lost and %d echoes twice: %+v", f.Lost, f.Dup, f)
			}
		})
	}
}

func TestCoupRunsTheProbe(t *testing.T) {
	mix := DefaultFaults
	for _, c := range []struct {
		mode   string
		faults *FaultMix
		record bool
	}{{Pipelined, nil, false}, {OneAtATime, nil, true}, {Steady, &mix, true}} {
		t.Run(fmt.Sprintf("%s-faults=%v-recorded=%v", c.mode, c.faults != nil, c.record), func(t *testing.T) {
			dir := t.TempDir()
			f, err := runCoup(context.Background(), probeArgv(), tiny(t, c.mode, c.faults != nil), c.faults, c.record, dir, "")
			if err != nil {
				t.Fatal(err)
			}
			checkFigures(t, f, c.faults != nil)
			if left := childrenOf(os.Getpid()); len(left) > 0 {
				t.Errorf("processes outlived the run: %v", left)
			}
			if _, err := os.Stat(filepath.Join(dir, "store")); !os.IsNotExist(err) {
				t.Errorf("the run's store was not removed: %v", err)
			}
		})
	}
}

// A probe that cannot start is an error that says so, not a hang.
func TestCoupProbeThatFailsIsAnError(t *testing.T) {
	pc := tiny(t, Pipelined, false)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := runCoup(ctx, []string{os.Args[0], "bench-probe", "extra"}, pc, nil, false, t.TempDir(), "")
	if err == nil || !strings.Contains(err.Error(), "init") {
		t.Errorf("a probe that exits at once: %v, want an error about init", err)
	}
	_, err = runRelay(ctx, []string{os.Args[0], "bench-probe", "extra"}, pc, nil, t.TempDir(), 1)
	if err == nil || !strings.Contains(err.Error(), "init") {
		t.Errorf("the relay, a probe that exits at once: %v, want an error about init", err)
	}
}

func TestProbeScenario(t *testing.T) {
	mix := DefaultFaults
	pc := probeConfig{Mode: Steady, Window: 1, Rate: 2500, Warmup: time.Millisecond, Time: time.Second, Lossy: true, Report: `/tmp/a "quoted" dir/r`}
	sc, err := scenario.Parse("probe.toml", probeScenario([]string{`/path with space/coup`, "bench-probe"}, pc, &mix, true))
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{`/path with space/coup`, "bench-probe"}, pc.args()...)
	if fmt.Sprint(sc.Command) != fmt.Sprint(want) {
		t.Errorf("command %q, want %q", sc.Command, want)
	}
	if !sc.RecordMessages() || sc.Nodes != 2 || sc.Network.Latency.D != 0 || sc.ChecksumsOn() {
		t.Errorf("scenario %+v", sc)
	}
	faults := sc.NemesisFaults()
	if len(faults) != 3 || faults[0].Probability != mix.Loss || faults[1].Probability != mix.Duplicate ||
		faults[2].Delay != mix.Delay || faults[2].Jitter != mix.Jitter {
		t.Errorf("faults %+v, want the mix %+v", faults, mix)
	}
	sc, err = scenario.Parse("probe.toml", probeScenario(probeArgv(), pc, nil, false))
	if err != nil {
		t.Fatal(err)
	}
	if sc.RecordMessages() || len(sc.NemesisFaults()) != 0 {
		t.Errorf("without faults or recording: %+v", sc)
	}
}

func TestGenerateHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	what, n, err := generateHistory(path, 20000)
	if err != nil {
		t.Fatal(err)
	}
	if n < 10000 || n > 40000 {
		t.Errorf("asked for about 20000 events, got %d", n)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(b, []byte("\n")); lines != n {
		t.Errorf("%d events, %d lines", n, lines)
	}
	for _, kind := range []string{`"kind":"msg","what":"send"`, `"what":"deliver"`, `"what":"drop"`, `"what":"duplicate"`, `"kind":"report"`, `"kind":"nemesis"`, `"what":"crash"`} {
		if !bytes.Contains(b, []byte(kind)) {
			t.Errorf("the history (%s) has no %s", what, kind)
		}
	}
}

func TestHistoryPartMeasures(t *testing.T) {
	h, err := runHistory(context.Background(), nil, nil, 5000, t.TempDir(), "", false, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	if h.Events < 2000 || h.Bytes <= 0 || h.Checks != len(checks.All())-1 || // every check but lost-writes
		h.Read.Time <= 0 || h.Check.Time <= 0 ||
		h.Read.Allocated == 0 || h.Check.Allocated < h.Read.Allocated/2 || h.Read.Live == 0 {
		t.Errorf("history figures %+v", h)
	}
}

func TestProcfs(t *testing.T) {
	rss, err := peakRSS(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Errorf("this process's peak RSS: %d, %v", rss, err)
	}
	id, ok := identify(os.Getpid())
	if !ok || !id.alive() {
		t.Errorf("this process is not seen alive: %+v %v", id, ok)
	}
	if (procID{pid: id.pid, start: id.start + 1}).alive() {
		t.Error("a process with another start time is taken for this one")
	}
	if _, err := peakRSS(1 << 30); err == nil {
		t.Error("the peak RSS of no process")
	}
	t.Setenv("COUP_BENCH_TEST_MARK", "1")
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep program:", err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	// Linux fills in a new program's arguments and environment a moment
	// after the exec that Start waits for.
	for deadline := time.Now().Add(5 * time.Second); !argvHas(cmd.Process.Pid, "sleep") && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if !environHas(cmd.Process.Pid, "COUP_BENCH_TEST_MARK") || environHas(cmd.Process.Pid, "COUP_BENCH_TEST") {
		t.Error("environHas does not tell a child's variables")
	}
	if !argvHas(cmd.Process.Pid, "10") || argvHas(cmd.Process.Pid, "1") {
		t.Error("argvHas does not tell a child's arguments")
	}
	if !slices.Contains(children(os.Getpid()), cmd.Process.Pid) {
		t.Errorf("children of this process %v lack %d", children(os.Getpid()), cmd.Process.Pid)
	}
}

// childrenOf lists pid's live (not zombie) probe processes.
func childrenOf(pid int) []int {
	var out []int
	for _, c := range children(pid) {
		if id, ok := identify(c); ok && id.alive() && argvHas(c, "bench-probe") {
			out = append(out, c)
		}
	}
	return out
}

// A round trip that outlasts the measured time (a slow path, or a loaded
// machine that does not run the probe for a while) still leaves figures:
// the measured time goes on until it holds minSamples round trips.
func TestClosedLoopOutlastingItsTime(t *testing.T) {
	mix := FaultMix{Delay: 30 * time.Millisecond}
	pc := tiny(t, OneAtATime, false)
	pc.Warmup, pc.Time = time.Millisecond, 10*time.Millisecond
	f, err := runRelay(context.Background(), probeArgv(), pc, &mix, t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, f, false)
	if f.Completed < minSamples {
		t.Errorf("%d round trips measured, want at least %d: %+v", f.Completed, minSamples, f)
	}
	if f.Seconds <= pc.Time.Seconds() {
		t.Errorf("measured for %.3fs, want longer than the %v asked, since each round trip takes 60ms: %+v", f.Seconds, pc.Time, f)
	}
}
