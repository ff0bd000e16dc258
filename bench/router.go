package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/coupharness/coup/harness"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// probeScenario is the scenario that runs the probe under coup: two
// foreign nodes, no latency, checksums off, no workload, the fault mix
// when given, every message recorded or none. Its duration only bounds a
// probe that fails: the run is cut short once the pinger has reported.
func probeScenario(probe []string, pc probeConfig, faults *FaultMix, record bool) string {
	argv, _ := json.Marshal(append(append([]string(nil), probe...), pc.args()...)) // a JSON array of strings is a TOML array
	var b strings.Builder
	fmt.Fprintf(&b, `name = "bench-probe"
description = "coup bench: the ping/echo probe"
algorithm = "probe"
command = %s
nodes = 2
checksums = false
duration = %q
recovery = "0s"

[network]
latency = "0s"

[workload]
kind = "none"

[history]
messages = %t
max_messages = 100000000 # every message of the measurement, however fast

[checks]
run = ["agreement"]
`, argv, tomlDuration(pc.Warmup+pc.Time+probeSlack), record)
	if faults != nil {
		fmt.Fprintf(&b, `
[[faults]]
kind = "loss"
probability = %g

[[faults]]
kind = "duplicate"
probability = %g

[[faults]]
kind = "delay"
delay = %q
jitter = %q
`, faults.Loss, faults.Duplicate, tomlDuration(faults.Delay), tomlDuration(faults.Jitter))
	}
	return b.String()
}

// probeSlack is how long a probe run may take beyond its warm-up and
// measured time before it counts as failed: starting two processes and
// the greeting, and a measured time stretched to hold its round trips.
const probeSlack = maxStretch + 20*time.Second

func tomlDuration(d time.Duration) string { return fmt.Sprintf("%dns", d.Nanoseconds()) }

// runCoup runs the probe as two foreign nodes under coup's harness
// (harness.Run, the code behind `coup run`), and cancels the run once the
// pinger has reported. With profile set, the harness's CPU profile from
// the run's start to the report is written there.
func runCoup(ctx context.Context, probe []string, pc probeConfig, faults *FaultMix, record bool, dir, profile string) (Figures, error) {
	rp, err := newReportPipe(pc.Report)
	if err != nil {
		return Figures{}, err
	}
	defer rp.close()
	src := probeScenario(probe, pc, faults, record)
	file := filepath.Join(dir, "bench-probe.toml")
	sc, err := scenario.Parse(file, src)
	if err != nil {
		return Figures{}, fmt.Errorf("the probe's scenario: %w", err)
	}
	store := filepath.Join(dir, "store")
	kept := false // a failed run's store stays, for its logs
	defer func() {
		if !kept {
			os.RemoveAll(store)
		}
	}()
	var stopProfile func()
	if profile != "" {
		if stopProfile, err = startCPUProfile(profile); err != nil {
			return Figures{}, err
		}
		defer stopProfile()
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cpu := processCPU()
	done := make(chan struct{})
	var res *verdict.Results
	var runErr error
	go func() {
		defer close(done)
		res, _, runErr = harness.Run(runCtx, sc, harness.Options{Store: store})
	}()
	f, err := rp.wait(ctx, done)
	f.CPU = processCPU() - cpu
	if stopProfile != nil {
		stopProfile()
	}
	cancel()
	<-done
	kept = err != nil
	switch {
	case err == nil:
		return f, nil
	case runErr != nil:
		return f, fmt.Errorf("coup: %w", runErr)
	case res != nil && res.Error != "":
		return f, fmt.Errorf("coup: %s", res.Error)
	}
	return f, fmt.Errorf("coup: %w", err)
}

// startCPUProfile starts the CPU profile to path and returns what stops
// it (at most once).
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			pprof.StopCPUProfile()
			f.Close()
		}
	}, nil
}
