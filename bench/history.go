package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/sim"
	"github.com/coupharness/coup/verdict"
)

// HistoryFigures are what reading and checking a large history measured.
type HistoryFigures struct {
	// Events is the history's length; Bytes its size on disk; Scenario
	// what made it.
	Events   int
	Bytes    int64
	Scenario string
	// Checks is how many checks "read and check" ran.
	Checks int
	// Generate is how long the simulator took to write it.
	Generate time.Duration
	// Read is history.ReadFile; Check is ReadFile then verdict.Evaluate,
	// in this process.
	Read, Check Cost
	// CoupCheck is `coup check HISTORY` as a child process: its wall time
	// and peak RSS (its own: it starts no process).
	CoupCheck     time.Duration
	CoupCheckPeak int64
}

// Cost is the time and memory one way of reading a history took.
type Cost struct {
	Time time.Duration
	// Live is the heap still in use once it is done (the history and
	// the results held), after a collection; Allocated all it allocated.
	Live, Allocated uint64
}

// historyScenario is a long Ω run on seven nodes with a realistic mix of
// events: heartbeats to all, every message recorded; loss, delay and
// duplication in the first third; a crash and a restart of the leader, a
// pause, and a partition later on. Every check runs on it but lost-writes,
// which needs writes.
func historyScenario(d time.Duration) string {
	at := func(frac float64) string { return tomlDuration(time.Duration(frac * float64(d))) }
	var names []string
	for _, c := range checks.All() {
		if c.Name == "lost-writes" {
			continue // it judges a set or lin-kv workload's writes, and validation refuses it elsewhere
		}
		names = append(names, fmt.Sprintf("%q", c.Name))
	}
	return fmt.Sprintf(`name = "bench-history"
description = "coup bench: a long Ω run with faults, every message recorded"
algorithm = "omega-etc"
nodes = 7
seed = 11
duration = %q
recovery = "1s"

[params]
eta = "10ms"
timeout = "30ms"
step = "5ms"

[network]
latency = "1ms"
jitter = "1ms"

[workload]
kind = "none"

[history]
messages = true

[[faults]]
kind = "loss"
probability = 0.2
for = %q

[[faults]]
kind = "delay"
jitter = "5ms"
distribution = "exponential"
for = %q

[[faults]]
kind = "duplicate"
probability = 0.05
for = %q

[[faults]]
kind = "crash"
target = "n1"
at = %q

[[faults]]
kind = "restart"
target = "n1"
at = %q

[[faults]]
kind = "pause"
target = "n3"
at = %q
for = "200ms"

[[faults]]
kind = "partition"
shape = "halves"
at = %q
for = "300ms"

[checks]
run = [%s]
`, tomlDuration(d), at(0.3), at(0.3), at(0.3), at(0.5), at(0.6), at(0.7), at(0.8), strings.Join(names, ", "))
}

// generateHistory simulates the history scenario long enough for about
// events events and writes it to path. A shorter run first measures how
// many events a second of it records.
func generateHistory(path string, events int) (string, int, error) {
	const probe = 30 * time.Second
	n, err := simulate("", probe, 0)
	if err != nil {
		return "", 0, err
	}
	d := time.Duration(float64(probe) * float64(events) / float64(max(n, 1)))
	d = max(d, time.Second)
	n, err = simulate(path, d, events)
	return fmt.Sprintf("omega-etc, 7 nodes, %s simulated, faults, every message recorded", d.Round(time.Second)), n, err
}

// simulate runs the history scenario for d and writes its history to path
// ("" for nowhere); it returns the number of events.
func simulate(path string, d time.Duration, hint int) (int, error) {
	sc, err := scenario.Parse("bench-history.toml", historyScenario(d))
	if err != nil {
		return 0, fmt.Errorf("the history's scenario: %w", err)
	}
	cfg, err := sim.FromScenario(sc, sc.Seed)
	if err != nil {
		return 0, err
	}
	cfg.EventsHint = hint
	var f *os.File
	if path != "" {
		if f, err = os.Create(path); err != nil {
			return 0, fmt.Errorf("create the history: %w", err)
		}
		defer f.Close()
		cfg.History = f
	}
	s, err := sim.New(cfg)
	if err != nil {
		return 0, err
	}
	h, err := s.Run()
	if err != nil {
		return 0, fmt.Errorf("simulate the history: %w", err)
	}
	if f != nil {
		if err := f.Close(); err != nil {
			return 0, fmt.Errorf("write the history: %w", err)
		}
	}
	return len(h.Events), nil
}

// measure runs fn and returns its time and memory: the heap it leaves in
// use (what fn returns is kept until then) and all it allocated.
func measure(fn func() (any, error)) (Cost, error) {
	runtime.GC()
	debug.FreeOSMemory()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	kept, err := fn()
	c := Cost{Time: time.Since(start)}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	c.Allocated = after.TotalAlloc - before.TotalAlloc
	if after.HeapAlloc > before.HeapAlloc {
		c.Live = after.HeapAlloc - before.HeapAlloc
	}
	return c, err
}

// runHistory generates a history of about events events in dir and
// measures reading it, reading and checking it, and `coup check` on it.
// With profile set, the CPU profile of reading and checking is written
// there. The history is removed at the end unless keep is set.
func runHistory(ctx context.Context, coup, probe []string, events int, dir, profile string, keep bool, progress func(string, ...any)) (*HistoryFigures, error) {
	path := filepath.Join(dir, "history.jsonl")
	if !keep {
		defer os.Remove(path)
	}
	hf := &HistoryFigures{}
	start := time.Now()
	what, n, err := generateHistory(path, events)
	if err != nil {
		return nil, err
	}
	hf.Generate, hf.Events, hf.Scenario = time.Since(start), n, what
	if st, err := os.Stat(path); err == nil {
		hf.Bytes = st.Size()
	}
	progress("history: %d events, %.0f MB, simulated in %s", n, float64(hf.Bytes)/1e6, hf.Generate.Round(time.Millisecond))

	if hf.Read, err = measure(func() (any, error) { return history.ReadFile(path) }); err != nil {
		return nil, err
	}
	progress("history: read in %s", hf.Read.Time.Round(time.Millisecond))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	var stop func()
	if profile != "" {
		if stop, err = startCPUProfile(profile); err != nil {
			return nil, err
		}
	}
	hf.Check, err = measure(func() (any, error) {
		h, err := history.ReadFile(path)
		if err != nil {
			return nil, err
		}
		hf.Checks = len(h.Meta.Checks)
		res, err := verdict.Evaluate(h)
		return []any{h, res}, err
	})
	if stop != nil {
		stop()
	}
	if err != nil {
		return nil, err
	}
	progress("history: read and checked in %s", hf.Check.Time.Round(time.Millisecond))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	if len(coup) > 0 {
		if hf.CoupCheck, hf.CoupCheckPeak, err = coupCheck(ctx, coup, probe, path); err != nil {
			return nil, err
		}
		progress("history: coup check in %s", hf.CoupCheck.Round(time.Millisecond))
	}
	return hf, nil
}

// coupCheck runs `coup check path` and returns its wall time and peak
// RSS; probe is the command of this build's probe, whose rss helper
// measures it (the coup checking may be another build's).
func coupCheck(ctx context.Context, coup, probe []string, path string) (time.Duration, int64, error) {
	peakFile := path + ".peak"
	defer os.Remove(peakFile)
	// Through "bench-probe rss", a small process of its own, so that this
	// process's memory does not count in the child's peak (see RSSMain).
	argv := append(append([]string(nil), probe...), "rss", peakFile)
	argv = append(append(argv, coup...), "check", path)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if cmd.ProcessState == nil {
		return 0, 0, fmt.Errorf("coup check: %w", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 && code != 3 {
		// 1 and 3 are verdicts, which the benchmark does not judge.
		return 0, 0, fmt.Errorf("coup check: %v: %s", err, firstLines(out.String(), 20))
	}
	b, err := os.ReadFile(peakFile)
	if err != nil {
		return d, 0, fmt.Errorf("coup check: its peak memory: %w", err)
	}
	peak, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return d, 0, fmt.Errorf("coup check: its peak memory: %w", err)
	}
	return d, peak, nil
}

func firstLines(s string, n int) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	var b strings.Builder
	for i := 0; i < n && sc.Scan(); i++ {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}
