package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
)

// startDriver is a driver whose Start does what start says: it records
// into the run's history file, and reads it back as the real drivers do.
type startDriver struct {
	f     *Files
	rec   *history.Recorder
	start func(ctx context.Context, zero func(time.Duration)) error
	logs  []string
}

var _ Driver = (*startDriver)(nil)

func (d *startDriver) Crash(string) error                                   { return nil }
func (d *startDriver) Restart(string) error                                 { return nil }
func (d *startDriver) Pause(string) error                                   { return nil }
func (d *startDriver) Resume(string) error                                  { return nil }
func (d *startDriver) ClockRate(string, float64) error                      { return nil }
func (d *startDriver) Lock()                                                {}
func (d *startDriver) Unlock()                                              {}
func (d *startDriver) Begin()                                               {}
func (d *startDriver) Now() time.Duration                                   { return 0 }
func (d *startDriver) Wait(context.Context, time.Duration) bool             { return true }
func (d *startDriver) Stop() map[string]int64                               { return nil }
func (d *startDriver) Record(e history.Event) history.Event                 { d.rec.Record(e); return e }
func (d *startDriver) Progress(_ time.Duration, format string, args ...any) { d.Logf(format, args...) }
func (d *startDriver) Logf(format string, args ...any) {
	d.logs = append(d.logs, fmt.Sprintf(format, args...))
}
func (d *startDriver) Start(ctx context.Context, zero func(time.Duration)) error {
	return d.start(ctx, zero)
}
func (d *startDriver) Close() (*history.History, error) {
	if err := d.rec.Close(); err != nil {
		return nil, err
	}
	return history.ReadFile(d.f.History.Name())
}

// A start that fails, before its zero or after it, or that is
// interrupted, leaves a history that begins with its meta event and then
// says how the start ended and why; it is not judged, and its results
// say the same.
func TestUnstartedRunIsRecorded(t *testing.T) {
	cause := errors.New("n2: listen tcp: too many open files")
	tests := []struct {
		name       string
		start      func(ctx context.Context, zero func(time.Duration)) error
		what, why  string
		exit       int
		interrupts bool
	}{
		{"fails before its zero", func(context.Context, func(time.Duration)) error {
			return fmt.Errorf("%w: %w", ErrNodeStart, cause)
		}, history.UnstartedFailed, cause.Error(), 2, false},
		{"fails at its zero", func(_ context.Context, zero func(time.Duration)) error {
			zero(0)
			return fmt.Errorf("%w: %w", ErrNodeStart, cause)
		}, history.UnstartedFailed, cause.Error(), 2, false},
		{"fails its own way", func(context.Context, func(time.Duration)) error {
			return cause
		}, history.UnstartedFailed, cause.Error(), 2, false},
		{"interrupted", func(ctx context.Context, zero func(time.Duration)) error {
			<-ctx.Done()
			zero(0)
			return ErrInterrupted
		}, history.UnstartedInterrupted, "interrupted before every node was up", 3, true},
		{"interrupted in a step", func(ctx context.Context, zero func(time.Duration)) error {
			<-ctx.Done()
			return fmt.Errorf("%w while starting 2 client processes", ErrInterrupted)
		}, history.UnstartedInterrupted, "interrupted while starting 2 client processes", 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.interrupts {
				cancel()
			}
			var d *startDriver
			out, err := Execute(ctx, t.TempDir(), &scenario.Scenario{Name: "s"}, func(f *Files, _ *Parts) (*Run, error) {
				d = &startDriver{f: f, start: tt.start}
				d.rec = history.NewRecorder(f.History, func() int64 { return 0 }, false)
				nem := nemesis.New(nemesis.Config{Nodes: []string{"n1", "n2"}, Duration: time.Second})
				return New(d, Config{Nemesis: nem, Meta: &history.Meta{Scenario: "s", Algorithm: "x", Nodes: []string{"n1", "n2"}, IDs: []int{1, 2}}, Duration: time.Second}), nil
			})
			if err != nil {
				t.Fatalf("a run that did not start is its results, not an error: %v", err)
			}
			h := out.History
			if h.Meta.Scenario != "s" || h.Unstarted == nil || h.Unstarted.What != tt.what || h.Unstarted.Detail != tt.why || h.Ended {
				t.Errorf("history: meta %+v, unstarted %+v, ended %v", h.Meta, h.Unstarted, h.Ended)
			}
			if h.Len() != 2 || h.Events[0].Kind != history.KindMeta {
				t.Errorf("history of %d events, the first %q: want the meta event, then the unstarted one", h.Len(), h.Events[0].Kind)
			}
			r := out.Results
			if !r.NotStarted() || r.Error != tt.why || r.ExitCode != tt.exit || r.Unstarted != tt.what {
				t.Errorf("results: not started %v, error %q, exit %d, unstarted %q", r.NotStarted(), r.Error, r.ExitCode, r.Unstarted)
			}
			if _, err := os.Stat(filepath.Join(out.Dir, ResultsFile)); err != nil {
				t.Errorf("no results.json: %v", err)
			}
			if len(d.logs) == 0 || d.logs[len(d.logs)-1] != fmt.Sprintf("the run did not start (%s): %s", tt.what, tt.why) {
				t.Errorf("the log does not say why: %q", d.logs)
			}
		})
	}
}

// A run that cannot be set up at all is an error, and its folder's log
// says why its history is empty.
func TestUnbuiltRunSaysWhy(t *testing.T) {
	out, err := Execute(context.Background(), t.TempDir(), &scenario.Scenario{Name: "s"}, func(*Files, *Parts) (*Run, error) {
		return nil, errors.New("no such algorithm here")
	})
	if err == nil || out == nil || out.Dir == "" {
		t.Fatalf("outcome %+v, error %v: want the error and the folder", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(out.Dir, HarnessLog)); !strings.Contains(string(b), "could not be set up: no such algorithm here") {
		t.Errorf("harness.log: %q", b)
	}
}
