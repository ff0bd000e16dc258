package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// fakeScenario is explored by fakeRunner.
const fakeScenario = `name = "fake"
algorithm = "bully"
nodes = 3
duration = "1s"
recovery = "200ms"

[explore]
kinds = ["pause", "crash", "partition"]
targets = ["leader", "n1"]
triggers = ["time", "leader"]
max_faults = 2
`

func loadFake(t *testing.T) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("fake.toml", fakeScenario)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// fakeRunner is an exact runner of hand-made histories: three nodes, n3
// leading from 1ms, and each fault of the scenario a nemesis event at its
// time (a triggered one 1ms after it is armed):
//
//   - a pause of the leader that begins from 200ms to 260ms makes n2
//     claim leadership 10ms later, while n3, paused, still believes it
//     leads: two leaders;
//   - a crash of the leader makes n2 lead 5ms later;
//   - a partition makes n1 believe in no leader for a millisecond.
//
// The history depends on the faults alone, so the same scenario always
// gives the same run.
type fakeRunner struct {
	// store, when set, is where each run is written as a driver writes
	// it: store/fake/run-N/history.jsonl, and latest naming it.
	store  string
	runs   atomic.Int64
	active atomic.Int64
	// blockAbove, when set, makes the runs of a seed above it block until
	// the context ends.
	blockAbove int64
}

func (r *fakeRunner) Exact() bool  { return true }
func (r *fakeRunner) Name() string { return "fake" }

func (r *fakeRunner) Run(ctx context.Context, sc *scenario.Scenario) (*Run, error) {
	r.active.Add(1)
	defer r.active.Add(-1)
	n := r.runs.Add(1)
	if r.blockAbove > 0 && sc.Seed > r.blockAbove {
		<-ctx.Done()
		h := fakeHistory(sc, false)
		res, err := verdict.Evaluate(h)
		return &Run{Results: res, History: h}, err
	}
	h := fakeHistory(sc, true)
	res, err := verdict.Evaluate(h)
	if err != nil {
		return nil, err
	}
	run := &Run{Results: res, History: h, Wall: time.Millisecond}
	if r.store != "" {
		run.Dir = filepath.Join(r.store, "fake", fmt.Sprintf("run-%d", n))
		if err := os.MkdirAll(run.Dir, 0o755); err != nil {
			return nil, err
		}
		var b bytes.Buffer
		for e := range h.All() {
			j, _ := json.Marshal(e)
			b.Write(append(j, '\n'))
		}
		if err := os.WriteFile(filepath.Join(run.Dir, "history.jsonl"), b.Bytes(), 0o644); err != nil {
			return nil, err
		}
		latest := filepath.Join(r.store, "fake", "latest")
		os.Remove(latest)
		os.Symlink(filepath.Base(run.Dir), latest)
	}
	return run, nil
}

func fakeHistory(sc *scenario.Scenario, ended bool) *history.History {
	ms := func(x float64) int64 { return int64(x * 1e6) }
	meta := &history.Meta{Scenario: sc.Name, Algorithm: "bully", Nodes: sc.NodeNames(), IDs: sc.IDs, Seed: sc.Seed,
		Checks: []string{"two-leaders"}, Expect: &history.Expect{Valid: sc.Expect.ExpectValid()}}
	events := []history.Event{{Kind: history.KindMeta, Meta: meta}}
	add := func(e history.Event) { events = append(events, e) }
	for _, n := range sc.NodeNames() {
		add(history.Event{Kind: history.KindProcess, What: history.ProcStart, Node: n, Incarnation: 1})
	}
	leader := "n3"
	for _, n := range sc.NodeNames() {
		add(history.Event{Time: ms(1), Kind: history.KindReport, What: history.ReportLeader, Node: n, Value: leader})
	}
	faults := slices.Clone(sc.NemesisFaults())
	slices.SortStableFunc(faults, func(a, b nemesis.Fault) int { return int(a.At - b.At) })
	for i, f := range faults {
		at := f.At
		if f.When != nil {
			at += time.Millisecond
		}
		t := int64(at)
		hit := "n1"
		if f.Target.Pick == nemesis.Leader {
			hit = leader
		}
		name := "faults[" + string(rune('0'+i)) + "]#1"
		add(history.Event{Time: t, Kind: history.KindNemesis, What: string(f.Kind), Phase: history.PhaseStart, Name: name, Nodes: []string{hit}})
		switch {
		case f.Kind == nemesis.Pause && hit == leader && at >= 200*time.Millisecond && at < 260*time.Millisecond:
			add(history.Event{Time: t + ms(10), Kind: history.KindReport, What: history.ReportLeader, Node: "n2", Value: "n2"})
			add(history.Event{Time: t + ms(11), Kind: history.KindReport, What: history.ReportLeader, Node: "n1", Value: "n2"})
		case f.Kind == nemesis.Crash && hit == leader:
			add(history.Event{Time: t, Kind: history.KindProcess, What: history.ProcCrash, Node: hit})
			next := "n2"
			if hit == "n2" {
				next = "n1"
			}
			for _, n := range sc.NodeNames() {
				if n != hit {
					add(history.Event{Time: t + ms(5), Kind: history.KindReport, What: history.ReportLeader, Node: n, Value: next})
				}
			}
			leader = next
		case f.Kind == nemesis.Partition:
			add(history.Event{Time: t + ms(1), Kind: history.KindReport, What: history.ReportLeader, Node: "n1", Value: ""})
			add(history.Event{Time: t + ms(2), Kind: history.KindReport, What: history.ReportLeader, Node: "n1", Value: leader})
		}
	}
	slices.SortStableFunc(events, func(a, b history.Event) int { return int(a.Time - b.Time) })
	if ended {
		events = append(events, history.Event{Time: int64(sc.Duration.D + sc.Recovery.D), Kind: history.KindEnd})
	}
	for i := range events {
		events[i].Index = int64(i)
	}
	h, err := history.FromEvents(events)
	if err != nil {
		panic(err) // the meta event is first
	}
	return h
}
