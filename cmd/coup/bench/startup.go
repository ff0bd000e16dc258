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
)

// Startup is what one start of many built-in nodes measured.
type Startup struct {
	Nodes     int
	Algorithm string
	// Up is the time from starting `coup run` to its saying that every node
	// has answered init.
	Up time.Duration
	// HarnessPeak is the harness's peak RSS, in bytes, as last seen while
	// the nodes ran.
	HarnessPeak int64
	// NodePeaks are the peak RSS of each node process seen, in bytes.
	NodePeaks []int64
	// LeftBehind counts node processes still alive after `coup run` ended.
	LeftBehind int
}

// NodeMedian and NodeMax are the median and largest node peak RSS.
func (s Startup) NodeMedian() int64 {
	if len(s.NodePeaks) == 0 {
		return 0
	}
	p := slices.Clone(s.NodePeaks)
	slices.Sort(p)
	return p[len(p)/2]
}

func (s Startup) NodeMax() int64 {
	if len(s.NodePeaks) == 0 {
		return 0
	}
	return slices.Max(s.NodePeaks)
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

// runStartup runs `coup run` on n built-in nodes as a child process and
// measures the time until it says every node is up, the peak memory of it
// and of each node while they run their election, and whether any node
// outlives it.
func runStartup(ctx context.Context, coup []string, n int, algo, dir string) (Startup, error) {
	s := Startup{Nodes: n, Algorithm: algo}
	file := filepath.Join(dir, fmt.Sprintf("bench-startup-%d.toml", n))
	if err := os.WriteFile(file, []byte(startupScenario(n, algo)), 0o644); err != nil {
		return s, err
	}
	store := filepath.Join(dir, "store")
	defer os.RemoveAll(store)
	argv := append(append([]string(nil), coup...), "run", "--store", store, file)
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
		return s, fmt.Errorf("coup run on %d nodes never said %q (%v): %s%s", n, upMarker, waitErr, out.String(), stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
		// 1 is a verdict the benchmark does not judge; others are failures.
		return s, fmt.Errorf("coup run on %d nodes: %v: %s%s", n, waitErr, out.String(), stderr.String())
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
