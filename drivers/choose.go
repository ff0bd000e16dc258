package drivers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/harness"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers"
	"github.com/coupharness/coup/sim"
	"github.com/coupharness/coup/verdict"
)

// The drivers' names, as --driver gives them.
const (
	Sim       = "sim"       // the simulator: built-in state machines on a virtual clock
	Processes = "processes" // node processes on pipes
	Servers   = "servers"   // real servers on hosts
)

// Real is a name Choose takes for whichever real driver the scenario
// needs: real servers for a scenario with a [server], else node
// processes (what coup run runs).
const Real = "real"

// Names are the drivers, as a flag's help lists them.
var Names = []string{Sim, Processes, Servers}

// Driver is a driver chosen for a scenario (Choose).
type Driver struct {
	// Name is Sim, Processes or Servers.
	Name string
}

// Can are the drivers that can run sc, the one it runs on by default
// first and the real one last: real servers for a scenario with a
// [server], the simulator (or node processes) for a built-in state
// machine, node processes for the rest.
func Can(sc *scenario.Scenario) []string {
	switch {
	case sc.Server != nil:
		return []string{Servers}
	case sc.StateMachine():
		return []string{Sim, Processes}
	}
	return []string{Processes}
}

// Choose is the driver named that runs sc: one of Names, Real for the
// real one sc needs, or "" for sc's default (Can's first). A driver that
// cannot run sc is an error that says which can; the errors begin with
// the name, for a flag's name to go before it. Real and "" are never an
// error.
func Choose(sc *scenario.Scenario, name string) (Driver, error) {
	can := Can(sc)
	switch name {
	case "":
		name = can[0]
	case Real:
		return Driver{Name: can[len(can)-1]}, nil
	}
	switch {
	case !slices.Contains(Names, name):
		return Driver{}, fmt.Errorf("%q: want sim, processes or servers%s", name, scenario.DidYouMean(name, Names))
	case !slices.Contains(can, name):
		return Driver{}, fmt.Errorf("%s: %s runs on %s only", name, sc.File, strings.Join(can, " or "))
	}
	return Driver{Name: name}, nil
}

// Options configure a driver's runs.
type Options struct {
	// Store is the store's root. The simulator's runner runs without
	// one and keeps a failing run there (sim.Runner.KeepIn); "" keeps
	// none.
	Store string
	// Progress, when set, receives a real run's progress lines.
	Progress io.Writer
	// Episodes runs real servers' runs as episodes of long-lived
	// clusters (servers.Session) instead of a cluster each; Notes, when
	// set, is told when a cluster is closed and a fresh one started.
	Episodes bool
	Notes    io.Writer
}

// Run runs sc once on the driver, into the store, and returns its
// results and its folder.
func (d Driver) Run(ctx context.Context, sc *scenario.Scenario, opts Options) (*verdict.Results, string, error) {
	switch d.Name {
	case Servers:
		return servers.Run(ctx, sc, servers.Options{Store: opts.Store, Progress: opts.Progress})
	case Sim:
		out, err := sim.Simulate(sc, sc.Seed, sim.Options{Store: opts.Store})
		if out == nil {
			return nil, "", err
		}
		return out.Results, out.Dir, err
	}
	return harness.Run(ctx, sc, harness.Options{Store: opts.Store, Progress: opts.Progress})
}

// Runner is the driver as the search room sees it, running sc's
// schedules. Only real servers run as episodes: a Runner that cannot
// honour opts.Episodes is an error (ErrEpisodes).
func (d Driver) Runner(sc *scenario.Scenario, opts Options) (explore.Runner, error) {
	if opts.Episodes && d.Name != Servers {
		return nil, fmt.Errorf("%w: only real servers run as episodes; %s runs on %s", ErrEpisodes, sc.File, d.Name)
	}
	switch d.Name {
	case Sim:
		return &sim.Runner{KeepIn: opts.Store}, nil
	case Servers:
		if opts.Episodes {
			if why := servers.EpisodesRefused(sc); why != "" {
				return nil, fmt.Errorf("%s cannot run as episodes: %s", sc.File, why)
			}
			return &servers.EpisodeRunner{Options: servers.Options{Store: opts.Store, Progress: opts.Progress}, Notes: opts.Notes}, nil
		}
		return servers.NewRunner(servers.Options{Store: opts.Store, Progress: opts.Progress}), nil
	}
	return harness.NewRunner(harness.Options{Store: opts.Store, Progress: opts.Progress}), nil
}

// ErrEpisodes wraps a request for episodes the driver cannot honour.
var ErrEpisodes = errors.New("episodes")
