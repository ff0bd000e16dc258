package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/scenario"
)

// PartExplore runs the bug zoo's campaigns: random against guided.
const PartExplore = "explore"

// ZooBug is one bug of the zoo as the explore part runs it: its scenario
// file, how many campaigns of each strategy, and each campaign's budget
// in runs. A campaign that does not find the bug within its budget counts
// as the budget.
type ZooBug struct {
	File      string
	Campaigns int
	Budget    int
}

// Zoo is the bug zoo (scenarios/zoo/, relative to Config.ZooDir's parent):
// at least five campaigns of each strategy on the simulator and node
// processes, three on real servers, whose runs cost seconds.
var Zoo = []ZooBug{
	{File: "bully-replace.toml", Campaigns: 5, Budget: 3000},
	{File: "bully-crash-return.toml", Campaigns: 5, Budget: 3000},
	{File: "centralised-replace.toml", Campaigns: 5, Budget: 3000},
	{File: "centralised-short-collect.toml", Campaigns: 5, Budget: 3000},
	{File: "go-kv-stale-read.toml", Campaigns: 5, Budget: 10},
	{File: "raft-local-reads.toml", Campaigns: 5, Budget: 10},
	{File: "tcp-leader-async.toml", Campaigns: 3, Budget: 8},
	{File: "etcd-serializable-reads.toml", Campaigns: 3, Budget: 8},
	{File: "etcd-lock-paused-holder.toml", Campaigns: 3, Budget: 5},
	{File: "redis-power-failure-everysec.toml", Campaigns: 3, Budget: 8},
	{File: "nats-power-failure-lazy-fsync.toml", Campaigns: 3, Budget: 8},
	{File: "patroni-primary-isolated.toml", Campaigns: 3, Budget: 5},
}

// ZooNamed is the bugs of Zoo whose files are named (a file's name in
// the zoo's folder, ".toml" optional), in the order named, each once;
// an error names a file that is not the zoo's, and the zoo's files.
func ZooNamed(names []string) ([]ZooBug, error) {
	var out []ZooBug
	for _, name := range names {
		name = strings.TrimSpace(name)
		if !strings.HasSuffix(name, ".toml") {
			name += ".toml"
		}
		i := slices.IndexFunc(Zoo, func(b ZooBug) bool { return b.File == name })
		if i < 0 {
			var known []string
			for _, b := range Zoo {
				known = append(known, b.File)
			}
			return nil, fmt.Errorf("%q is no bug of the zoo (known: %s)", name, strings.Join(known, ", "))
		}
		if !slices.ContainsFunc(out, func(b ZooBug) bool { return b.File == name }) {
			out = append(out, Zoo[i])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no bug named")
	}
	return out, nil
}

// RunnerFunc makes the runner of a scenario's default driver, storing
// kept runs under store; cmd/coup hands it in, since the drivers live
// there.
type RunnerFunc func(sc *scenario.Scenario, store string) (explore.Runner, error)

// Strategies of the explore part, in the order each round runs them.
var exploreStrategies = [2]string{explore.Random, explore.Guided}

// ZooCase is one bug's figures: per strategy, each campaign's runs to a
// first violation (the run that showed it counted; the budget when none
// did) and the wall time to it.
type ZooCase struct {
	Bug      ZooBug
	Scenario string
	Driver   string
	Runs     [2][]int
	Wall     [2][]time.Duration
	// Missed counts, per strategy, the campaigns that did not find it.
	Missed [2]int
}

// Ratio is guided's median runs to a first violation over random's.
func (c *ZooCase) Ratio() float64 {
	return medianInt(c.Runs[1]) / medianInt(c.Runs[0])
}

// runExplorePart runs every bug's campaigns, the strategies taking turns
// within each round (campaign seed) so that the machine's noise hits
// them alike.
func runExplorePart(ctx context.Context, cfg *Config, dir string, progress func(string, ...any)) ([]ZooCase, error) {
	if cfg.Runner == nil {
		return nil, fmt.Errorf("explore part: no runner")
	}
	var out []ZooCase
	for _, bug := range cfg.Zoo {
		path := filepath.Join(cfg.ZooDir, bug.File)
		sc, err := scenario.Load(path)
		if err != nil {
			return out, fmt.Errorf("explore part: %w", err)
		}
		c := ZooCase{Bug: bug, Scenario: sc.Name}
		for seed := 1; seed <= bug.Campaigns; seed++ {
			for s, strat := range exploreStrategies {
				store := campaignStore(dir, strat, seed)
				runner, err := cfg.Runner(sc, store)
				if err != nil {
					return out, fmt.Errorf("explore part, %s: %w", path, err)
				}
				c.Driver = runner.Name()
				runs, wall, found, err := firstViolation(ctx, sc, runner, strat, int64(seed), bug.Budget)
				if err != nil {
					return append(out, c), fmt.Errorf("explore part, %s, %s campaign %d: %w", path, strat, seed, err)
				}
				c.Runs[s] = append(c.Runs[s], runs)
				c.Wall[s] = append(c.Wall[s], wall)
				what := "first violation at run"
				if !found {
					c.Missed[s]++
					what = "none within the budget of"
				}
				progress("explore: %s (%s), %s campaign %d/%d: %s %d, %s", sc.Name, c.Driver, strat, seed, bug.Campaigns,
					what, runs, wall.Round(time.Millisecond))
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// campaignStore is the store of one campaign: a short folder, as a run's
// store adds the scenario's name and a time, a host's folder its node,
// and PostgreSQL's socket in it must fit a Unix socket's path (107
// bytes).
func campaignStore(dir, strat string, seed int) string {
	return filepath.Join(dir, fmt.Sprintf("%c%d", strat[0], seed))
}

// firstViolation runs one campaign until its first run with a violation
// (a check false) and returns how many runs it took, that run counted,
// and the wall time until it was judged; found is false when the budget
// was spent first (runs is then the budget). A campaign none of whose
// runs had a verdict (the servers did not start) is an error, not a
// miss.
func firstViolation(ctx context.Context, sc *scenario.Scenario, runner explore.Runner, strat string, seed int64, budget int) (runs int, wall time.Duration, found bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	judged, note := 0, ""
	camp := explore.Campaign{
		Scenario: sc, Runner: runner, Strategy: strat, Seed: seed, Runs: budget,
		Progress: func(p explore.CampaignProgress) {
			if p.Last.Valid == "true" || p.Last.Valid == "false" {
				judged++
			} else if note == "" {
				note = p.Last.Error
			}
			if !found && p.Last.Valid == "false" {
				found, runs, wall = true, p.Last.Run, time.Since(start)
				cancel()
			}
		},
	}
	_, err = camp.Run(ctx)
	if found {
		return runs, wall, true, nil
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return 0, 0, false, err
	}
	if err := ctx.Err(); err != nil {
		return 0, 0, false, err
	}
	if judged == 0 {
		return 0, 0, false, fmt.Errorf("no run of %d had a verdict: %s", budget, note)
	}
	return budget, time.Since(start), false, nil
}

// ZooRatio is the geometric mean over the zoo of guided's median runs to a
// first violation over random's.
func ZooRatio(cases []ZooCase) float64 {
	if len(cases) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for i := range cases {
		sum += math.Log(cases[i].Ratio())
	}
	return math.Exp(sum / float64(len(cases)))
}

func medianInt(xs []int) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return float64(s[len(s)/2])
	}
	return float64(s[len(s)/2-1]+s[len(s)/2]) / 2
}
