package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"
)

// The paths a probe runs on, in the order each round runs them.
const (
	Relay    = iota // the minimal relay
	Coup            // coup's harness, messages not recorded
	Recorded        // coup's harness, every message recorded
	paths
)

var pathNames = [paths]string{"relay", "coup", "coup, recorded"}

// Case is one probe shape, run on every path for every round.
type Case struct {
	// Title says what the probe does.
	Title string
	// Faults is the fault mix, nil for none.
	Faults *FaultMix
	probe  probeConfig
	// Runs are the figures of each round, by path.
	Runs [paths][]Figures
}

// Mode is the probe's mode (Pipelined, OneAtATime or Steady).
func (c *Case) Mode() string { return c.probe.Mode }

// routerCases are the probe shapes of the router part (faults nil) or of
// the fault part.
func routerCases(cfg *Config, faults *FaultMix) []Case {
	base := probeConfig{Warmup: cfg.Warmup, Time: cfg.Time, Lossy: faults != nil}
	pipelined, one, steady := base, base, base
	pipelined.Mode, pipelined.Window = Pipelined, cfg.Window
	one.Mode, one.Window = OneAtATime, 1
	steady.Mode, steady.Window, steady.Time = Steady, 1, cfg.SteadyTime
	steady.Rate = cfg.Rate / 2 // a ping and its echo are two messages
	cases := []Case{
		{Title: fmt.Sprintf("pipelined, window %d", cfg.Window), Faults: faults, probe: pipelined},
		{Title: "one at a time", Faults: faults, probe: one},
	}
	if faults != nil {
		cases = append(cases, Case{Title: fmt.Sprintf("steady %g msg/s", cfg.Rate), Faults: faults, probe: steady})
	}
	return cases
}

var reports atomic.Int64

// runCase runs a case's rounds, the paths taking turns within each round
// so that whatever else the machine does hits them alike.
func runCase(ctx context.Context, cfg *Config, c *Case, dir string, progress func(string, ...any)) error {
	for round := 1; round <= cfg.Rounds; round++ {
		for path := range paths {
			f, err := runPath(ctx, cfg, c, path, dir, "")
			if err != nil {
				return fmt.Errorf("%s%s, %s: %w", c.Title, faultNote(c.Faults), pathNames[path], err)
			}
			c.Runs[path] = append(c.Runs[path], f)
			progress("%s%s, round %d/%d, %s: %s", c.Title, faultNote(c.Faults), round, cfg.Rounds, pathNames[path], f.summary())
		}
	}
	return nil
}

// runPath runs a case's probe once on one path.
func runPath(ctx context.Context, cfg *Config, c *Case, path int, dir, profile string) (Figures, error) {
	pc := c.probe
	pc.Report = filepath.Join(dir, fmt.Sprintf("report-%d", reports.Add(1)))
	ctx, cancel := context.WithTimeout(ctx, pc.Warmup+pc.Time+probeSlack)
	defer cancel()
	if path == Relay {
		return runRelay(ctx, cfg.Probe, pc, c.Faults, dir, uint64(reports.Load()))
	}
	return runCoup(ctx, cfg.Probe, pc, c.Faults, path == Recorded, dir, profile)
}

// profileTime is the least measured time of a profiled run, so that the
// profile holds enough samples.
const profileTime = 3 * time.Second

// profileRouter runs the pipelined probe once more on coup, without and
// with recording, under the CPU profiler.
func profileRouter(ctx context.Context, cfg *Config, dir string, progress func(string, ...any)) error {
	c := routerCases(cfg, nil)[0]
	c.probe.Time = max(c.probe.Time, profileTime)
	for _, p := range []struct {
		path int
		file string
	}{{Coup, "router.pprof"}, {Recorded, "router-recorded.pprof"}} {
		file := filepath.Join(cfg.Profile, p.file)
		f, err := runPath(ctx, cfg, &c, p.path, dir, file)
		if err != nil {
			return fmt.Errorf("profile %s: %w", pathNames[p.path], err)
		}
		progress("profiled %s, %s: %s; profile in %s", c.Title, pathNames[p.path], f.summary(), file)
	}
	return nil
}

func faultNote(f *FaultMix) string {
	if f == nil {
		return ""
	}
	return " with faults"
}

// summary is one line of a probe run's figures.
func (f Figures) summary() string {
	s := fmt.Sprintf("%.0f round trips/s, p50 %s, p99 %s", f.Throughput(), ns(float64(f.P50)), ns(float64(f.P99)))
	if f.Lost > 0 || f.Late > 0 || f.Dup > 0 {
		s += fmt.Sprintf("; of %d pings %d lost, %d late, %d echoes twice", f.Sent, f.Lost, f.Late, f.Dup)
	}
	return s
}
