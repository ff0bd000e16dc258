package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Builds side by side. With Config.Baseline, the parts named run with
// this build and with the other in turns, baselineRounds times each, and
// every figure that a coup process makes is printed with the other's and
// their ratio: the same machine, the same moment, so that whatever else
// the machine does weighs on both. Only what a coup process of the build
// does is the build's: `coup run` of the startup part, `coup check` of the
// history part, the fault proxy process of the proxy part. The floors
// (the bare start, the forwarder, the echo server) and everything the
// benchmark measures in its own process (the router part, the simulator,
// reading and checking a history in process) are this build's in both.

// baselineParts are the parts that can run another build.
var baselineParts = []string{PartStartup, PartHistory, PartProxy, PartSim}

// baselineRounds is how many times each build runs the parts, taking
// turns: this build, the other, this build, the other.
const baselineRounds = 2

// BaselineFigure is one figure of both builds: each build's measurements,
// a round each.
type BaselineFigure struct {
	Name string
	// Unit says how to write it: "duration" (nanoseconds), "bytes" or
	// "rate" (per second).
	Unit       string
	This, Base []float64
}

// Ratio is the median of this build's figures to the baseline's (0 when
// either is missing).
func (f BaselineFigure) Ratio() float64 {
	t, b := median(f.This), median(f.Base)
	if t <= 0 || b <= 0 {
		return 0
	}
	return t / b
}

// figure is a named measurement of one run of the parts.
type figure struct {
	name, unit string
	value      float64
}

// baselineFigures lists the figures of a run of the parts that the build
// under test makes: those baselineParts name.
func baselineFigures(r *Results) []figure {
	var out []figure
	for _, s := range r.Startup {
		p := fmt.Sprintf("startup, %d nodes: ", s.Nodes)
		out = append(out,
			figure{p + "up in", "duration", float64(s.Up())},
			figure{p + "harness peak", "bytes", float64(s.HarnessPeak())},
			figure{p + "harness CPU to up", "duration", float64(s.CPU())},
			figure{p + "bare start (this build's in both)", "duration", float64(s.BareUp())})
	}
	for i := range r.Proxy {
		cs := &r.Proxy[i]
		med := func(get func(Figures) float64) float64 {
			var xs []float64
			for _, f := range cs.Runs[Proxied] {
				xs = append(xs, get(f))
			}
			return median(xs)
		}
		p := "proxy, " + cs.Title + ": "
		if cs.Mode == Pipelined {
			out = append(out, figure{p + "round trips/s", "rate", med(func(f Figures) float64 { return f.Throughput() })})
			continue
		}
		out = append(out,
			figure{p + "round-trip p50", "duration", med(func(f Figures) float64 { return float64(f.P50) })},
			figure{p + "round-trip p99", "duration", med(func(f Figures) float64 { return float64(f.P99) })})
	}
	var sim *SimRates
	if r.SimOther != nil {
		sim = r.SimOther
	} else if len(r.Sim) > 0 {
		rates := simRates(r.Sim)
		sim = &rates
	}
	if sim != nil {
		out = append(out,
			figure{"sim: simulator, deliveries/s", "rate", sim.Sim},
			figure{"sim: bare loop, deliveries/s (each build's own)", "rate", sim.Floor},
			figure{"sim: simulator to its bare loop", "ratio", sim.Ratio()},
			figure{"sim: lowest scenario to its bare loop", "ratio", sim.Lowest})
	}
	if h := r.History; h != nil && h.CoupCheck > 0 {
		out = append(out,
			figure{"history: coup check", "duration", float64(h.CoupCheck)},
			figure{"history: coup check, peak RSS", "bytes", float64(h.CoupCheckPeak)})
	}
	return out
}

// checkBaseline refuses a baseline run of parts that cannot run another
// build.
func (c *Config) checkBaseline() error {
	if len(c.Baseline) == 0 {
		return nil
	}
	for _, p := range c.Parts {
		if !slices.Contains(baselineParts, p) {
			return fmt.Errorf("--baseline: the %s part measures this build in the benchmark's own process and cannot run another build; name parts among %s with --only",
				p, strings.Join(baselineParts, ", "))
		}
	}
	return nil
}

// runBaseline runs the parts with this build and with the baseline in
// turns, and returns this build's first results with the figures of both.
func runBaseline(ctx context.Context, cfg Config) (*Results, error) {
	this := cfg
	this.Baseline = nil
	base := this
	base.Coup = cfg.Baseline
	base.Probe = cfg.Probe // the floors and helpers stay this build's
	base.Profile = ""      // the profiles are this build's
	base.ProxyProbe = append(append([]string(nil), cfg.Baseline...), "bench-probe")
	base.simOther = true
	var first *Results
	byName := map[string]*BaselineFigure{}
	var order []string
	add := func(r *Results, isBase bool) {
		for _, f := range baselineFigures(r) {
			bf := byName[f.name]
			if bf == nil {
				bf = &BaselineFigure{Name: f.name, Unit: f.unit}
				byName[f.name] = bf
				order = append(order, f.name)
			}
			if isBase {
				bf.Base = append(bf.Base, f.value)
			} else {
				bf.This = append(bf.This, f.value)
			}
		}
	}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	collect := func() []BaselineFigure {
		var out []BaselineFigure
		for _, n := range order {
			out = append(out, *byName[n])
		}
		return out
	}
	for round := range baselineRounds {
		for _, b := range []struct {
			cfg    Config
			isBase bool
			name   string
		}{{this, false, "this build"}, {base, true, "the baseline " + strings.Join(cfg.Baseline, " ")}} {
			progress("baseline round %d of %d: %s", round+1, baselineRounds, b.name)
			r, err := Run(ctx, b.cfg)
			if r != nil {
				add(r, b.isBase)
			}
			if first == nil && r != nil {
				first = r
			}
			if err != nil {
				if first == nil {
					first = &Results{Config: cfg}
				}
				first.Config.Baseline = cfg.Baseline
				first.Baseline = collect()
				if b.isBase {
					err = fmt.Errorf("the baseline: %w", err)
				}
				return first, err
			}
		}
	}
	first.Config.Baseline = cfg.Baseline
	first.Baseline = collect()
	return first, nil
}

func (r *Results) printBaseline(w io.Writer) {
	fmt.Fprintf(w, "\nbaseline: this build against %s, taking turns, %d runs each; medians; (ratio) this build's to the baseline's\n",
		strings.Join(r.Config.Baseline, " "), baselineRounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tbaseline\tthis build")
	for _, f := range r.Baseline {
		format := formatDuration
		switch f.Unit {
		case "bytes":
			format = func(x float64) string { return mb(int64(x)) }
		case "rate":
			format = formatRate
		case "ratio":
			format = func(x float64) string { return fmt.Sprintf("%.2f×", x) }
		}
		cell := format(median(f.This))
		if ratio := f.Ratio(); ratio > 0 {
			cell += fmt.Sprintf(" (%.2f×)", ratio)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.Name, format(median(f.Base)), cell)
	}
	tw.Flush()
}
