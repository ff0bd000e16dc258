package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/sim"
)

// PartSim is the simulator against its floor: every scenario of the
// catalogue that the simulator runs, for a few seeds each, simulated and
// then replayed by a bare loop (sim.BenchFloor): the same machines given
// the same inputs, with no network model, recorder or checks.
const PartSim = "sim"

// TargetSimFloor is the simulator's deliveries per second at least this
// share of the bare loop's.
const TargetSimFloor = 0.3

// SimCase is one scenario's simulated runs against their replays.
type SimCase struct {
	Scenario string
	Figures  sim.FloorFigures
}

// runSimPart simulates and replays the catalogue, on one core.
func runSimPart(ctx context.Context, cfg *Config, progress func(string, ...any)) ([]SimCase, error) {
	var files []string
	for _, pattern := range []string{"*.toml", filepath.Join("sim", "*.toml")} {
		m, err := filepath.Glob(filepath.Join(cfg.SimDir, pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no scenarios in %s: run coup bench from the repository's top folder, or name the catalogue's folder with --scenarios", cfg.SimDir)
	}
	// The processor times are one core's: the simulator runs on one
	// goroutine, and the collector's other threads would count too.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var out []SimCase
	for _, file := range files {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		sc, err := scenario.Load(file)
		if err != nil {
			return out, err
		}
		if !sc.StateMachine() {
			continue
		}
		f, err := sim.BenchFloor(sc, sc.Seed, cfg.SimSeeds)
		if errors.Is(err, sim.ErrNotSimulable) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, SimCase{Scenario: sc.Name, Figures: f})
	}
	total := simTotal(out)
	progress("sim: %d scenarios, %d runs: %.0f deliveries/s simulated, %.0f replayed by the bare loop (%.2f×)",
		len(out), total.Sim.Runs, total.Sim.DeliveriesPerSecond(), total.FloorDeliveriesPerSecond(), total.Ratio())
	return out, nil
}

// simTotal adds up the simulator part's cases.
func simTotal(cases []SimCase) sim.FloorFigures {
	var t sim.FloorFigures
	for _, c := range cases {
		t.Add(c.Figures)
	}
	return t
}

func (r *Results) printSim(w io.Writer) {
	fmt.Fprintf(w, "\nsim: the catalogue's simulated scenarios, %d seeds each, on one core: the simulator's deliveries per second of processor time (checks aside), and the same machines given the same inputs by a bare loop (no network model, no recorder, no checks); (ratio) the simulator's to the loop's\n", r.Config.SimSeeds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tscenarios\truns\tdeliveries\tbare loop, deliveries/s\tsimulator, deliveries/s\ttarget")
	t := simTotal(r.Sim)
	fmt.Fprintf(tw, "  catalogue\t%d\t%d\t%s\t%s\t%s (%.2f×) %s\t≥ %g× the loop\n", len(r.Sim), t.Sim.Runs, formatCount(float64(t.Sim.Delivered)),
		formatRate(t.FloorDeliveriesPerSecond()), formatRate(t.Sim.DeliveriesPerSecond()), t.Ratio(), mark(t.Ratio() >= TargetSimFloor), TargetSimFloor)
	// The slowest scenarios against their floor, where the time goes.
	var worst []SimCase
	for _, c := range r.Sim {
		if c.Figures.Sim.Delivered > 0 {
			worst = append(worst, c)
		}
	}
	slices.SortStableFunc(worst, func(a, b SimCase) int { return cmp.Compare(a.Figures.Ratio(), b.Figures.Ratio()) })
	for _, c := range worst[:min(3, len(worst))] {
		f := c.Figures
		fmt.Fprintf(tw, "  lowest: %s\t\t%d\t%s\t%s\t%s (%.2f×)\t\n", c.Scenario, f.Sim.Runs, formatCount(float64(f.Sim.Delivered)),
			formatRate(f.FloorDeliveriesPerSecond()), formatRate(f.Sim.DeliveriesPerSecond()), f.Ratio())
	}
	tw.Flush()
}

// SimRates are the sim part's figures over the catalogue: the
// simulator's deliveries per second of processor time, its bare loop's,
// and the lowest scenario's ratio of the two.
type SimRates struct {
	Sim, Floor, Lowest float64
}

// Ratio is the simulator's rate to its bare loop's.
func (r SimRates) Ratio() float64 {
	if r.Floor <= 0 {
		return 0
	}
	return r.Sim / r.Floor
}

// simRates are the rates of the sim part's cases, measured in this process.
func simRates(cases []SimCase) SimRates {
	t := simTotal(cases)
	r := SimRates{Sim: t.Sim.DeliveriesPerSecond(), Floor: t.FloorDeliveriesPerSecond()}
	for _, c := range cases {
		if c.Figures.Sim.Delivered > 0 && (r.Lowest == 0 || c.Figures.Ratio() < r.Lowest) {
			r.Lowest = c.Figures.Ratio()
		}
	}
	return r
}

// The lines of another build's sim part that say its figures: the
// progress line on stderr and the lowest scenario's row of its table.
var (
	simLine    = regexp.MustCompile(`sim: \d+ scenarios, \d+ runs: ([0-9.]+) deliveries/s simulated, ([0-9.]+) replayed by the bare loop`)
	lowestLine = regexp.MustCompile(`(?m)^\s*lowest: .*\(([0-9.]+)×\)`)
)

// runSimOther runs the sim part with another build of coup (cfg.Coup), as
// a child process: the simulator is measured in the benchmark's own
// process, so another build's is that build's own benchmark, each build
// against its own bare loop.
func runSimOther(ctx context.Context, cfg *Config, progress func(string, ...any)) (SimRates, error) {
	args := append(append([]string(nil), cfg.Coup[1:]...), "bench", "--only", PartSim,
		"--scenarios", cfg.SimDir, "--sim-seeds", strconv.Itoa(cfg.SimSeeds))
	cmd := exec.CommandContext(ctx, cfg.Coup[0], args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return SimRates{}, fmt.Errorf("%s: %w: %s", cfg.Coup[0], err, bytes.TrimSpace(errOut.Bytes()))
	}
	m := simLine.FindSubmatch(errOut.Bytes())
	if m == nil {
		return SimRates{}, fmt.Errorf("%s bench --only sim printed no figures", cfg.Coup[0])
	}
	var r SimRates
	r.Sim, _ = strconv.ParseFloat(string(m[1]), 64)
	r.Floor, _ = strconv.ParseFloat(string(m[2]), 64)
	if l := lowestLine.FindSubmatch(out.Bytes()); l != nil {
		r.Lowest, _ = strconv.ParseFloat(string(l[1]), 64)
	}
	progress("sim (%s): %.0f deliveries/s simulated, %.0f replayed by the bare loop (%.2f×)", cfg.Coup[0], r.Sim, r.Floor, r.Ratio())
	return r, nil
}
