package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Files are a run's store folder and the files its driver writes as the
// run goes. Without a store (a simulator's sweep) every field is empty:
// nothing is written.
type Files struct {
	// Dir is the run's folder, store/<scenario>/<timestamp>/.
	Dir string
	// History is Dir's history.jsonl, and Log its harness.log.
	History, Log *os.File
}

// Outcome is one run, carried out and judged.
type Outcome struct {
	Results *verdict.Results
	History *history.History
	// Dir is the run's store folder ("" without a store).
	Dir string
	// Ran is the real time the run took, from the start of its nodes to
	// its closed history; Checked the real time the checks took.
	Ran, Checked time.Duration
}

// Execute carries out one run of sc and judges it, the same whatever the
// driver: it makes the run's store folder (when store is not empty) and
// opens its history and log there, and assembles the run's parts
// (Assemble); build makes the driver over those files and returns the
// run's lifecycle, built from the parts (Parts.New); the run starts (the
// meta event at its zero), runs its workload and its faults until the
// duration, heals, waits out the recovery window, stops and records its end
// event; the history is closed and read back, the checks judge it, and
// results.json, report.html and the checks' files are saved in the folder,
// which store/<scenario>/latest then names.
//
// A run whose nodes did not all start (ErrNodeStart, or ctx ended first)
// is not judged: its history's unstarted event, and so its results, say
// why. An interrupted run (ctx ended) is judged on the prefix it recorded,
// and its outcome is unknown. The error is for a run that could not be
// carried out, judged or saved; the outcome is returned with it, holding
// what there is (its Dir once the folder exists).
func Execute(ctx context.Context, store string, sc *scenario.Scenario, build func(f *Files, p *Parts) (*Run, error)) (*Outcome, error) {
	out := &Outcome{}
	var f Files
	if store != "" {
		dir, err := NewRunDir(store, sc.Name, time.Now())
		if err != nil {
			return nil, err
		}
		out.Dir, f.Dir = dir, dir
		if f.History, err = os.Create(filepath.Join(dir, HistoryFile)); err != nil {
			return nil, fmt.Errorf("create history: %w", err)
		}
		defer f.History.Close()
		if f.Log, err = os.Create(filepath.Join(dir, HarnessLog)); err != nil {
			return nil, fmt.Errorf("create harness log: %w", err)
		}
		defer f.Log.Close()
	}
	run, err := build(&f, Assemble(sc))
	if err != nil {
		if f.Log != nil {
			// The folder says why its history is empty.
			fmt.Fprintf(f.Log, "the run could not be set up: %v\n", err)
		}
		return out, err
	}
	start := time.Now()
	runErr := run.Finish(ctx)
	h, err := run.d.Close()
	out.Ran = time.Since(start)
	if err != nil {
		if run.startErr != nil {
			// What the start said matters more than why the history
			// could not be read back.
			return out, fmt.Errorf("the run did not start: %s (and its history could not be read back: %w)", unstartedEvent(run.startErr).Detail, err)
		}
		return out, err
	}
	out.History = h
	start = time.Now()
	// A run that did not start is not judged (its history's unstarted
	// event says why): verdicts there would only hide the cause.
	if out.Results, err = verdict.Evaluate(h); err != nil {
		return out, err
	}
	if runErr != nil && !out.Results.NotStarted() {
		out.Results.Failed(runErr)
	}
	out.Checked = time.Since(start)
	if f.Dir != "" {
		if err := Save(f.Dir, out.Results, h, run.d.Logf); err != nil {
			return out, err
		}
	}
	return out, nil
}
