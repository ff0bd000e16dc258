package lifecycle

import (
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/workloads"
)

// Parts are what a run is made of besides its driver: the nemesis's
// configuration, the meta event, the workload and the lifecycle's
// timing. Assemble makes them from a scenario, once for every driver
// (Execute hands them to the driver it builds); a driver adds what only
// it knows (the real servers' isolation, the simulator's strategy) and
// builds its run's lifecycle with New.
type Parts struct {
	// Nemesis configures the run's nemesis, which New builds.
	Nemesis nemesis.Config
	// Meta is recorded at the run's zero (Config.Meta).
	Meta *history.Meta
	// Workload drives the clients; OpTimeout is how long a client waits
	// for an answer.
	Workload  workloads.Workload
	OpTimeout time.Duration
	// Duration is when every fault is healed; Recovery how long the run
	// goes on after the heal.
	Duration, Recovery time.Duration
}

// Assemble makes the parts of a run of sc, the same for every driver.
func Assemble(sc *scenario.Scenario) *Parts {
	w, timeout := NewWorkload(sc)
	return &Parts{
		Nemesis: NemesisConfig(sc), Meta: RunMeta(sc), Workload: w, OpTimeout: timeout,
		Duration: sc.Duration.D, Recovery: sc.Recovery.D,
	}
}

// New builds the run's nemesis and the lifecycle of the run d carries,
// configured by cfg but for its nemesis, its meta event and its timing,
// which are the parts'. The driver decides each message's fate with
// Run.Nemesis.
func (p *Parts) New(d Driver, cfg Config) *Run {
	cfg.Nemesis = nemesis.New(p.Nemesis)
	cfg.Meta, cfg.Duration, cfg.Recovery = p.Meta, p.Duration, p.Recovery
	return New(d, cfg)
}

// Nemesis is the run's nemesis, with which its driver decides every
// message's fate, under the driver's lock.
func (r *Run) Nemesis() *nemesis.Nemesis { return r.cfg.Nemesis }
