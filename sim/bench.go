package sim

import (
	"syscall"
	"time"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Figures are what a benchmark measures of simulated runs.
type Figures struct {
	Runs int
	// Delivered counts the message copies handed to receivers; Steps every
	// queued item run (deliveries, timers, requests, ...).
	Delivered, Steps int64
	// Virtual is the virtual time simulated.
	Virtual time.Duration
	// Sim and Checks are the real time the simulations and their checks
	// took; SimCPU and ChecksCPU the processor time this process spent on
	// them, which other processes on the machine do not inflate.
	Sim, Checks       time.Duration
	SimCPU, ChecksCPU time.Duration
}

// Add adds other's figures.
func (f *Figures) Add(o Figures) {
	f.Runs += o.Runs
	f.Delivered += o.Delivered
	f.Steps += o.Steps
	f.Virtual += o.Virtual
	f.Sim += o.Sim
	f.Checks += o.Checks
	f.SimCPU += o.SimCPU
	f.ChecksCPU += o.ChecksCPU
}

// AddOutcome adds one simulated run's figures (its wall times only).
func (f *Figures) AddOutcome(out *Outcome) {
	f.Add(Figures{Runs: 1, Delivered: out.Stats.Delivered, Steps: out.Stats.Steps, Virtual: out.Stats.Virtual, Sim: out.Wall, Checks: out.Checks})
}

// DeliveriesPerSecond is the simulation's rate per second of processor
// time (of real time when processor time was not measured), checks aside.
func (f Figures) DeliveriesPerSecond() float64 { return rate(float64(f.Delivered), f.sim()) }

// DeliveriesPerSecondChecked is the rate with the checks' time counted.
func (f Figures) DeliveriesPerSecondChecked() float64 {
	return rate(float64(f.Delivered), f.sim()+f.checks())
}

// Speedup is the virtual time simulated per second of real (wall) time,
// checks aside.
func (f Figures) Speedup() float64 { return rate(f.Virtual.Seconds(), f.Sim) }

func (f Figures) sim() time.Duration {
	if f.SimCPU > 0 {
		return f.SimCPU
	}
	return f.Sim
}

func (f Figures) checks() time.Duration {
	if f.SimCPU > 0 {
		return f.ChecksCPU
	}
	return f.Checks
}

func rate(x float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return x / d.Seconds()
}

// cpuTime is the processor time this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Bench simulates a scenario for n seeds from from, one after another on
// the calling goroutine, without a store, and returns the figures. For the
// processor times to be those of one core, run it with GOMAXPROCS=1 and
// nothing else running in the process.
func Bench(sc *scenario.Scenario, from int64, n int) (Figures, error) {
	var f Figures
	hint := 0
	for i := range n {
		g, err := benchRun(sc, from+int64(i), &hint, true)
		if err != nil {
			return f, err
		}
		f.Add(g)
	}
	return f, nil
}

// benchRun simulates one seed, measured, and checks its history when
// check is set, and returns its figures. hint carries the size of the
// largest history so far from one seed to the next (Config.EventsHint).
func benchRun(sc *scenario.Scenario, seed int64, hint *int, check bool) (Figures, error) {
	cfg, err := FromScenario(sc, seed)
	if err != nil {
		return Figures{}, err
	}
	cfg.EventsHint = *hint
	c0, w0 := cpuTime(), time.Now()
	s, err := New(cfg)
	if err != nil {
		return Figures{}, err
	}
	h, err := s.Run()
	if err != nil {
		return Figures{}, err
	}
	c1, w1 := cpuTime(), time.Now()
	st := s.Stats()
	f := Figures{Runs: 1, Delivered: st.Delivered, Steps: st.Steps, Virtual: st.Virtual, Sim: w1.Sub(w0), SimCPU: c1 - c0}
	if check {
		if _, err := verdict.Evaluate(h); err != nil {
			return Figures{}, err
		}
		c2, w2 := cpuTime(), time.Now()
		f.Checks, f.ChecksCPU = w2.Sub(w1), c2-c1
	}
	*hint = max(*hint, len(h.Events)+len(h.Events)/8)
	Recycle(&Outcome{array: s.rec.array()})
	return f, nil
}
