package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coupharness/coup/harness"
	"github.com/coupharness/coup/scenario"
)

// Startup is what the starts of n nodes measured: coup's, each a `coup
// run` of n built-in nodes, and the bare start's of the same n (bare.go),
// taking turns.
type Startup struct {
	Nodes     int
	Algorithm string
	Coup      []StartupRun
	Bare      []StartupRun
}

// StartupRun is one start of many processes, coup's or the bare one.
type StartupRun struct {
	// Up is the time from starting `coup run` (or the bare launcher) to
	// its saying that every node has answered init.
	Up time.Duration
	// HarnessPeak is the harness's (or the launcher's) peak RSS, in bytes,
	// as last seen while the nodes ran.
	HarnessPeak int64
	// NodePeaks are the peak RSS of each node process seen, in bytes.
	NodePeaks []int64
	// LeftBehind counts node processes still alive after `coup run` ended.
	LeftBehind int
	// CPU is the processor time the harness (or the launcher) had used
	// when it said every node was up, its children's not counted.
	CPU time.Duration
}

// Up and BareUp are the median times to every node up, coup's and the
// bare start's; Ratio is the one to the other (0 when either is missing).
func (s Startup) Up() time.Duration     { return medianUp(s.Coup) }
func (s Startup) BareUp() time.Duration { return medianUp(s.Bare) }
func (s Startup) Ratio() float64 {
	if s.Up() <= 0 || s.BareUp() <= 0 {
		return 0
	}
	return float64(s.Up()) / float64(s.BareUp())
}

func medianUp(runs []StartupRun) time.Duration {
	var xs []float64
	for _, r := range runs {
		xs = append(xs, float64(r.Up))
	}
	return time.Duration(median(xs))
}

// CPU and BareCPU are the median processor times of the harness and of
// the launcher to every node up.
func (s Startup) CPU() time.Duration     { return medianCPU(s.Coup) }
func (s Startup) BareCPU() time.Duration { return medianCPU(s.Bare) }

func medianCPU(runs []StartupRun) time.Duration {
	var xs []float64
	for _, r := range runs {
		xs = append(xs, float64(r.CPU))
	}
	return time.Duration(median(xs))
}

// HarnessPeak is the harness's highest peak over coup's runs, and
// BarePeak the launcher's.
func (s Startup) HarnessPeak() int64 { return highestPeak(s.Coup) }
func (s Startup) BarePeak() int64    { return highestPeak(s.Bare) }

func highestPeak(runs []StartupRun) int64 {
	var p int64
	for _, r := range runs {
		p = max(p, r.HarnessPeak)
	}
	return p
}

// NodePeaks are the node peaks of coup's last run; LeftBehind counts what
// all of coup's runs left.
func (s Startup) NodePeaks() []int64 {
	if len(s.Coup) == 0 {
		return nil
	}
	return s.Coup[len(s.Coup)-1].NodePeaks
}

func (s Startup) LeftBehind() int {
	n := 0
	for _, r := range s.Coup {
		n += r.LeftBehind
	}
	return n
}

// NodeMedian and NodeMax are the median and largest node peak RSS.
func (s Startup) NodeMedian() int64 {
	peaks := s.NodePeaks()
	if len(peaks) == 0 {
		return 0
	}
	p := slices.Clone(peaks)
	slices.Sort(p)
	return p[len(p)/2]
}

func (s Startup) NodeMax() int64 {
	if len(s.NodePeaks()) == 0 {
		return 0
	}
	return slices.Max(s.NodePeaks())
}

// startupRounds is how many times each start runs, coup's and the bare
// one taking turns: a start of a thousand processes takes seconds.
const startupRounds = 2

// measureStartup runs the starts of n nodes, the bare one and coup's
// taking turns, startupRounds times each.
func measureStartup(ctx context.Context, cfg *Config, n int, dir string) (Startup, error) {
	s := Startup{Nodes: n, Algorithm: cfg.Algorithm}
	file := filepath.Join(dir, fmt.Sprintf("bench-startup-%d.toml", n))
	if err := os.WriteFile(file, []byte(startupScenario(n, cfg.Algorithm)), 0o644); err != nil {
		return s, err
	}
	store := filepath.Join(dir, "store")
	defer os.RemoveAll(store)
	for round := range startupRounds {
		// A folder of its own each round, as each coup run has: every
		// node's log is a new file, in the bare start as in coup's.
		logs := filepath.Join(store, fmt.Sprintf("bare-%d-%d", n, round+1))
		bare := append(append([]string(nil), cfg.Probe...), bareStartArgs(n, logs)...)
		r, err := runStartup(ctx, bare, n)
		if err != nil {
			return s, fmt.Errorf("the bare start: %w", err)
		}
		s.Bare = append(s.Bare, r)
		r, err = runStartup(ctx, append(append([]string(nil), cfg.Coup...), "run", "--store", store, file), n)
		if err != nil {
			return s, err
		}
		s.Coup = append(s.Coup, r)
	}
	return s, nil
}

// startupScenario is n built-in nodes running one election, with no
// latency, so that the election runs while they are measured. The run
// lasts a second and 2ms a node, so that the sweeps of a thousand nodes'
// /proc files see every node even on a loaded machine.
func startupScenario(n int, algo string) string {
	return fmt.Sprintf(`name = "bench-startup-%d"
description = "coup bench: %d built-in nodes start and run an election"
algorithm = %q
nodes = %d
duration = %q
recovery = "300ms"

[network]
latency = "0s"
`, n, n, algo, n, tomlDuration(time.Second+time.Duration(n)*2*time.Millisecond))
}

// upMarker is what `coup run` prints once every node has answered init.
const upMarker = "nodes up"

// sampleEvery is how often the harness's peak RSS is read; nodeSweepEvery
// how often, once they are up, every node's is (reading a thousand /proc
// files costs the machine the benchmark measures).
const (
	sampleEvery    = 50 * time.Millisecond
	nodeSweepEvery = 300 * time.Millisecond
)

// runStartup runs argv (`coup run` on n built-in nodes, or the bare
// launcher) as a child process and measures the time until it says every
// node is up, the peak memory of it and of each node while they run, and
// whether any node outlives it.
func runStartup(ctx context.Context, argv []string, n int) (StartupRun, error) {
	var s StartupRun
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// Interrupted, coup run stops its nodes and leaves, as at Ctrl-C.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return s, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, fmt.Errorf("start coup run: %w", err)
	}
	pid := cmd.Process.Pid

	var (
		mu     sync.Mutex
		nodes  = map[procID]int64{} // node → peak RSS seen
		others = map[procID]bool{}  // children that are not nodes (the harness's reaper)
		up     = make(chan struct{})
		stop   = make(chan struct{})
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() { // sample the harness, and once up, the nodes
		defer wg.Done()
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		var lastSweep time.Time
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if rss, err := peakRSS(pid); err == nil {
				mu.Lock()
				s.HarnessPeak = max(s.HarnessPeak, rss)
				mu.Unlock()
			}
			select {
			case <-up:
			default:
				continue
			}
			if time.Since(lastSweep) < nodeSweepEvery {
				continue
			}
			lastSweep = time.Now()
			for _, c := range children(pid) {
				id, ok := identify(c)
				if !ok || others[id] {
					continue
				}
				mu.Lock()
				_, known := nodes[id]
				mu.Unlock()
				if !known && !environHas(c, "COUP_NODE") {
					others[id] = true
					continue
				}
				rss, err := peakRSS(c)
				if err != nil {
					continue
				}
				mu.Lock()
				nodes[id] = max(nodes[id], rss)
				mu.Unlock()
			}
		}
	}()

	sawUp := false
	sc := bufio.NewScanner(stdout)
	var out strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if !sawUp && strings.Contains(line, upMarker) {
			s.Up = time.Since(start)
			s.CPU = pidCPU(pid)
			// The peak so far, before the sampler's next look: the bare
			// launcher ends a moment after.
			if rss, err := peakRSS(pid); err == nil {
				mu.Lock()
				s.HarnessPeak = max(s.HarnessPeak, rss)
				mu.Unlock()
			}
			sawUp = true
			close(up)
		}
		if out.Len() < 64<<10 {
			out.WriteString(line + "\n")
		}
	}
	waitErr := cmd.Wait()
	close(stop)
	wg.Wait()
	if ctx.Err() != nil {
		return s, ctx.Err()
	}
	if !sawUp {
		return s, fmt.Errorf("%s on %d nodes never said %q (%v): %s%s", argv[1], n, upMarker, waitErr, out.String(), stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
		// 1 is a verdict the benchmark does not judge; others are failures.
		return s, fmt.Errorf("%s on %d nodes: %v: %s%s", argv[1], n, waitErr, out.String(), stderr.String())
	}
	// Killed nodes are reaped by init a moment after the harness ends.
	// Any still alive after that is counted, and then killed, so that the
	// benchmark itself leaves nothing behind.
	deadline := time.Now().Add(2 * time.Second)
	var left []procID
	for {
		left = left[:0]
		for id := range nodes {
			if id.alive() {
				left = append(left, id)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.LeftBehind = len(left)
	for _, id := range left {
		if id.alive() {
			_ = syscall.Kill(id.pid, syscall.SIGKILL)
		}
	}
	for _, rss := range nodes {
		s.NodePeaks = append(s.NodePeaks, rss)
	}
	return s, nil
}

// profileStartup starts n nodes once more, under the harness in this
// process (harness.Run, the code behind `coup run`), with a CPU profile
// from the run's start to its saying that every node is up, written to
// path.
func profileStartup(ctx context.Context, cfg *Config, n int, dir, path string) error {
	file := filepath.Join(dir, fmt.Sprintf("bench-startup-%d.toml", n))
	sc, err := scenario.Parse(file, startupScenario(n, cfg.Algorithm))
	if err != nil {
		return err
	}
	store := filepath.Join(dir, "store")
	defer os.RemoveAll(store)
	stop, err := startCPUProfile(path)
	if err != nil {
		return err
	}
	defer stop()
	up := &upWriter{stop: stop}
	res, _, err := harness.Run(ctx, sc, harness.Options{Store: store, NodeCommand: cfg.Coup, Progress: up})
	switch {
	case err != nil:
		return err
	case !up.seen:
		return fmt.Errorf("the profiled start of %d nodes never said %q: %s", n, upMarker, res.Error)
	}
	return nil
}

// upWriter is a run's progress, that calls stop at the first line that
// says every node is up.
type upWriter struct {
	mu   sync.Mutex
	seen bool
	stop func()
}

func (w *upWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.seen && bytes.Contains(b, []byte(upMarker)) {
		w.seen = true
		w.stop()
	}
	return len(b), nil
}
