package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/bully"
	"github.com/coupharness/coup/nodes/changroberts"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Every scenario of the catalogue that runs a built-in algorithm gives its
// expected verdict in the simulator, with its own seed, as it does with
// real processes.
func TestCatalogueAsExpected(t *testing.T) {
	for _, sc := range catalogue(t) {
		t.Run(sc.Name, func(t *testing.T) {
			out, err := Simulate(sc, sc.Seed, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if out.Results.Outcome != verdict.AsExpected {
				t.Errorf("outcome %s, want as expected:\n%s", out.Results.Outcome, out.Results.Summary())
			}
		})
	}
}

// A seed gives the same history every time (the hash covers every field of
// every event), and passing messages as values gives the same history as
// passing them through the codec, as real nodes do.
func TestDeterminism(t *testing.T) {
	for _, sc := range catalogue(t) {
		t.Run(sc.Name, func(t *testing.T) {
			for _, seed := range []int64{sc.Seed, sc.Seed + 1} {
				out, err := Twice(sc, seed, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if out.Hash != out.Rehash {
					t.Errorf("seed %d: history %s, then %s", seed, out.Hash, out.Rehash)
				}
				coded, err := Simulate(sc, seed, Options{Hash: true, RoundTrip: true})
				if err != nil {
					t.Fatal(err)
				}
				if coded.Hash != out.Hash {
					t.Errorf("seed %d: history %s with messages as values, %s through the codec", seed, out.Hash, coded.Hash)
				}
			}
		})
	}
}

// Seeds differ: a sweep's histories are not all the same.
func TestSeedsDiffer(t *testing.T) {
	sc, err := scenario.Load("../scenarios/bully-crash-coordinator.toml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for seed := int64(1); seed <= 5; seed++ {
		out, err := Simulate(sc, seed, Options{Hash: true})
		if err != nil {
			t.Fatal(err)
		}
		seen[out.Hash] = true
	}
	if len(seen) != 5 {
		t.Errorf("5 seeds gave %d distinct histories", len(seen))
	}
}

// The bully replacement race is found by a sweep of at most 1000 seeds,
// with no trigger, and replaying the seed it names gives the same history.
func TestBullyReplaceRaceFound(t *testing.T) {
	sc, err := scenario.Load("../scenarios/sim/bully-replace-race.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range sc.NemesisFaults() {
		if f.When != nil {
			t.Fatal("the race scenario has a trigger")
		}
	}
	found, hash := int64(0), ""
	Seeds(1, 1000, 2, func(seed int64) (*Outcome, error) {
		return Simulate(sc, seed, Options{})
	}, func(seed int64, out *Outcome, err error) bool {
		if err != nil {
			t.Fatal(err)
		}
		if out.Results.Checks["two-leaders"].Valid.String() == "false" {
			found, hash = seed, Hash(out.History.Events)
			return false
		}
		return true
	})
	if found == 0 {
		t.Fatal("no seed of 1..1000 shows two leaders")
	}
	store := t.TempDir()
	replay, err := Simulate(sc, found, Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if replay.Hash != hash || replay.Results.Outcome != verdict.Unexpected {
		t.Errorf("seed %d: the sweep saw history %s, the replay %s (%s)", found, hash, replay.Hash, replay.Results.Outcome)
	}
	b, err := os.ReadFile(filepath.Join(replay.Dir, lifecycle.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hash {
		t.Errorf("sha256 of history.jsonl %x, want the history hash %s", sum, hash)
	}
	t.Logf("the race happens at seed %d", found)
}

// The race is the replacement's doing: without it, no seed shows a
// violation.
func TestBullyRaceNeedsTheReplace(t *testing.T) {
	sc, err := scenario.Load("../scenarios/sim/bully-replace-race.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.NemesisFaults()) == 0 {
		t.Fatal("the race scenario has no fault")
	}
	for seed := int64(1); seed <= 200; seed++ {
		cfg, err := FromScenario(sc, seed)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Faults = nil
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.Run()
		if err != nil {
			t.Fatal(err)
		}
		res, err := verdict.Evaluate(h)
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid.String() != "true" {
			t.Fatalf("seed %d without the replace: valid=%s\n%s", seed, res.Valid, res.Summary())
		}
	}
}

// A stored simulated run has the layout of a real one, and its history
// file reads back as the events the simulator recorded, its hash being the
// file's sha256sum.
func TestStore(t *testing.T) {
	sc, err := scenario.Load("../scenarios/chang-roberts.toml")
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	out, err := Simulate(sc, sc.Seed, Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{lifecycle.HistoryFile, lifecycle.ResultsFile, lifecycle.ReportFile, lifecycle.HarnessLog} {
		if _, err := os.Stat(filepath.Join(out.Dir, f)); err != nil {
			t.Error(err)
		}
	}
	if l, err := os.Readlink(filepath.Join(store, sc.Name, "latest")); err != nil || l != filepath.Base(out.Dir) {
		t.Errorf("latest points at %q (%v), want %s", l, err, filepath.Base(out.Dir))
	}
	h, err := history.ReadFile(filepath.Join(out.Dir, lifecycle.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h.Expanded().Events, out.History.Events) || !h.Ended || h.Meta.Seed != sc.Seed {
		t.Error("the history file does not read back as the recorded events")
	}
	b, _ := os.ReadFile(filepath.Join(out.Dir, lifecycle.HistoryFile))
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != out.Hash {
		t.Errorf("file sha256 %x, hash %s", sum, out.Hash)
	}
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != out.Results.Outcome || res.Valid != out.Results.Valid {
		t.Errorf("re-checked %s/%s, simulated %s/%s", res.Valid, res.Outcome, out.Results.Valid, out.Results.Outcome)
	}
}

// A clock jump is made to real processes: the simulator refuses it, and
// runs a clock rate.
func TestClockJumpRejected(t *testing.T) {
	sc, err := scenario.Parse("jump.toml", "algorithm = \"bully\"\nnodes = 3\n[[faults]]\nkind = \"clock\"\ntarget = \"n1\"\noffset = \"-5s\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Simulate(sc, 1, Options{}); !errors.Is(err, ErrClockJump) || !strings.Contains(err.Error(), "faults[0].offset") {
		t.Errorf("got %v, want ErrClockJump at faults[0].offset", err)
	}
	sc, err = scenario.Parse("rate.toml", "algorithm = \"bully\"\nnodes = 3\nduration = \"200ms\"\n[[faults]]\nkind = \"clock\"\ntarget = \"n1\"\nrate = 2\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Simulate(sc, 1, Options{}); err != nil {
		t.Errorf("a clock rate: %v", err)
	}
}

// A scenario whose nodes are a foreign program cannot be simulated, nor
// can a built-in algorithm that is not a state machine.
func TestForeignRejected(t *testing.T) {
	sc, err := scenario.Parse("foreign.toml", "algorithm = \"mine\"\nelects = \"max\"\ncommand = [\"./mynode\"]\nnodes = 3\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Simulate(sc, 1, Options{}); !errors.Is(err, ErrForeign) {
		t.Errorf("got %v, want ErrForeign", err)
	}
	sc, err = scenario.Parse("gossip.toml", "algorithm = \"memberlist\"\nnodes = 3\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Simulate(sc, 1, Options{}); !errors.Is(err, ErrRealOnly) || !errors.Is(err, ErrNotSimulable) {
		t.Errorf("got %v, want ErrRealOnly", err)
	}
}

// The queue runs items in time order, ties in push order.
func TestQueueOrder(t *testing.T) {
	var q queue
	ats := []time.Duration{5, 1, 3, 3, 0, 9, 3, 1}
	for i, at := range ats {
		q.push(item{at: at, seq: uint64(i), id: int64(i)})
	}
	var got []int64
	for q.len() > 0 {
		got = append(got, q.pop().id)
	}
	want := []int64{4, 1, 7, 2, 3, 6, 0, 5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("popped %v, want %v", got, want)
	}
}

// A strategy's priorities order items of the same time, lower first; push
// order breaks what they leave tied.
func TestQueuePriorities(t *testing.T) {
	var q queue
	items := []struct {
		at   time.Duration
		prio int32
	}{{3, 2}, {3, 1}, {1, 9}, {3, 2}, {3, 0}, {4, 0}}
	for i, it := range items {
		q.push(item{at: it.at, prio: it.prio, seq: uint64(i), id: int64(i)})
	}
	var got []int64
	for q.len() > 0 {
		got = append(got, q.pop().id)
	}
	if want := []int64{2, 4, 1, 0, 3, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("popped %v, want %v", got, want)
	}
}

// An algorithm's tests may use the simulator as their network: here the
// bully's highest id wins, then its crash makes the next highest take
// over, and a node's panic is an exit, not a crash of the test.
func TestAsANetwork(t *testing.T) {
	s, err := New(Config{Spec: bully.Spec, Nodes: []string{"n1", "n2", "n3", "n4"}, Seed: 3, Latency: time.Millisecond, Jitter: time.Millisecond, FIFO: true})
	if err != nil {
		t.Fatal(err)
	}
	s.RunFor(200 * time.Millisecond)
	for n, l := range s.Leaders() {
		if l != "n4" {
			t.Errorf("%s believes in %q, want n4", n, l)
		}
	}
	if err := s.Crash("n4"); err != nil {
		t.Fatal(err)
	}
	s.RunFor(time.Second)
	want := map[string]string{"n1": "n3", "n2": "n3", "n3": "n3"}
	if got := s.Leaders(); !reflect.DeepEqual(got, want) {
		t.Errorf("after n4's crash: %v, want %v", got, want)
	}

	p, err := New(Config{Spec: nodes.Spec{Name: "panics", Codec: changroberts.Spec.Codec, New: func(*nodes.Params) (nodes.Machine, error) { return panicky{}, nil }}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := p.Run()
	if err != nil {
		t.Fatal(err)
	}
	exits := 0
	for _, e := range h.Events {
		if e.Kind == history.KindProcess && e.What == history.ProcExit {
			exits++
		}
	}
	if exits != 3 {
		t.Errorf("%d exits, want one per node", exits)
	}
}

type panicky struct{}

func (panicky) Start(nodes.Env)           { panic("broken") }
func (panicky) Receive(string, nodes.Msg) {}
func (panicky) Timeout(string)            {}
func (panicky) Request(nodes.Request)     {}
