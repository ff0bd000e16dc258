package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers"
)

// The paths of the servers part, in the order each round runs them.
const (
	Bare     = iota // the servers started directly, every peer at its own address
	WithCoup        // servers.Run: a fault proxy on every link, no fault in force
	serverPaths
)

var serverPathNames = [serverPaths]string{"without coup", "with coup"}

// serverPoll is how often both paths ask a polled server (ZooKeeper) for
// its mode, and serverPollTimeout how long one question may take. coup's
// preset polls every 100ms; the part polls both paths at the same pace so
// that the ratio is not the polls' difference.
const (
	serverPoll        = 20 * time.Millisecond
	serverPollTimeout = time.Second
)

// serverKind is one server program the part measures.
type serverKind struct {
	preset string
	// bound is how long a round waits for a leader before it counts as
	// one without.
	bound time.Duration
	// poll: the leader is seen by polling (ZooKeeper), not in the log.
	poll bool
}

var serverKinds = []serverKind{
	{preset: "etcd", bound: 20 * time.Second},
	{preset: "zookeeper", bound: 30 * time.Second, poll: true},
}

// ServerCase is one server program's figures: the time from the start to
// the first moment a server claims leadership, by path and round.
type ServerCase struct {
	// Kind is the preset's name (etcd, zookeeper).
	Kind string
	// Skipped says why the program was not measured ("" when it was).
	Skipped string
	// Runs are the start-to-leader times of the rounds that saw a
	// leader, by path.
	Runs [serverPaths][]time.Duration
	// Failed are the rounds without a leader within the bound, by path,
	// each with its reason.
	Failed [serverPaths][]string
	// Clamped counts coup's rounds whose first leader report was at the
	// run's zero: the claim came before every server was up, and was
	// recorded at the zero, so their time is an upper bound.
	Clamped int
	// Bound is how long a round waited for a leader.
	Bound time.Duration
}

// runServersPart measures each server program on both paths, the paths
// taking turns in each round.
func runServersPart(ctx context.Context, cfg *Config, dir string, progress func(string, ...any)) ([]ServerCase, error) {
	var out []ServerCase
	for _, k := range serverKinds {
		c := ServerCase{Kind: k.preset, Bound: k.bound}
		sc, err := serverScenario(k, filepath.Join(dir, "servers"))
		if err != nil {
			return out, fmt.Errorf("servers part, %s: %w", k.preset, err)
		}
		if why := missingProgram(sc); why != "" {
			c.Skipped = why
			progress("servers: %s not measured: %s", k.preset, why)
			out = append(out, c)
			continue
		}
		for round := 1; round <= cfg.Rounds; round++ {
			for path := range serverPaths {
				if err := ctx.Err(); err != nil {
					return append(out, c), err
				}
				work := filepath.Join(dir, "servers", fmt.Sprintf("%s-%d-%d", k.preset, round, path))
				var d time.Duration
				var clamped bool
				if path == Bare {
					d, err = startBare(ctx, sc, work, k.bound)
				} else {
					d, clamped, err = startWithCoup(ctx, sc, work)
				}
				if err != nil {
					if ctx.Err() != nil {
						return append(out, c), ctx.Err()
					}
					c.Failed[path] = append(c.Failed[path], err.Error())
					progress("servers: %s, round %d/%d, %s: %v", k.preset, round, cfg.Rounds, serverPathNames[path], err)
					continue
				}
				if clamped {
					c.Clamped++
				}
				c.Runs[path] = append(c.Runs[path], d)
				progress("servers: %s, round %d/%d, %s: leader %s after the start", k.preset, round, cfg.Rounds,
					serverPathNames[path], d.Round(time.Millisecond))
				if cfg.Dir == "" {
					_ = os.RemoveAll(work)
				}
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// serverScenario builds the scenario both paths start from: the preset,
// three nodes, no fault, the two-leaders check, polls at serverPoll. Its
// duration is the bound: coup's run is ended as soon as a leader is seen.
func serverScenario(k serverKind, dir string) (*scenario.Scenario, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name = \"bench-%s\"\nnodes = 3\nduration = %q\nrecovery = \"0.5s\"\n\n", k.preset, k.bound)
	fmt.Fprintf(&b, "[server]\npreset = %q\n", k.preset)
	if k.poll {
		fmt.Fprintf(&b, "poll_every = %q\n", serverPoll)
	}
	b.WriteString("\n[checks]\nrun = [\"two-leaders\"]\n\n[expect]\nvalid = true\n")
	path := filepath.Join(dir, k.preset+".toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	sc, err := scenario.Load(path)
	if err != nil {
		return nil, err
	}
	for i := range sc.Server.Poll {
		sc.Server.Poll[i].Timeout = scenario.Duration{D: serverPollTimeout, Raw: serverPollTimeout.String(), Set: true}
	}
	return sc, nil
}

// missingProgram says what the preset's command needs and this machine
// lacks: its program, or a file of a Java class path ("" when nothing).
func missingProgram(sc *scenario.Scenario) string {
	nodes := scenario.SampleServerNodes(sc)
	rd, err := sc.Server.Render(nodes[0])
	if err != nil {
		return err.Error()
	}
	if _, err := exec.LookPath(rd.Command[0]); err != nil {
		return rd.Command[0] + " is not installed"
	}
	for i, a := range rd.Command {
		if (a == "-cp" || a == "-classpath") && i+1 < len(rd.Command) {
			for _, f := range strings.Split(rd.Command[i+1], ":") {
				if _, err := os.Stat(f); err != nil {
					return f + " is not installed"
				}
			}
		}
	}
	return ""
}

// startWithCoup runs the scenario under coup's real-server driver and
// returns the time from the run's beginning to the first leader report
// whose leader is the reporting node itself. The run is ended (as by a
// Ctrl-C) as soon as that report is in the history and harness.log says
// the start has ended (a report may come while the run still waits for
// its cluster to be ready: ended then, the run would not have started).
//
// The history's times count from the run's zero, the moment every server
// accepts connections; the run began before, with the proxies and the
// servers' starts. harness.log's "nodes up after D" line says how long
// before (to the millisecond), so the time is D plus the report's.
func startWithCoup(ctx context.Context, sc *scenario.Scenario, store string) (time.Duration, bool, error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The store is the round's own, so the run's is its only folder
	// (store/NAME/latest names it only once the run has ended).
	pattern := filepath.Join(store, sc.Name, "*", lifecycle.HistoryFile)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTicker(serverPoll)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
			}
			found, _ := filepath.Glob(pattern)
			for _, h := range found {
				if _, ok, _ := firstLeaderReport(h); ok {
					if _, err := nodesUpAt(filepath.Join(filepath.Dir(h), "harness.log")); err == nil {
						cancel()
						return
					}
				}
			}
		}
	}()
	_, dir, err := servers.Run(rctx, sc, servers.Options{Store: store})
	cancel()
	<-watched
	if ctx.Err() != nil {
		return 0, false, ctx.Err()
	}
	if dir == "" {
		return 0, false, fmt.Errorf("coup's run did not start: %v", err)
	}
	at, ok, rerr := firstLeaderReport(filepath.Join(dir, lifecycle.HistoryFile))
	if rerr != nil {
		return 0, false, rerr
	}
	if !ok {
		if err != nil {
			return 0, false, fmt.Errorf("no leader: %v (see %s)", err, dir)
		}
		return 0, false, fmt.Errorf("no leader within %s (see %s)", sc.Duration.D, dir)
	}
	up, err := nodesUpAt(filepath.Join(dir, "harness.log"))
	if err != nil {
		return 0, false, err
	}
	return up + at, at == 0, nil
}

// firstLeaderReport reads a history, as far as it is written, for the
// first report of a node that it is the leader itself.
func firstLeaderReport(path string) (time.Duration, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), `"report"`) {
			continue
		}
		var e history.Event
		if json.Unmarshal(line, &e) != nil {
			continue // a line half written
		}
		if e.Kind == history.KindReport && e.What == history.ReportLeader && e.Value != "" && e.Value == e.Node {
			return time.Duration(e.Time), true, nil
		}
	}
	return 0, false, sc.Err()
}

// nodesUpAt reads harness.log's "nodes up after D;" line for D, how long
// the run took from its beginning to its zero.
func nodesUpAt(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	const marker = " nodes up after "
	for _, line := range strings.Split(string(b), "\n") {
		_, rest, ok := strings.Cut(line, marker)
		if !ok {
			continue
		}
		took, _, _ := strings.Cut(rest, ";")
		d, err := time.ParseDuration(took)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", path, line, err)
		}
		return d, nil
	}
	return 0, errors.New(path + ": no \"nodes up after\" line")
}
