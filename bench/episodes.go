package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers"
	"github.com/coupharness/coup/verdict"
)

// PartEpisodes measures the runs per hour of real servers: a fresh
// cluster per run against episodes on one long-lived cluster.
const PartEpisodes = "episodes"

// episodeRuns is how many runs each way, of each server program.
const episodeRuns = 5

// The ways of the episodes part, in the order it runs them.
const (
	Fresh    = iota // servers.Run: a cluster per run
	Episodes        // servers.Session: every run an episode of one cluster
	episodeWays
)

var episodeWayNames = [episodeWays]string{"fresh cluster", "episodes"}

// episodeKind is one server program the part measures, with the timing
// of its scenario: the workload and a fault once the cluster has elected
// (a fresh cluster must elect within the run), then the heal and the
// recovery window.
type episodeKind struct {
	preset             string
	duration, recovery string
	at, fault          string
}

var episodeKinds = []episodeKind{
	{preset: "etcd", duration: "3500ms", recovery: "1s", at: "2500ms", fault: "2700ms"},
	{preset: "zookeeper", duration: "2500ms", recovery: "1s", at: "1500ms", fault: "1700ms"},
}

// EpisodeCase is one server program's figures: the wall time of Runs runs
// each way, from the first run's start to the last one's end (a
// session's Close included), and the runs that did not start or failed.
type EpisodeCase struct {
	Kind    string
	Skipped string
	Runs    int
	Wall    [episodeWays]time.Duration
	Failed  [episodeWays][]string
	// Clusters is how many clusters the episodes started (1 when none
	// had to be started afresh).
	Clusters int
}

// PerHour is the runs per hour of a way (0 when it was not measured).
func (c *EpisodeCase) PerHour(way int) float64 {
	if c.Wall[way] <= 0 {
		return 0
	}
	return float64(c.Runs) * float64(time.Hour) / float64(c.Wall[way])
}

// runEpisodesPart runs each program's scenario Runs times with a fresh
// cluster each, then Runs times as episodes of one session.
func runEpisodesPart(ctx context.Context, cfg *Config, dir string, progress func(string, ...any)) ([]EpisodeCase, error) {
	var out []EpisodeCase
	for _, k := range episodeKinds {
		c := EpisodeCase{Kind: k.preset, Runs: episodeRuns}
		work := filepath.Join(dir, "episodes", k.preset)
		sc, err := episodeScenario(k, work)
		if err != nil {
			return out, fmt.Errorf("episodes part, %s: %w", k.preset, err)
		}
		if why := missingProgram(sc); why != "" {
			c.Skipped = why
			progress("episodes: %s not measured: %s", k.preset, why)
			out = append(out, c)
			continue
		}
		for way := range episodeWays {
			store := filepath.Join(work, fmt.Sprintf("store-%d", way))
			var session *servers.Session
			run := func(ctx context.Context) (*verdict.Results, string, error) {
				return servers.Run(ctx, sc, servers.Options{Store: store})
			}
			if way == Episodes {
				session = servers.NewSession(servers.Options{Store: store}, 0)
				run = func(ctx context.Context) (*verdict.Results, string, error) { return session.Run(ctx, sc) }
			}
			start := time.Now()
			for i := 1; i <= c.Runs; i++ {
				res, runDir, err := run(ctx)
				if ctx.Err() != nil {
					if session != nil {
						session.Close()
					}
					return append(out, c), ctx.Err()
				}
				what := "judged"
				switch {
				case err != nil:
					what = err.Error()
				case res.NotStarted():
					what = "not started: " + res.Error
				}
				if what != "judged" {
					c.Failed[way] = append(c.Failed[way], what)
				}
				progress("episodes: %s, %s, run %d/%d: %s after %s", k.preset, episodeWayNames[way], i, c.Runs, what,
					time.Since(start).Round(time.Millisecond))
				if cfg.Dir == "" && runDir != "" {
					_ = os.RemoveAll(runDir) // etcd's and ZooKeeper's data are large
				}
			}
			if session != nil {
				session.Close()
				c.Clusters = session.Clusters()
			}
			c.Wall[way] = time.Since(start)
			if cfg.Dir == "" {
				_ = os.RemoveAll(store)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// episodeScenario is the part's scenario of a program: three servers of
// its preset, a lin-kv workload of two clients and one pause of a node
// once the cluster has elected, judged by kv-linearizable and
// one-leader-per-term.
func episodeScenario(k episodeKind, dir string) (*scenario.Scenario, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	src := fmt.Sprintf(`name = "bench-episodes-%s"
nodes = 3
duration = %q
recovery = %q

[server]
preset = %q

[workload]
kind = "lin-kv"
at = %q
clients = 2
rate = 20
keys = 2
values = 5

[[faults]]
kind = "pause"
target = "n2"
at = %q
for = "400ms"

[checks]
run = ["kv-linearizable", "one-leader-per-term"]
`, k.preset, k.duration, k.recovery, k.preset, k.at, k.fault)
	path := filepath.Join(dir, k.preset+".toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		return nil, err
	}
	return scenario.Load(path)
}

func (r *Results) printEpisodes(w io.Writer) {
	fmt.Fprintf(w, "\nepisodes: runs per hour of three real servers, a fresh cluster per run against episodes on one long-lived cluster (healed, recovered, next episode); %d runs each way, one after another\n", episodeRuns)
	for _, k := range episodeKinds {
		fmt.Fprintf(w, "  %s: duration %s, recovery %s, a lin-kv workload from %s, a pause of n2 at %s for 400ms\n", k.preset, k.duration, k.recovery, k.at, k.fault)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tfresh cluster\tepisodes\tepisodes / fresh\t")
	for _, c := range r.Episodes {
		name := "  " + c.Kind + ", runs per hour"
		if c.Skipped != "" {
			fmt.Fprintf(tw, "%s\tnot measured: %s\t\t\t\n", name, c.Skipped)
			continue
		}
		var cells [episodeWays]string
		for way := range episodeWays {
			cells[way] = fmt.Sprintf("%.0f (%s)", c.PerHour(way), roundWall(c.Wall[way]/time.Duration(c.Runs)))
			if n := len(c.Failed[way]); n > 0 {
				cells[way] += fmt.Sprintf(" (%d of %d not judged)", n, c.Runs)
			}
		}
		ratio := "-"
		if c.PerHour(Fresh) > 0 {
			ratio = fmt.Sprintf("%.2f×", c.PerHour(Episodes)/c.PerHour(Fresh))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, cells[Fresh], cells[Episodes], ratio)
	}
	tw.Flush()
	for _, c := range r.Episodes {
		if c.Skipped == "" && c.Clusters > 1 {
			fmt.Fprintf(w, "  %s: the episodes started %d clusters (a cluster that did not recover is replaced)\n", c.Kind, c.Clusters)
		}
		for way := range episodeWays {
			for _, f := range c.Failed[way] {
				fmt.Fprintf(w, "  %s, %s: %s\n", c.Kind, episodeWayNames[way], strings.TrimSpace(f))
			}
		}
	}
}
