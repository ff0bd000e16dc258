package lifecycle

import (
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/algorithms"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/workloads"
)

// RunMeta is the meta event of a run of sc (real or simulated). The
// history's time origin is the run's zero, so the GST is the timely fault's
// at, as it is.
func RunMeta(sc *scenario.Scenario) *history.Meta {
	m := &history.Meta{
		Scenario: sc.Name, File: sc.File, Algorithm: sc.Algorithm, Command: sc.Command, Workload: sc.Workload.Kind,
		Nodes: sc.NodeNames(), IDs: sc.IDs, Seed: sc.Seed,
		Termination: int64(sc.Checks.Termination.D), Progress: int64(sc.Checks.Progress.D), Checks: sc.Checks.Run, Params: sc.Params,
		Checksums:     sc.ChecksumsOn(),
		Stabilisation: int64(sc.Checks.Stabilisation.D),
		StaleLeader:   int64(sc.Checks.StaleLeader.D),
		Expect:        &history.Expect{Valid: sc.Expect.ExpectValid(), Violations: sc.Expect.Violations, Either: sc.Expect.Either, Exits: sc.Expect.Exits},
		Servers:       sc.Server != nil,
	}
	if gst, ok := sc.GST(); ok {
		m.GST = int64(gst)
	}
	m.Elects = sc.ElectsRule()
	if spec, ok := lookupSpec(sc); ok && sc.Command == nil {
		if spec.Bound != nil {
			initiators := 0
			if sc.Workload.Kind == "election" {
				initiators = len(sc.Workload.Initiators)
			}
			m.MessageBound = int64(spec.Bound(sc.Nodes, initiators))
		}
	}
	return m
}

// NewWorkload returns the scenario's workload and how long its clients
// wait for an answer (for real runs and simulated ones).
func NewWorkload(sc *scenario.Scenario) (workloads.Workload, time.Duration) {
	w, timeout := &sc.Workload, sc.Workload.Timeout.D
	if timeout <= 0 {
		timeout = scenario.DefaultOpTimeout
	}
	switch w.Kind {
	case "election":
		return &workloads.Election{Initiators: w.Initiators, At: w.At.D}, timeout
	case "mutex":
		return &workloads.Mutex{Clients: w.Clients, Nodes: w.Targets, Rate: w.Rate, Hold: w.Hold.D,
			At: w.At.D, Until: sc.Duration.D, Seed: sc.Seed}, timeout
	case scenario.WorkloadLinKV:
		mix := workloads.Mix{Read: 1, Write: 1, Cas: 1}
		if w.Mix != nil {
			mix = workloads.Mix{Read: w.Mix.Read, Write: w.Mix.Write, Cas: w.Mix.Cas}
		}
		return &workloads.KV{Clients: w.Clients, Nodes: w.Targets, Rate: w.Rate, Keys: w.Keys, Values: w.Values, Mix: mix,
			At: w.At.D, Until: sc.Duration.D, Seed: sc.Seed, Final: finalReads(sc)}, timeout
	case scenario.WorkloadSet:
		return &workloads.Set{Clients: w.Clients, Nodes: w.Targets, Rate: w.Rate,
			At: w.At.D, Until: sc.Duration.D, Seed: sc.Seed, Final: finalReads(sc)}, timeout
	case scenario.WorkloadEcho:
		return &workloads.Echo{Clients: w.Clients, Nodes: w.Targets, Rate: w.Rate,
			At: w.At.D, Until: sc.Duration.D, Seed: sc.Seed}, timeout
	}
	return workloads.None{}, timeout
}

// finalReads are the workload's final reads: final_after after the heal,
// which comes at the duration.
func finalReads(sc *scenario.Scenario) workloads.Final {
	readers, ok := sc.Workload.FinalReaders()
	if !ok {
		return workloads.Final{}
	}
	return workloads.Final{At: sc.Duration.D + sc.Workload.FinalAfter.D, Readers: readers}
}

// lookupSpec finds the built-in algorithm a scenario names, if any.
func lookupSpec(sc *scenario.Scenario) (nodes.Spec, bool) {
	return algorithms.Lookup(sc.Algorithm)
}

// NemesisConfig is the nemesis of a run of sc (real or simulated), before
// any strategy of the simulator's.
func NemesisConfig(sc *scenario.Scenario) nemesis.Config {
	return nemesis.Config{
		Nodes: sc.NodeNames(), Faults: sc.NemesisFaults(), Duration: sc.Duration.D, Seed: sc.Seed,
		Latency: sc.Network.Latency.D, Jitter: sc.Network.Jitter.D, FIFO: sc.Network.IsFIFO(),
	}
}

// OutboxSize bounds the deliveries waiting for one node, in every driver:
// what finds the bound reached is dropped as an overflow.
const OutboxSize = 4096
