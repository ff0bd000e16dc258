package coup

import (
	"fmt"
	"runtime"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/sim"
	"github.com/coupharness/coup/verdict"
)

// Options say which seeds Run and Test simulate, where runs are saved,
// and whether a failure is shrunk.
type Options struct {
	// Seed is the first seed (default: the scenario's).
	Seed int64
	// Seeds is how many seeds to run, from Seed on (default 1). One seed
	// is run and saved in the store whatever its outcome; a sweep saves
	// only its first seed not as expected, run again.
	Seeds int
	// Workers is how many seeds are simulated at once (default: the
	// number of processors Go may use).
	Workers int
	// Store is the store's root (default "store"): a saved run goes in
	// <Store>/<scenario>/<timestamp>/, as coup sim saves it, with
	// history.jsonl, results.json, report.html and harness.log, and
	// <Store>/<scenario>/latest points at it.
	Store string
	// Shrink shrinks the first seed not as expected to the smallest
	// scenario coup finds that fails the same way, and writes it to
	// ShrinkTo.
	Shrink bool
	// ShrinkTo is where the shrunk scenario is written (default
	// <Store>/<scenario>/shrunk.toml).
	ShrinkTo string
	// Budget is the most simulations a shrink spends (default 1000).
	Budget int
}

// Result is what Run found.
type Result struct {
	// Scenario is the scenario run, validated, with its defaults.
	Scenario *Scenario
	// From is the first seed run.
	From int64
	// Seeds is how many seeds ran: From, From+1, … From+Seeds−1.
	Seeds int
	// Failing are the seeds whose outcome was not the one the scenario
	// expects (a violation, a check undecided, an expected violation
	// missing), in order.
	Failing []int64
	// Saved is the run saved in the store: the one seed's, or a sweep's
	// first seed not as expected (nil when there was none).
	Saved *Outcome
	// Shrunk is what shrinking Saved found, when Options.Shrink asked.
	Shrunk *Shrunk
	// Wall is the real time the seeds took.
	Wall time.Duration
	// Deliveries counts the messages the seeds' runs delivered.
	Deliveries int64
}

// OK reports whether every seed's outcome was the expected one.
func (r *Result) OK() bool { return len(r.Failing) == 0 && (r.Saved == nil || r.Saved.AsExpected) }

// Outcome is one seed's run, judged by the scenario's checks.
type Outcome struct {
	// Seed is the seed; the same seed gives the same history, always.
	Seed int64
	// Valid is the overall verdict: "true", "false" or "unknown".
	Valid string
	// AsExpected reports whether the verdict is what the scenario
	// expects.
	AsExpected bool
	// Signature names how the run failed ("" when it is as expected and
	// shows no violation): each check not as expected with the headline
	// of its explanation, so that runs failing the same way share it.
	Signature string
	// Summary is the verdict of every check, one line each, as coup sim
	// prints it.
	Summary string
	// Dir is the run's store folder.
	Dir string
	// Hash is the SHA-256 of its history.jsonl.
	Hash string
}

// Run simulates a scenario with every node running node's machine, for
// one seed or a sweep of seeds (Options), and judges each run with the
// scenario's checks, as coup sim does. An error means the scenario, the
// node or the store could not be used; a run that fails is in the Result.
func Run(sc *Scenario, node Node, opts Options) (*Result, error) {
	spec, err := node.spec()
	if err != nil {
		return nil, err
	}
	if sc, err = prepare(sc); err != nil {
		return nil, err
	}
	if _, err := spec.New(nodes.NewParams(sc.Params)); err != nil {
		return nil, fmt.Errorf("%s: params: %w", sc.File, err)
	}
	if opts.Seeds < 0 || opts.Workers < 0 || opts.Budget < 0 {
		return nil, fmt.Errorf("coup: Options: negative Seeds (%d), Workers (%d) or Budget (%d)", opts.Seeds, opts.Workers, opts.Budget)
	}
	if opts.Seed == 0 {
		opts.Seed = sc.Seed
	}
	if opts.Seeds == 0 {
		opts.Seeds = 1
	}
	if opts.Workers == 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Store == "" {
		opts.Store = "store"
	}
	res := &Result{Scenario: sc, From: opts.Seed, Seeds: opts.Seeds}
	simOpts := sim.Options{Spec: &spec}
	start := time.Now()
	if opts.Seeds == 1 {
		so := simOpts
		so.Store = opts.Store
		out, err := sim.Simulate(sc, opts.Seed, so)
		if err != nil {
			return nil, err
		}
		res.Wall, res.Deliveries = time.Since(start), out.Stats.Delivered
		res.Saved = outcome(out)
		if !res.Saved.AsExpected {
			res.Failing = []int64{opts.Seed}
		}
	} else {
		var runErr error
		sim.Seeds(opts.Seed, opts.Seeds, opts.Workers, func(seed int64) (*sim.Outcome, error) {
			return sim.Simulate(sc, seed, simOpts)
		}, func(seed int64, out *sim.Outcome, err error) bool {
			if err != nil {
				runErr = fmt.Errorf("seed %d: %w", seed, err)
				return false
			}
			res.Deliveries += out.Stats.Delivered
			if out.Results.Outcome != verdict.AsExpected {
				res.Failing = append(res.Failing, seed)
			}
			sim.Recycle(out)
			return true
		})
		res.Wall = time.Since(start)
		if runErr != nil {
			return nil, runErr
		}
		if len(res.Failing) > 0 {
			so := simOpts
			so.Store = opts.Store
			out, err := sim.Simulate(sc, res.Failing[0], so)
			if err != nil {
				return nil, err
			}
			res.Saved = outcome(out)
		}
	}
	if opts.Shrink && res.Saved != nil && !res.Saved.AsExpected {
		if res.Shrunk, err = shrink(sc, &spec, res.Saved.Seed, opts); err != nil {
			return res, err
		}
	}
	return res, nil
}

// outcome is a simulated run as Run tells it.
func outcome(out *sim.Outcome) *Outcome {
	r := out.Results
	return &Outcome{
		Seed: out.Seed, Valid: r.Valid.String(), AsExpected: r.Outcome == verdict.AsExpected,
		Signature: explore.Signature(r, out.History), Summary: r.Summary(), Dir: out.Dir, Hash: out.Hash,
	}
}
