package sim

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/coupharness/coup/nemesis"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/algorithms"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// ErrNotSimulable is wrapped by the errors for scenarios the simulator
// cannot run: it runs built-in state machines only.
var ErrNotSimulable = errors.New("the simulator runs built-in state machines only")

// ErrForeign is the error for a scenario whose nodes are a foreign program
// (its command key).
var ErrForeign = fmt.Errorf("%w, and this scenario runs a foreign node program (command); use coup run", ErrNotSimulable)

// ErrServers is the error for a scenario of real servers ([server]).
var ErrServers = fmt.Errorf("%w, and this scenario runs real servers ([server]), whose code and clocks are their own; use coup run", ErrNotSimulable)

// ErrRealOnly is the error for a built-in algorithm that is not a state
// machine (memberlist).
var ErrRealOnly = fmt.Errorf("%w, and this algorithm keeps its own clock and goroutines, so it runs only as real processes; use coup run", ErrNotSimulable)

// ErrClockJump is the error for a clock fault with an offset: a jump is
// done to real processes' clocks, and the simulator's nodes keep only
// timers, which a rate makes run fast or slow.
var ErrClockJump = fmt.Errorf("%w, and a clock jump (offset) is made to real processes' clocks: the simulator's clocks only run fast or slow (rate); use coup run", ErrNotSimulable)

// FromScenario is the simulator's configuration of a scenario run with a
// seed (the scenario's own, or another to sweep or replay): everything the
// real harness would give its nodes, nemesis and workload.
func FromScenario(sc *scenario.Scenario, seed int64) (Config, error) {
	return configure(sc, nil, seed)
}

// configure is FromScenario, with the nodes running spec's machine when
// spec is set (Options.Spec) instead of the scenario's built-in
// algorithm: then a command the scenario has, which coup run would start,
// is left aside.
func configure(sc *scenario.Scenario, spec *nodes.Spec, seed int64) (Config, error) {
	m, err := machineOf(sc, spec)
	if err != nil {
		return Config{}, err
	}
	seeded := seededAs(sc, m, seed)
	return configureParts(seeded, m, lifecycle.Assemble(seeded)), nil
}

// machineOf is the machine every node of sc runs: spec when set, or the
// scenario's built-in algorithm; an error when the simulator cannot run
// the scenario.
func machineOf(sc *scenario.Scenario, spec *nodes.Spec) (nodes.Spec, error) {
	for i, f := range sc.Faults {
		if f.Kind == string(nemesis.Clock) && f.Offset.D != 0 {
			return nodes.Spec{}, fmt.Errorf("%s: faults[%d].offset: %w", sc.File, i, ErrClockJump)
		}
	}
	if spec != nil {
		if spec.New == nil || spec.Codec == nil {
			return nodes.Spec{}, fmt.Errorf("%s: %w: the machine's spec needs New and a Codec", sc.File, ErrBadConfig)
		}
		return *spec, nil
	}
	if sc.OwnMachine() {
		return nodes.Spec{}, fmt.Errorf("%s: the scenario was read for a machine of your own, and none was given (Options.Spec)", sc.File)
	}
	if sc.Command != nil {
		return nodes.Spec{}, fmt.Errorf("%s: command: %w", sc.File, ErrForeign)
	}
	if sc.Server != nil {
		return nodes.Spec{}, fmt.Errorf("%s: server: %w", sc.File, ErrServers)
	}
	builtin, ok := algorithms.Lookup(sc.Algorithm)
	if !ok {
		return nodes.Spec{}, &scenario.Error{File: sc.File, Field: "algorithm", Msg: fmt.Sprintf("unknown algorithm %q", sc.Algorithm)}
	}
	if builtin.Program != nil {
		return nodes.Spec{}, fmt.Errorf("%s: algorithm %s: %w", sc.File, sc.Algorithm, ErrRealOnly)
	}
	return builtin, nil
}

// seededAs is sc run with seed, its nodes running spec's machine.
func seededAs(sc *scenario.Scenario, spec nodes.Spec, seed int64) *scenario.Scenario {
	seeded := *sc
	seeded.Seed = seed
	if seeded.Algorithm == "" {
		seeded.Algorithm = spec.Name // the history names what ran
	}
	return &seeded
}

// configureParts is the configuration of sc, every node running spec's
// machine, made of the run's parts (lifecycle.Assemble of sc).
func configureParts(sc *scenario.Scenario, spec nodes.Spec, p *lifecycle.Parts) Config {
	p.Meta.Simulated = true
	n := p.Nemesis
	return Config{
		Spec: spec, Nodes: n.Nodes, IDs: sc.IDs, Params: sc.Params, Seed: n.Seed,
		Checksums: sc.ChecksumsOn(),
		Latency:   n.Latency, Jitter: n.Jitter, FIFO: n.FIFO,
		Faults:   n.Faults,
		Duration: p.Duration, Recovery: p.Recovery,
		RecordMessages: sc.RecordMessages(),
		Workload:       p.Workload, OpTimeout: p.OpTimeout,
		Meta: p.Meta,
	}
}

// Options configure Simulate.
type Options struct {
	// Store, when set, is the store's root: the run is saved in
	// <Store>/<scenario>/<timestamp>/ as a real run is (history.jsonl,
	// results.json, report.html, harness.log) and <scenario>/latest points
	// at it. Empty: nothing is written.
	Store string
	// Hash computes the history's hash (Outcome.Hash) even without a store.
	Hash bool
	// EventsHint is Config.EventsHint: how many events to expect.
	EventsHint int
	// RoundTrip passes every message through the algorithm's codec
	// (Config.RoundTrip).
	RoundTrip bool
	// Strategy is how the run explores the scenario's open choices
	// (Config.Strategy; the zero value is Random).
	Strategy Strategy
	// Spec, when set, is the machine every node runs instead of the
	// scenario's built-in algorithm: a machine of the caller's own (see
	// scenario.LoadMachine), or one simulated in place of a scenario's
	// node program (command).
	Spec *nodes.Spec
}

// Outcome is one simulated run of a scenario, judged.
type Outcome struct {
	Seed    int64
	Results *verdict.Results
	History *history.History
	// Hash is the SHA-256 of the history's JSON lines: the sha256sum of
	// its history.jsonl (set with a store, or when asked).
	Hash string
	// Rehash is the hash of a second run with the same seed (Twice).
	Rehash string
	// Dir is the run's store folder ("" without a store).
	Dir   string
	Stats Stats
	// Wall is the real time the simulation took; Checks the real time the
	// checks took.
	Wall, Checks time.Duration

	array []history.Event // where the events are kept, for Recycle
}

// Simulate runs a scenario in the simulator with a seed and checks its
// history with the same checks as a real run: its lifecycle is every
// driver's (lifecycle.Execute).
func Simulate(sc *scenario.Scenario, seed int64, opts Options) (*Outcome, error) {
	m, err := machineOf(sc, opts.Spec)
	if err != nil {
		return nil, err
	}
	seeded := seededAs(sc, m, seed)
	var s *Sim
	run, err := lifecycle.Execute(context.Background(), opts.Store, seeded, func(f *lifecycle.Files, p *lifecycle.Parts) (*lifecycle.Run, error) {
		cfg := configureParts(seeded, m, p)
		cfg.RoundTrip, cfg.EventsHint, cfg.Strategy = opts.RoundTrip, opts.EventsHint, opts.Strategy
		if f.Dir != "" {
			cfg.History, cfg.Log = f.History, bufio.NewWriterSize(f.Log, 64<<10)
		}
		if s, err = New(cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", sc.File, err)
		}
		return s.life, nil
	})
	if run == nil || run.Results == nil {
		return nil, err
	}
	out := &Outcome{Seed: seed, Results: run.Results, History: run.History, Dir: run.Dir,
		Stats: s.Stats(), Wall: run.Ran, Checks: run.Checked, array: s.rec.array()}
	if opts.Store != "" || opts.Hash {
		out.Hash = Hash(out.History.Events)
	}
	return out, err
}

// Hash is the SHA-256, in hex, of events written as a history file is
// (each event's JSON and a newline): every field of every event counts, and
// it equals the sha256sum of the history.jsonl they were read from.
func Hash(events []history.Event) string {
	h := sha256.New()
	for i := range events {
		b, err := json.Marshal(&events[i])
		if err != nil {
			panic(fmt.Sprintf("sim: encode event %d: %v", i, err)) // events always encode
		}
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
