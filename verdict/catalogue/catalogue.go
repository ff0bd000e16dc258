package catalogue

import (
	"path/filepath"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/verdict"
)

// SummarySchema is the version of the shape of summary.json (documented in
// docs/ci.md). It changes only when a field changes meaning or goes.
const SummarySchema = 1

// SummaryFile is summary.json's name at the store's root.
const SummaryFile = "summary.json"

// NotRun is the outcome of a planned run that was not carried out: still
// to come, or never started because the catalogue was interrupted.
const NotRun = "not run"

// Run is one run of a scenario in a catalogue.
type Run struct {
	// Scenario is the scenario's name, and File the file it came from.
	Scenario string `json:"scenario"`
	File     string `json:"file"`
	// Repeat is which run of the scenario this is, from 1, of Of
	// (coup run --repeat).
	Repeat int `json:"repeat"`
	Of     int `json:"of"`
	// Valid is the run's verdict; absent when the run has none (not run,
	// or it could not be carried out).
	Valid *checks.Validity `json:"valid,omitempty"`
	// Outcome is "as expected", "unexpected", "unknown" or "not run".
	Outcome string `json:"outcome"`
	// ExitCode is the run's own exit code: 0 as expected, 1 unexpected,
	// 2 a node failed to start, 3 unknown (a not-run run counts as 3).
	ExitCode int `json:"exit_code"`
	// Started is when the run began; Duration how long it took, checks
	// included.
	Started  time.Time `json:"started,omitzero"`
	Duration int64     `json:"duration_ns"`
	// Store is the run's store folder.
	Store string `json:"store,omitempty"`
	// Notes explain an outcome that is not as expected, one sentence
	// each (results.json's notes).
	Notes []string `json:"notes,omitempty"`
	// Error says why the run failed, when it did (a node would not start,
	// the run was interrupted, the store could not be written).
	Error string `json:"error,omitempty"`

	// summary is the console summary, kept for the JUnit file.
	summary string
}

// Planned is a run that is yet to be carried out.
func Planned(name, file string, repeat, of int) Run {
	return Run{Scenario: name, File: file, Repeat: repeat, Of: of, Outcome: NotRun, ExitCode: verdict.ExitUnknown}
}

// Finish completes a planned run with its results, its store folder and
// how long it took; res is nil and err says why when the run could not be
// carried out at all.
func (r Run) Finish(res *verdict.Results, dir string, started time.Time, took time.Duration, err error) Run {
	r.Started, r.Duration, r.Store = started.UTC(), int64(took), dir
	if res == nil {
		r.Outcome, r.ExitCode = verdict.Unknown, verdict.ExitUnknown
		if err != nil {
			r.Error = console.Printable(err.Error())
		}
		return r
	}
	v := res.Valid
	r.Valid, r.Outcome, r.ExitCode = &v, res.Outcome, res.ExitCode
	for _, n := range res.Notes {
		r.Notes = append(r.Notes, console.Printable(n))
	}
	r.Error = console.Printable(res.Error)
	if err != nil && r.Error == "" {
		r.Error = console.Printable(err.Error())
	}
	r.summary = res.Summary()
	return r
}

// Totals count a catalogue's runs by their exit code.
type Totals struct {
	// Runs is every planned run; the others add up to it.
	Runs          int `json:"runs"`
	AsExpected    int `json:"as_expected"`
	Unexpected    int `json:"unexpected"`
	Unknown       int `json:"unknown"`
	FailedToStart int `json:"failed_to_start"`
	NotRun        int `json:"not_run"`
}

// Summary is what summary.json holds.
type Summary struct {
	// Schema is SummarySchema.
	Schema int `json:"schema"`
	// Started is when the catalogue began, Duration how long it has run.
	Started  time.Time `json:"started"`
	Duration int64     `json:"duration_ns"`
	// Finished is false while the catalogue is still running (the file is
	// rewritten after every run) and true once it has stopped, whether it
	// ran to the end or was interrupted.
	Finished bool `json:"finished"`
	// Interrupted is true when a signal stopped the catalogue: the runs
	// it did not reach are "not run".
	Interrupted bool `json:"interrupted"`
	// ExitCode is the exit code of coup run: the most serious of the runs'
	// (2, then 1, then 3, then 0), and at least 3 when a run was not
	// carried out.
	ExitCode int    `json:"exit_code"`
	Totals   Totals `json:"totals"`
	Runs     []Run  `json:"runs"`
}

// Catalogue is a catalogue run in progress.
type Catalogue struct {
	Summary
}

// New starts a catalogue of the planned runs.
func New(started time.Time, plan []Run) *Catalogue {
	c := &Catalogue{Summary{Schema: SummarySchema, Started: started.UTC(), Runs: plan}}
	c.tally(started)
	return c
}

// Record sets the i-th run's result.
func (c *Catalogue) Record(i int, r Run, now time.Time) {
	c.Runs[i] = r
	c.tally(now)
}

// Stop marks the catalogue finished, interrupted or not.
func (c *Catalogue) Stop(interrupted bool, now time.Time) {
	c.Finished, c.Interrupted = true, interrupted
	c.tally(now)
}

// tally recounts the totals and the exit code.
func (c *Catalogue) tally(now time.Time) {
	c.Duration = int64(now.Sub(c.Started))
	t := Totals{Runs: len(c.Runs)}
	code := verdict.ExitOK
	for _, r := range c.Runs {
		switch {
		case r.Outcome == NotRun:
			t.NotRun++
		case r.ExitCode == verdict.ExitOK:
			t.AsExpected++
		case r.ExitCode == verdict.ExitUnexpected:
			t.Unexpected++
		case r.ExitCode == verdict.ExitInput:
			t.FailedToStart++
		default:
			t.Unknown++
		}
		code = Worst(code, r.ExitCode)
	}
	c.Totals, c.ExitCode = t, code
}

// Worst is the more serious of two exit codes: a node that failed to
// start (2) beats unexpected (1), which beats unknown (3), which beats as
// expected (0).
func Worst(a, b int) int {
	rank := map[int]int{verdict.ExitOK: 0, verdict.ExitUnknown: 1, verdict.ExitUnexpected: 2, verdict.ExitInput: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// classname is a run's JUnit class: the folder of its scenario file.
func (r *Run) classname() string {
	return filepath.ToSlash(filepath.Clean(filepath.Dir(r.File)))
}
