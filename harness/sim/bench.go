package sim

import (
	"time"

	"coup/harness/scenario"
)

// Figures are what a benchmark measures of simulated runs.
type Figures struct {
	Runs int
	// Delivered counts the message copies handed to receivers; Steps every
	// queued item run (deliveries, timers, requests, ...).
	Delivered, Steps int64
	// Virtual is the virtual time simulated.
	Virtual time.Duration
	// Sim is the real time the simulations took; Checks the real time
	// their checks took.
	Sim, Checks time.Duration
}

// Add adds one outcome's figures.
func (f *Figures) Add(out *Outcome) {
	f.Runs++
	f.Delivered += out.Stats.Delivered
	f.Steps += out.Stats.Steps
	f.Virtual += out.Stats.Virtual
	f.Sim += out.Wall
	f.Checks += out.Checks
}

// DeliveriesPerSecond is the simulation's rate, checks aside.
func (f Figures) DeliveriesPerSecond() float64 { return rate(float64(f.Delivered), f.Sim) }

// DeliveriesPerSecondChecked is the rate with the checks' time counted.
func (f Figures) DeliveriesPerSecondChecked() float64 {
	return rate(float64(f.Delivered), f.Sim+f.Checks)
}

// Speedup is the virtual time simulated per unit of real time, checks
// aside.
func (f Figures) Speedup() float64 { return rate(f.Virtual.Seconds(), f.Sim) }

func rate(x float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return x / d.Seconds()
}

// Bench simulates a scenario for n seeds from from, one after another on
// the calling goroutine (one core), without a store, and returns the
// figures.
func Bench(sc *scenario.Scenario, from int64, n int) (Figures, error) {
	var f Figures
	hint := 0
	for i := range n {
		out, err := Simulate(sc, from+int64(i), Options{EventsHint: hint})
		if err != nil {
			return f, err
		}
		f.Add(out)
		hint = max(hint, len(out.History.Events)+len(out.History.Events)/8)
	}
	return f, nil
}
