package explore

import (
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// The search room depends on no driver.
func TestNoDriverDependency(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/coupharness/coup/scenario") {
		t.Fatalf("go list -deps gave no scenario package: %v", deps)
	}
	for _, d := range deps {
		for _, driver := range []string{"harness", "servers", "sim", "lifecycle"} {
			if d == "github.com/coupharness/coup/"+driver || strings.HasPrefix(d, "github.com/coupharness/coup/"+driver+"/") {
				t.Errorf("explore depends on %s", d)
			}
		}
	}
}

// Every schedule drawn, mutated or spliced from a catalogue scenario's
// vocabulary is a scenario that loads: the drawer makes only faults the
// scenario accepts.
func TestSchedulesAreValid(t *testing.T) {
	files, _ := filepath.Glob("../scenarios/*.toml")
	sims, _ := filepath.Glob("../scenarios/sim/*.toml")
	explored, _ := filepath.Glob("../scenarios/explore/*.toml")
	zoo, _ := filepath.Glob("../scenarios/zoo/*.toml")
	found, _ := filepath.Glob("../scenarios/zoo/found/*.toml")
	files = append(append(append(append(files, sims...), explored...), zoo...), found...)
	if len(files) < 10 {
		t.Fatalf("%d scenarios", len(files))
	}
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		st, err := newStrategy(Guided, sc, 1, 0, 8)
		if err != nil {
			t.Fatal(err)
		}
		g := st.(*guided)
		for i := range 60 {
			s := g.next(i, i)
			if _, err := s.Scenario(sc); err != nil {
				t.Fatalf("%s, run %d: %v", f, i, err)
			}
			// Every run shows something new, with moments of every kind,
			// so that every mutation and every aim is tried.
			g.observe(i, &observation{run: i, sched: s, features: Features{"f" + itoa(i)}, moments: someMoments(sc)})
		}
	}
}

// someMoments are moments of every kind within a scenario's run.
func someMoments(sc *scenario.Scenario) []Moment {
	var out []Moment
	for i, tr := range scenario.Triggers {
		at := sc.Duration.D * time.Duration(i+1) / time.Duration(len(scenario.Triggers)+1)
		out = append(out, Moment{At: at, What: tr, Node: "n1", Value: "n1"}, Moment{At: at + 1, What: tr, Node: "c1", Value: "read"})
	}
	return out
}

// Drawn schedules stay within the vocabulary.
func TestDrawWithinVocabulary(t *testing.T) {
	sc := loadFake(t)
	d := newDrawer(sc)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		faults := d.schedule(rng)
		if len(faults) < 1 || len(faults) > 2 {
			t.Fatalf("%d faults, want 1 or 2", len(faults))
		}
		for _, f := range faults {
			if !slices.Contains([]string{"pause", "crash", "partition"}, f.Kind) {
				t.Errorf("kind %s", f.Kind)
			}
			if f.Target.Set && !slices.Contains([]string{"leader", "n1"}, f.Target.Names[0]) {
				t.Errorf("target %v", f.Target.Names)
			}
			if f.When != nil && f.When.Report != "leader" {
				t.Errorf("trigger %+v", f.When)
			}
			if f.At.D < 0 || f.At.D >= time.Second || f.For.D < 20*time.Millisecond || f.For.D > 500*time.Millisecond {
				t.Errorf("at %s for %s", f.At.D, f.For.D)
			}
		}
	}
}

// Hand-made histories: the first run of a lane enters its corpus, a run
// that shows only what was seen does not, and one that shows one thing
// more does; its parent is credited.
func TestCorpusGrowsOnlyOnNewFeatures(t *testing.T) {
	sc := loadFake(t)
	st, _ := newStrategy(Guided, sc, 1, 0, 8)
	g := st.(*guided)
	quiet := hist(t, "n3 leads", nil)
	crash := hist(t, "n3 leads, is crashed, n2 leads", func(b *histBuilder) {
		b.nemesis(300, "crash", "n3").proc(300, "crash", "n3").leader(305, "n1", "n2").leader(305, "n2", "n2")
	})
	steps := []struct {
		h      *history.History
		fresh  bool
		corpus int
	}{
		{quiet, true, 1},
		{quiet, false, 1},
		{quiet, false, 1},
		{crash, true, 2},
		{crash, false, 2},
	}
	for i, s := range steps {
		sched := g.next(i, i)
		fs, ms := Abstract(s.h, nil)
		n := g.observe(i, &observation{run: i, sched: sched, features: fs, moments: ms})
		if (n > 0) != s.fresh || g.corpus.len() != s.corpus {
			t.Errorf("step %d: %d new features, corpus of %d; want new %v, corpus of %d", i, n, g.corpus.len(), s.fresh, s.corpus)
		}
	}
	if g.corpus.entries[1].run != 3 || len(g.corpus.entries[1].moments) == 0 {
		t.Errorf("the second entry: run %d, moments %v", g.corpus.entries[1].run, g.corpus.entries[1].moments)
	}
}

// The corpus keeps at most its bound, evicting what paid least, never
// the entry just added.
func TestCorpusBound(t *testing.T) {
	c := &corpus{max: 3}
	var evicted []int
	c.watch = func(_, e *entry) {
		if e != nil {
			evicted = append(evicted, e.id)
		}
	}
	for i, fresh := range []int{5, 1, 4, 2, 9, 0} {
		c.add(&entry{run: i, fresh: fresh})
	}
	if c.len() != 3 || !slices.Equal(evicted, []int{2, 4, 3}) {
		t.Errorf("corpus of %d, evicted %v", c.len(), evicted)
	}
}

// histBuilder makes hand-made histories of three nodes; times in
// milliseconds.
type histBuilder struct{ events []history.Event }

func (b *histBuilder) add(e history.Event) *histBuilder {
	e.Index = int64(len(b.events))
	b.events = append(b.events, e)
	return b
}
func (b *histBuilder) leader(ms int64, node, value string) *histBuilder {
	return b.add(history.Event{Time: ms * 1e6, Kind: history.KindReport, What: history.ReportLeader, Node: node, Value: value})
}
func (b *histBuilder) proc(ms int64, what, node string) *histBuilder {
	return b.add(history.Event{Time: ms * 1e6, Kind: history.KindProcess, What: what, Node: node, Incarnation: 1})
}
func (b *histBuilder) nemesis(ms int64, kind string, nodes ...string) *histBuilder {
	return b.add(history.Event{Time: ms * 1e6, Kind: history.KindNemesis, What: kind, Phase: history.PhaseStart, Name: "faults[0]#1", Nodes: nodes})
}
func (b *histBuilder) op(ms int64, process, typ, f string) *histBuilder {
	return b.add(history.Event{Time: ms * 1e6, Kind: history.KindOp, Process: process, Type: typ, F: f})
}

func hist(t *testing.T, what string, more func(b *histBuilder)) *history.History {
	t.Helper()
	b := &histBuilder{}
	b.add(history.Event{Kind: history.KindMeta, Meta: &history.Meta{Scenario: what, Algorithm: "bully", Nodes: []string{"n1", "n2", "n3"}, IDs: []int{1, 2, 3}}})
	for _, n := range []string{"n1", "n2", "n3"} {
		b.proc(0, history.ProcStart, n)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		b.leader(10, n, "n3")
	}
	if more != nil {
		more(b)
	}
	b.add(history.Event{Time: 1e9, Kind: history.KindEnd})
	h, err := history.FromEvents(b.events)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The abstraction of a hand-made history: roles, succession, faults ×
// observed state, operation outcome classes, and moments to aim at.
func TestAbstract(t *testing.T) {
	h := hist(t, "a lock's holder paused", func(b *histBuilder) {
		b.op(100, "c1", history.OpInvoke, "acquire").op(102, "c1", history.OpOK, "acquire")
		b.op(150, "c2", history.OpInvoke, "acquire")
		b.nemesis(200, "pause", "n3").proc(200, history.ProcPause, "n3")
		b.leader(240, "n2", "n2").leader(241, "n1", "n2")
		b.op(260, "c2", history.OpInfo, "acquire")
	})
	fs, moments := Abstract(h, nil)
	for _, want := range []string{
		"role n3 none>leader", "role n1 none>follower", "role n2 follower>leader",
		"succession ->n3", "succession n3>n2", "leaders-at-once 2",
		"fault pause hits leader", "fault pause while lock-held,ops-in-flight",
		"op acquire ok", "op acquire info", "op acquire info during pause", "op info 1",
		"leaders 2", "leaderless ~8ms",
	} {
		if !slices.Contains(fs, want) {
			t.Errorf("no feature %q in %q", want, fs)
		}
	}
	if !slices.IsSorted(fs) {
		t.Error("features not sorted")
	}
	kinds := map[scenario.Trigger]int{}
	for _, m := range moments {
		kinds[m.What]++
	}
	if kinds[scenario.TriggerLeader] != 5 || kinds[scenario.TriggerAcquire] != 1 || kinds[scenario.TriggerInFlight] != 2 {
		t.Errorf("moments %v", moments)
	}
	for _, m := range moments {
		if m.What == scenario.TriggerInFlight && m.Value == "acquire" && m.At == 205*time.Millisecond {
			return
		}
	}
	t.Errorf("no in-flight moment half-way through c2's acquire (205ms): %v", moments)
}

// A vocabulary of real processes draws clock jumps, ahead and back,
// within its bounds, besides rates; a built-in one draws rates alone.
func TestDrawClockJumps(t *testing.T) {
	src := "nodes = 3\nduration = \"10s\"\n[server]\npreset = \"etcd\"\n[explore]\nkinds = [\"clock\"]\noffset = [\"1s\", \"5s\"]\n"
	sc, err := scenario.Parse("clock.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	d := newDrawer(sc)
	rng := rand.New(rand.NewPCG(1, 2))
	ahead, back, rates := 0, 0, 0
	for range 300 {
		for _, f := range d.schedule(rng) {
			switch o := f.Offset.D; {
			case f.Rate != nil && f.Offset.Set:
				t.Fatalf("a rate and a jump in one drawn fault: %+v", f)
			case f.Rate != nil:
				rates++
			case o >= time.Second && o <= 5*time.Second:
				ahead++
			case o <= -time.Second && o >= -5*time.Second:
				back++
			default:
				t.Fatalf("offset %v out of [1s, 5s] either way", o)
			}
		}
	}
	if ahead == 0 || back == 0 || rates == 0 {
		t.Errorf("%d jumps ahead, %d back, %d rates: want some of each", ahead, back, rates)
	}
	if _, err := scenario.Parse("builtin.toml", "algorithm = \"bully\"\nnodes = 3\n[explore]\nkinds = [\"clock\"]\noffset = [\"1s\", \"5s\"]\n"); err == nil || !strings.Contains(err.Error(), "explore.offset") {
		t.Errorf("a jump explored on built-in nodes: got %v, want it refused at explore.offset", err)
	}
}

// A drawn bandwidth fault has a rate within the vocabulary's bounds (and
// no burst), and its schedule is a valid scenario; its weakening doubles
// the rate.
func TestDrawBandwidth(t *testing.T) {
	src := "nodes = 3\nalgorithm = \"bully\"\n[explore]\nkinds = [\"bandwidth\"]\nbandwidth = [1000, 100000]\n"
	sc, err := scenario.Parse("bw.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	d := newDrawer(sc)
	rng := rand.New(rand.NewPCG(1, 2))
	low, high := 0, 0
	for range 200 {
		faults := d.schedule(rng)
		for _, f := range faults {
			if f.Kind != "bandwidth" || f.Rate == nil || *f.Rate < 1000 || *f.Rate > 100000 || f.Burst != nil {
				t.Fatalf("drawn %+v, want a bandwidth fault of 1000 to 100000 bytes/s", f)
			}
			if *f.Rate < 10000 {
				low++
			} else {
				high++
			}
		}
		if _, err := (&Schedule{Faults: faults}).Scenario(sc); err != nil {
			t.Fatal(err)
		}
	}
	if low == 0 || high == 0 {
		t.Errorf("%d rates below 10 kB/s, %d above: a log scale draws both", low, high)
	}
	r := 5000.0
	sc.Faults = []scenario.Fault{{Kind: "bandwidth", Rate: &r}}
	if w := weakenings(sc, 0, time.Millisecond); len(w) == 0 || !strings.Contains(w[len(w)-1].what, "5000 → 10000") {
		t.Errorf("weakenings %+v, want the rate doubled", w)
	}
}
