package nemesis

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
)

const ms = time.Millisecond

var five = []string{"n1", "n2", "n3", "n4", "n5"}

// newChecked builds a nemesis over five nodes, checking each fault first.
func newChecked(t *testing.T, seed int64, faults ...Fault) *Nemesis {
	t.Helper()
	for i := range faults {
		if err := faults[i].Check(five, time.Second); err != nil {
			t.Fatalf("faults[%d]: %v", i, err)
		}
	}
	return New(Config{Nodes: five, Faults: faults, Duration: time.Second, Seed: seed, Latency: ms, FIFO: true})
}

// step is one action as a test writes it.
type step struct {
	at    time.Duration
	what  string // "kind phase"
	nodes string // space-separated
}

func steps(as []Action) []step {
	var out []step
	for _, a := range as {
		if a.Skip != "" {
			out = append(out, step{a.At, string(a.Kind) + " skip", ""})
			continue
		}
		out = append(out, step{a.At, string(a.Kind) + " " + a.Phase, strings.Join(a.Nodes, " ")})
	}
	return out
}

// runPlan collects every planned action until the duration, then the heal.
func runPlan(n *Nemesis) []Action {
	var out []Action
	for {
		at, ok := n.Next()
		if !ok || at >= time.Second {
			break
		}
		out = append(out, n.Due(at)...)
	}
	return append(out, n.Heal(time.Second)...)
}

func TestSchedule(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
		want  []step
	}{
		{"crash stays down", Fault{Kind: Crash, Target: Target{Nodes: []string{"n2"}}, At: 100 * ms},
			[]step{{100 * ms, "crash start", "n2"}}},
		{"crash for a while is restarted", Fault{Kind: Crash, Target: Target{Nodes: []string{"n2"}}, At: 100 * ms, For: 50 * ms},
			[]step{{100 * ms, "crash start", "n2"}, {150 * ms, "crash end", "n2"}}},
		{"pause until the heal", Fault{Kind: Pause, Target: Target{Nodes: []string{"n3"}}, At: 200 * ms},
			[]step{{200 * ms, "pause start", "n3"}, {time.Second, "pause end", "n3"}}},
		{"every interval", Fault{Kind: Pause, Target: Target{Nodes: []string{"n1"}}, At: 100 * ms, For: 100 * ms, Every: 300 * ms},
			[]step{
				{100 * ms, "pause start", "n1"}, {200 * ms, "pause end", "n1"},
				{400 * ms, "pause start", "n1"}, {500 * ms, "pause end", "n1"},
				{700 * ms, "pause start", "n1"}, {800 * ms, "pause end", "n1"},
			}},
		{"an end past the duration is left to the heal", Fault{Kind: Loss, Target: Target{Pick: All}, At: 900 * ms, For: 500 * ms, Probability: 0.5},
			[]step{{900 * ms, "loss start", "n1 n2 n3 n4 n5"}, {time.Second, "loss end", "n1 n2 n3 n4 n5"}}},
		{"replace is instantaneous", Fault{Kind: Replace, Target: Target{Nodes: []string{"n5"}}, At: 10 * ms},
			[]step{{10 * ms, "replace start", "n5"}}},
		{"timely is never healed", Fault{Kind: Timely, At: 300 * ms, Delta: 5 * ms},
			[]step{{300 * ms, "timely start", "n1 n2 n3 n4 n5"}}},
		{"restart of a live node is skipped", Fault{Kind: Restart, Target: Target{Nodes: []string{"n2"}}, At: 10 * ms},
			[]step{{10 * ms, "restart skip", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := steps(runPlan(newChecked(t, 1, tt.fault)))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

// Two faults see each other's process actions at once: a restart right
// after a crash finds the node down.
func TestActionsSeeEachOther(t *testing.T) {
	n := newChecked(t, 1,
		Fault{Kind: Crash, Target: Target{Nodes: []string{"n2"}}, At: 100 * ms},
		Fault{Kind: Restart, Target: Target{Pick: All}, At: 100 * ms},
		Fault{Kind: Pause, Target: Target{Pick: All}, At: 100 * ms},
	)
	got := steps(n.Due(100 * ms))
	want := []step{{100 * ms, "crash start", "n2"}, {100 * ms, "restart start", "n2"}, {100 * ms, "pause start", "n1 n2 n3 n4 n5"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// Events of a replaced node's old process that the nemesis observes after
// the replace do not make the fresh process a leader, nor down.
func TestViewIgnoresTheOldProcess(t *testing.T) {
	n := newChecked(t, 1, Fault{Kind: Replace, Target: Target{Nodes: []string{"n5"}}, When: &Trigger{Report: "participant"}})
	batch := []history.Event{report(10*ms, "n1", "participant", "true"), lead("n5", "n5"), proc("n5", history.ProcCrash)}
	for _, e := range batch {
		n.Observe(e)
	}
	if l := n.view.leader(); l != "" {
		t.Errorf("leader %q after the replace, from the old process's report", l)
	}
	if s := n.view.state["n5"]; s != live {
		t.Errorf("n5 is %s after the old process's crash event", s)
	}
	n.Observe(proc("n5", history.ProcStart))
	n.Observe(lead("n5", "n5"))
	if l := n.view.leader(); l != "n5" {
		t.Errorf("leader %q, want the fresh n5 once it claims", l)
	}
}

// An end undoes only what is still so.
func TestEndLeavesAloneWhatChanged(t *testing.T) {
	n := newChecked(t, 1,
		Fault{Kind: Pause, Target: Target{Nodes: []string{"n1", "n2"}}, At: 100 * ms, For: 100 * ms},
		Fault{Kind: Resume, Target: Target{Nodes: []string{"n1"}}, At: 150 * ms},
	)
	got := steps(runPlan(n))
	want := []step{{100 * ms, "pause start", "n1 n2"}, {150 * ms, "resume start", "n1"}, {200 * ms, "pause end", "n2"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestRandomGaps(t *testing.T) {
	f := Fault{Kind: Pause, Target: Target{Pick: One}, At: 0, For: 10 * ms, Every: 50 * ms, Random: true}
	times := Occurrences(&f, 100*time.Second, seeded(1))
	if len(times) < 1800 || len(times) > 2200 {
		t.Errorf("%d occurrences in 100s with a mean period of 50ms, want about 2000", len(times))
	}
	gaps := map[time.Duration]bool{}
	for i := 1; i < len(times); i++ {
		gap := times[i] - times[i-1]
		if gap < f.For || gap >= f.For+2*(f.Every-f.For) {
			t.Fatalf("gap %s outside [for, for + 2(every−for))", gap)
		}
		gaps[gap] = true
	}
	if len(gaps) < 100 {
		t.Errorf("only %d distinct gaps: not random", len(gaps))
	}
}

// The same seed gives the same schedule and targets; another seed another.
func TestScheduleIsDeterministic(t *testing.T) {
	faults := func() []Fault {
		return []Fault{
			{Kind: Pause, Target: Target{Pick: Random}, At: 0, For: 20 * ms, Every: 60 * ms, Random: true},
			{Kind: Partition, Shape: Halves, At: 50 * ms, For: 100 * ms, Every: 200 * ms},
			{Kind: Loss, Target: Target{Pick: Minority}, At: 10 * ms, For: 30 * ms, Every: 90 * ms, Probability: 0.5},
		}
	}
	plan := func(seed int64) string {
		var b strings.Builder
		for _, a := range runPlan(newChecked(t, seed, faults()...)) {
			fmt.Fprintln(&b, a.At, a)
		}
		return b.String()
	}
	if a, b := plan(7), plan(7); a != b {
		t.Errorf("seed 7 twice:\n%s\n---\n%s", a, b)
	}
	if a, b := plan(7), plan(8); a == b {
		t.Errorf("seeds 7 and 8 gave the same plan:\n%s", a)
	}
}

func TestTargets(t *testing.T) {
	tests := []struct {
		name   string
		t      Target
		kind   Kind
		before []history.Event
		size   int      // nodes expected (-1: skip)
		want   []string // exact nodes, when fixed
	}{
		{"named", Target{Nodes: []string{"n2", "n4"}}, Crash, nil, 2, []string{"n2", "n4"}},
		{"named, one down", Target{Nodes: []string{"n2", "n4"}}, Crash, []history.Event{proc("n2", history.ProcCrash)}, 1, []string{"n4"}},
		{"all", Target{Pick: All}, Loss, nil, 5, five},
		{"all live", Target{Pick: All}, Crash, []history.Event{proc("n1", history.ProcExit)}, 4, []string{"n2", "n3", "n4", "n5"}},
		{"one", Target{Pick: One}, Crash, nil, 1, nil},
		{"minority", Target{Pick: Minority}, Crash, nil, 2, nil},
		{"majority", Target{Pick: Majority}, Crash, nil, 3, nil},
		{"majority of fewer candidates", Target{Pick: Majority}, Pause, []history.Event{proc("n1", history.ProcPause), proc("n2", history.ProcCrash), proc("n3", history.ProcCrash)}, 2, []string{"n4", "n5"}},
		{"restart picks the down", Target{Pick: All}, Restart, []history.Event{proc("n3", history.ProcCrash)}, 1, []string{"n3"}},
		{"resume picks the paused", Target{Pick: All}, Resume, []history.Event{proc("n3", history.ProcPause), proc("n4", history.ProcPause), proc("n4", history.ProcResume)}, 1, []string{"n3"}},
		{"nothing to restart", Target{Pick: One}, Restart, nil, -1, nil},
		{"no leader", Target{Pick: Leader}, Pause, nil, -1, nil},
		{"leader", Target{Pick: Leader}, Pause, []history.Event{lead("n2", "n2"), lead("n1", "n2")}, 1, []string{"n2"}},
		{"latest leader", Target{Pick: Leader}, Crash, []history.Event{lead("n2", "n2"), lead("n5", "n5")}, 1, []string{"n5"}},
		{"a crashed leader is no leader", Target{Pick: Leader}, Crash, []history.Event{lead("n2", "n2"), lead("n5", "n5"), proc("n5", history.ProcCrash)}, 1, []string{"n2"}},
		{"a restarted leader forgets", Target{Pick: Leader}, Crash, []history.Event{lead("n5", "n5"), proc("n5", history.ProcStart)}, -1, nil},
		{"a leader that changed its mind", Target{Pick: Leader}, Crash, []history.Event{lead("n5", "n5"), lead("n5", "n4")}, -1, nil},
		{"a paused leader is still the leader", Target{Pick: Leader}, Crash, []history.Event{lead("n5", "n5"), proc("n5", history.ProcPause)}, 1, []string{"n5"}},
		{"a paused leader cannot be paused again", Target{Pick: Leader}, Pause, []history.Event{lead("n5", "n5"), proc("n5", history.ProcPause)}, -1, nil},
	}
	for _, tt := range tests {
		for seed := uint64(0); seed < 20; seed++ {
			v := newView(five)
			for i := range tt.before {
				v.observe(&tt.before[i])
			}
			got, skip := v.resolve(tt.t, tt.kind, seeded(seed))
			if tt.size < 0 {
				if skip == "" {
					t.Errorf("%s: got %v, want a skip", tt.name, got)
				}
				break
			}
			if len(got) != tt.size || (tt.want != nil && !slices.Equal(got, tt.want)) {
				t.Errorf("%s (seed %d): got %v (%s), want %d nodes %v", tt.name, seed, got, skip, tt.size, tt.want)
				break
			}
			cands := v.candidates(tt.kind)
			for _, n := range got {
				if !slices.Contains(cands, n) {
					t.Errorf("%s: %s is not a candidate", tt.name, n)
				}
			}
		}
	}
	// A random target has every size from 1 to n, over seeds.
	sizes := map[int]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		got, _ := newView(five).resolve(Target{Pick: Random}, Loss, seeded(seed))
		sizes[len(got)] = true
	}
	if len(sizes) != 5 {
		t.Errorf("random targets had sizes %v, want 1 to 5", sizes)
	}
}

func proc(node, what string) history.Event {
	return history.Event{Kind: history.KindProcess, Node: node, What: what}
}

func lead(node, leader string) history.Event {
	return history.Event{Kind: history.KindReport, Node: node, What: history.ReportLeader, Value: leader}
}

func report(t time.Duration, node, what, value string) history.Event {
	return history.Event{Time: int64(t), Kind: history.KindReport, Node: node, What: what, Value: value}
}

func TestTriggers(t *testing.T) {
	participant := &Trigger{Report: "participant", Value: "true"}
	tests := []struct {
		name   string
		when   *Trigger
		at     time.Duration
		events []history.Event
		fires  int // index of the event that fires it, -1 for none
	}{
		{"first match", participant, 0, []history.Event{report(10*ms, "n1", "leader", "n1"), report(20*ms, "n2", "participant", "true"), report(30*ms, "n3", "participant", "true")}, 1},
		{"value must match", participant, 0, []history.Event{report(10*ms, "n2", "participant", "false")}, -1},
		{"armed at at", participant, 25 * ms, []history.Event{report(20*ms, "n2", "participant", "true"), report(30*ms, "n3", "participant", "true")}, 1},
		{"node must match", &Trigger{Report: "participant", Node: "n3"}, 0, []history.Event{report(20*ms, "n2", "participant", "true"), report(30*ms, "n3", "participant", "false")}, 1},
		{"process event", &Trigger{Process: "crash", Node: "n4"}, 0, []history.Event{report(5*ms, "n4", "crash", ""), {Time: int64(9 * ms), Kind: history.KindProcess, Node: "n4", What: "crash"}}, 1},
		{"a lock granted", &Trigger{Op: fAcquire}, 0, []history.Event{{Time: int64(5 * ms), Kind: history.KindOp, Process: "c1", F: fAcquire, Type: history.OpInvoke}, {Time: int64(6 * ms), Kind: history.KindOp, Process: "c2", F: fAcquire, Type: history.OpFail}, {Time: int64(8 * ms), Kind: history.KindOp, Process: "c1", F: fAcquire, Type: history.OpOK}}, 2},
	}
	for _, tt := range tests {
		n := newChecked(t, 1, Fault{Kind: Replace, Target: Target{Nodes: []string{"n5"}}, At: tt.at, When: tt.when})
		if _, ok := n.Next(); ok {
			t.Errorf("%s: a triggered fault is planned", tt.name)
		}
		fired := -1
		for i, e := range tt.events {
			e.Index = int64(i)
			acts := n.Observe(e)
			if len(acts) > 0 {
				if fired >= 0 {
					t.Errorf("%s: fired twice", tt.name)
				}
				fired = i
				if a := acts[0]; a.Kind != Replace || a.At != time.Duration(e.Time) || !slices.Equal(a.Nodes, []string{"n5"}) || !strings.Contains(a.Detail, "event") {
					t.Errorf("%s: action %v", tt.name, a)
				}
			}
		}
		if fired != tt.fires {
			t.Errorf("%s: fired on event %d, want %d", tt.name, fired, tt.fires)
		}
	}
	// A pause of the holder on its grant: the holder is the client just
	// granted.
	h := newChecked(t, 1, Fault{Kind: Pause, Target: Target{Pick: Holder}, For: 100 * ms, When: &Trigger{Op: fAcquire}})
	granted := history.Event{Time: int64(30 * ms), Kind: history.KindOp, Process: "c2", F: fAcquire, Type: history.OpOK}
	if !Relevant(&granted) {
		t.Fatal("a grant is not among the events the nemesis observes")
	}
	if got := steps(h.Observe(granted)); !reflect.DeepEqual(got, []step{{30 * ms, "pause start", "c2"}}) {
		t.Errorf("the holder paused on its grant: %v", got)
	}
	// A triggered pause with a duration is planned to end.
	n := newChecked(t, 1, Fault{Kind: Pause, Target: Target{Pick: Leader}, For: 100 * ms, When: &Trigger{Report: "leader"}})
	acts := n.Observe(report(40*ms, "n3", "leader", "n3"))
	if got := steps(acts); !reflect.DeepEqual(got, []step{{40 * ms, "pause start", "n3"}}) {
		t.Fatalf("triggered: %v", got)
	}
	if at, ok := n.Next(); !ok || at != 140*ms {
		t.Errorf("next at %v %v, want the end at 140ms", at, ok)
	}
	late := newChecked(t, 1, Fault{Kind: Pause, Target: Target{Pick: All}, When: &Trigger{Report: "leader"}})
	if len(late.Observe(report(time.Second, "n1", "leader", "n1"))) != 0 {
		t.Error("a trigger fired on an event at the duration")
	}
	if n.Heal(time.Second); len(n.Observe(report(500*ms, "n1", "leader", "n1"))) != 0 {
		t.Error("a trigger fired after the heal")
	}
}

// Apply drives the cluster and the net.
func TestApply(t *testing.T) {
	n := newChecked(t, 1,
		Fault{Kind: Replace, Target: Target{Nodes: []string{"n2"}}, At: 10 * ms},
		Fault{Kind: Clock, Target: Target{Nodes: []string{"n3"}}, At: 20 * ms, For: 10 * ms, Rate: 2},
		Fault{Kind: Partition, Shape: Isolate, Target: Target{Nodes: []string{"n1"}}, At: 40 * ms, For: 10 * ms},
	)
	c := &fakeCluster{}
	dropped := func() bool { return n.Decide(msg("n1", "n2"), 0).Drop }
	for _, a := range runPlan(n) {
		if err := n.Apply(a, c); err != nil {
			t.Fatal(err)
		}
		if a.Kind == Partition && dropped() != (a.Phase == history.PhaseStart) {
			t.Errorf("after %v, n1->n2 dropped = %v", a, dropped())
		}
	}
	want := []string{"crash n2", "restart n2", "clock n3 2", "clock n3 1"}
	if !slices.Equal(c.calls, want) {
		t.Errorf("cluster calls %v, want %v", c.calls, want)
	}
}

// A Clocker gets every clock action with its skew; an end gives the zero
// skew only to the nodes whose clocks are still that fault's.
func TestApplyClocker(t *testing.T) {
	n3 := Target{Nodes: []string{"n3"}}
	n := newChecked(t, 1,
		Fault{Kind: Clock, Target: n3, At: 10 * ms, For: 30 * ms, Offset: -time.Second, Clocks: Realtime},
		Fault{Kind: Clock, Target: n3, At: 20 * ms, For: 10 * ms, Rate: 1.5},
		Fault{Kind: Clock, Target: n3, At: 50 * ms, Rate: 0.5},
		Fault{Kind: Clock, Target: n3, At: 60 * ms, Reset: true},
	)
	c := &fakeClocker{}
	var skipped []string
	acts := runPlan(n)
	acts = append(acts, n.Heal(time.Second)...)
	for _, a := range acts {
		if a.Skip != "" {
			skipped = append(skipped, a.Name+" "+a.Phase)
			continue
		}
		if err := n.Apply(a, c); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"clock n3 -1s×0 realtime faults[0]#1", // the jump
		"clock n3 0s×1.5 both faults[1]#1",    // a rate replaces it
		"clock n3 0s×0  faults[1]#1",          // its end: clocks right
		"clock n3 0s×0.5 both faults[2]#1",
		"clock n3 0s×0  faults[3]#1", // the reset
	}
	if !slices.Equal(c.calls, want) {
		t.Errorf("clock calls\n%s\nwant\n%s", strings.Join(c.calls, "\n"), strings.Join(want, "\n"))
	}
	// faults[0]'s end finds n3's clocks taken by faults[1]; faults[2],
	// healed, finds them reset.
	if !slices.Equal(skipped, []string{"faults[0]#1 end", "faults[2]#1 end"}) {
		t.Errorf("skipped %v", skipped)
	}
}

type fakeClocker struct{ fakeCluster }

func (c *fakeClocker) Clock(n string, s Skew) error {
	c.calls = append(c.calls, fmt.Sprintf("clock %s %v×%g %s %s", n, s.Offset, s.Rate, s.Clocks, s.Fault))
	return nil
}

type fakeCluster struct{ calls []string }

func (c *fakeCluster) Crash(n string) error   { c.calls = append(c.calls, "crash "+n); return nil }
func (c *fakeCluster) Restart(n string) error { c.calls = append(c.calls, "restart "+n); return nil }
func (c *fakeCluster) Pause(n string) error   { c.calls = append(c.calls, "pause "+n); return nil }
func (c *fakeCluster) Resume(n string) error  { c.calls = append(c.calls, "resume "+n); return nil }
func (c *fakeCluster) ClockRate(n string, r float64) error {
	c.calls = append(c.calls, fmt.Sprintf("clock %s %g", n, r))
	return nil
}

var _ Cluster = (*fakeCluster)(nil)

func TestShapes(t *testing.T) {
	ring := []string{"n1", "n2", "n3", "n4", "n5"}
	tests := []struct {
		name   string
		f      Fault
		target []string
		// cut lists the cut links as "a>b"; nil means check count only.
		cut   []string
		count int
	}{
		{"isolate", Fault{Shape: Isolate}, []string{"n3"}, []string{"n1>n3", "n2>n3", "n3>n1", "n3>n2", "n3>n4", "n3>n5", "n4>n3", "n5>n3"}, 8},
		{"isolate one way out", Fault{Shape: Isolate, OneWay: true, Direction: Out}, []string{"n3"}, []string{"n3>n1", "n3>n2", "n3>n4", "n3>n5"}, 4},
		{"isolate one way in", Fault{Shape: Isolate, OneWay: true, Direction: In}, []string{"n3"}, []string{"n1>n3", "n2>n3", "n4>n3", "n5>n3"}, 4},
		{"ring cut", Fault{Shape: RingCut}, []string{"n5"}, []string{"n1>n5", "n5>n1"}, 2},
		{"ring cut one way", Fault{Shape: RingCut, OneWay: true, Direction: Out}, []string{"n2"}, []string{"n2>n3"}, 1},
		{"groups", Fault{Shape: Groups, Groups: [][]string{{"n1"}, {"n2", "n3"}}}, nil, nil, 2*(1*2+1*2) + 2*2*2},
		{"halves", Fault{Shape: Halves}, nil, nil, 2 * 2 * 3},
		{"bridge", Fault{Shape: Bridge}, []string{"n3"}, nil, 2 * 2 * 2},
		{"majorities ring", Fault{Shape: MajoritiesRing}, nil, []string{"n1>n3", "n1>n4", "n2>n4", "n2>n5", "n3>n5", "n3>n1", "n4>n1", "n4>n2", "n5>n2", "n5>n3"}, 10},
	}
	for _, tt := range tests {
		l := cuts(&tt.f, ring, tt.target, seeded(1))
		if len(l.cut) != tt.count {
			t.Errorf("%s: %d links cut, want %d (%s)", tt.name, len(l.cut), tt.count, l.describe)
		}
		for _, c := range tt.cut {
			a, b, _ := strings.Cut(c, ">")
			if !l.cut[Link{a, b}] {
				t.Errorf("%s: %s not cut", tt.name, c)
			}
		}
		if tt.f.Shape == Bridge {
			for _, n := range ring {
				if l.cut[Link{"n3", n}] || l.cut[Link{n, "n3"}] {
					t.Errorf("bridge: a link of the bridge n3 is cut")
				}
			}
		}
	}
	// In a majorities ring every node hears a majority, and no two the same.
	for _, n := range []int{3, 4, 5, 6, 7, 9} {
		var r []string
		for i := 1; i <= n; i++ {
			r = append(r, fmt.Sprintf("n%d", i))
		}
		l := majoritiesRing(r)
		seen := map[string]bool{}
		for _, to := range r {
			var hears []string
			for _, from := range r {
				if !l.cut[Link{from, to}] {
					hears = append(hears, from)
				}
			}
			if len(hears) <= n/2 {
				t.Errorf("n=%d: %s hears %v, not a majority", n, to, hears)
			}
			key := strings.Join(hears, ",")
			if seen[key] && n > 3 {
				t.Errorf("n=%d: two nodes hear the same majority %s", n, key)
			}
			seen[key] = true
		}
	}
}

func TestCheck(t *testing.T) {
	one := Target{Nodes: []string{"n1"}}
	tests := []struct {
		name  string
		f     Fault
		field string
		msg   string
	}{
		{"unknown kind", Fault{Kind: "explode", Target: one}, "kind", "unknown fault"},
		{"missing target", Fault{Kind: Crash}, "target", "missing"},
		{"target names no node", Fault{Kind: Crash, Target: Target{Nodes: []string{"n9"}}}, "target", "names no node"},
		{"after the run", Fault{Kind: Crash, Target: one, At: 2 * time.Second}, "at", "not within"},
		{"negative for", Fault{Kind: Pause, Target: one, For: -ms}, "for", "negative"},
		{"negative every", Fault{Kind: Pause, Target: one, Every: -ms}, "every", "negative"},
		{"repeated without for", Fault{Kind: Loss, Every: 50 * ms}, "for", "needs for"},
		{"every too short", Fault{Kind: Pause, Target: one, Every: time.Microsecond}, "every", "shorter than"},
		{"overlapping occurrences", Fault{Kind: Pause, Target: one, For: 100 * ms, Every: 100 * ms}, "for", "not shorter"},
		{"random without every", Fault{Kind: Pause, Target: one, Random: true}, "random", "every"},
		{"probability above 1", Fault{Kind: Loss, Probability: 1.5}, "probability", "between 0 and 1"},
		{"negative probability", Fault{Kind: Duplicate, Probability: -0.1}, "probability", "between 0 and 1"},
		{"one-way without direction", Fault{Kind: Partition, Shape: Isolate, Target: one, OneWay: true}, "direction", "needs a direction"},
		{"direction without one-way", Fault{Kind: Partition, Shape: Isolate, Target: one, Direction: Out}, "direction", "unless oneway"},
		{"one-way majorities ring", Fault{Kind: Partition, Shape: MajoritiesRing, OneWay: true, Direction: Out}, "oneway", "no first side"},
		{"unknown shape", Fault{Kind: Partition, Shape: "star"}, "shape", "unknown shape"},
		{"no shape", Fault{Kind: Partition}, "shape", "missing"},
		{"halves with a target", Fault{Kind: Partition, Shape: Halves, Target: one}, "target", "takes no target"},
		{"group names no node", Fault{Kind: Partition, Groups: [][]string{{"n1", "x"}}}, "groups", "names no node"},
		{"node in two groups", Fault{Kind: Partition, Groups: [][]string{{"n1"}, {"n1"}}}, "groups", "two groups"},
		{"bridge of two", Fault{Kind: Partition, Shape: Bridge, Target: Target{Nodes: []string{"n1", "n2"}}}, "target", "one node"},
		{"clock without rate", Fault{Kind: Clock, Target: one}, "rate", "needs a rate"},
		{"clock with a negative rate", Fault{Kind: Clock, Target: one, Rate: -1}, "rate", "more than zero"},
		{"reset with an offset", Fault{Kind: Clock, Target: one, Reset: true, Offset: ms}, "offset", "no offset"},
		{"reset for a while", Fault{Kind: Clock, Target: one, Reset: true, For: ms}, "for", "no duration"},
		{"unknown clocks", Fault{Kind: Clock, Target: one, Offset: ms, Clocks: "tai"}, "clocks", "unknown clocks"},
		{"delay of nothing", Fault{Kind: Delay}, "delay", "needs a delay"},
		{"unknown distribution", Fault{Kind: Delay, Delay: ms, Distribution: "pareto"}, "distribution", "unknown"},
		{"unknown mode", Fault{Kind: Corrupt, Probability: 1, Mode: "scramble"}, "mode", "unknown"},
		{"unknown direction", Fault{Kind: Loss, Probability: 1, Direction: "sideways"}, "direction", "unknown"},
		{"bandwidth without rate", Fault{Kind: Bandwidth}, "rate", "needs rate"},
		{"bandwidth too low", Fault{Kind: Bandwidth, Rate: 10}, "rate", "at least 100"},
		{"negative burst", Fault{Kind: Bandwidth, Rate: 1e6, Burst: -1}, "burst", "not negative"},
		{"timely without delta", Fault{Kind: Timely}, "delta", "needs delta"},
		{"timely repeated", Fault{Kind: Timely, Delta: ms, Every: 10 * ms}, "every", "once"},
		{"replace for a while", Fault{Kind: Replace, Target: one, For: ms}, "for", "takes no time"},
		{"restart the leader", Fault{Kind: Restart, Target: Target{Pick: Leader}}, "target", "leader"},
		{"empty trigger", Fault{Kind: Replace, Target: one, When: &Trigger{}}, "when", "what triggers"},
		{"trigger node", Fault{Kind: Replace, Target: one, When: &Trigger{Report: "leader", Node: "n7"}}, "when.node", "names no node"},
		{"trigger and every", Fault{Kind: Pause, Target: one, Every: 50 * ms, When: &Trigger{Report: "leader"}}, "when", "fires once"},
		{"trigger on a read", Fault{Kind: Pause, Target: one, When: &Trigger{Op: "read"}}, "when.op", "grants and releases"},
		{"trigger on an op and a process", Fault{Kind: Pause, Target: one, When: &Trigger{Op: fAcquire, Process: "crash"}}, "when.op", "not two"},
		{"trigger on an op value", Fault{Kind: Pause, Target: one, When: &Trigger{Op: fAcquire, Value: "x"}}, "when.value", "only a report"},
	}
	for _, tt := range tests {
		err := tt.f.Check(five, time.Second)
		fe, ok := err.(*FieldError)
		if !ok || fe.Field != tt.field || !strings.Contains(fe.Msg, tt.msg) {
			t.Errorf("%s: got %v, want field %q with %q", tt.name, err, tt.field, tt.msg)
		}
	}
	if _, err := CheckSet([]Fault{{Kind: Timely}, {Kind: Crash}, {Kind: Timely}}); err == nil {
		t.Error("two timely faults accepted")
	}
	good := []Fault{
		{Kind: Partition, Groups: [][]string{{"n1"}}},
		{Kind: Loss, Probability: 0.3},
		{Kind: Timely, Delta: ms},
		{Kind: Bandwidth, Rate: 1e5, Burst: 1500},
		{Kind: Pause, Target: Target{Pick: Leader}, At: 10 * ms, For: 50 * ms},
	}
	for _, f := range good {
		if err := f.Check(five, time.Second); err != nil {
			t.Errorf("%+v: %v", f, err)
		}
	}
	if _, err := ParseTarget([]string{"n1", "leader"}); err == nil {
		t.Error("a pick inside a list was accepted")
	}
}

func lockOp(process, f, typ string) history.Event {
	return history.Event{Kind: history.KindOp, Process: process, F: f, Type: typ}
}

func TestHolderPick(t *testing.T) {
	acquired := func(p string) []history.Event {
		return []history.Event{lockOp(p, fAcquire, history.OpInvoke), lockOp(p, fAcquire, history.OpOK)}
	}
	tests := []struct {
		name   string
		events []history.Event
		want   string // "" for a skip
	}{
		{"nobody asked", nil, ""},
		{"asked, not granted", []history.Event{lockOp("c1", fAcquire, history.OpInvoke)}, ""},
		{"a failed acquire holds nothing", []history.Event{lockOp("c1", fAcquire, history.OpInvoke), lockOp("c1", fAcquire, history.OpFail)}, ""},
		{"granted", acquired("c2"), "c2"},
		{"released", append(acquired("c2"), lockOp("c2", fRelease, history.OpInvoke), lockOp("c2", fRelease, history.OpOK)), ""},
		{"still holds while its release is under way", append(acquired("c2"), lockOp("c2", fRelease, history.OpInvoke)), "c2"},
		{"a timed-out release ends the belief", append(acquired("c2"), lockOp("c2", fRelease, history.OpInvoke), lockOp("c2", fRelease, history.OpInfo)), ""},
		{"the latest of two grants", append(acquired("c1"), acquired("c3")...), "c3"},
		{"the earlier, once the latest released", append(append(acquired("c1"), acquired("c3")...), lockOp("c3", fRelease, history.OpOK)), "c1"},
	}
	for _, tt := range tests {
		v := newView(five)
		for i := range tt.events {
			v.observe(&tt.events[i])
		}
		got, skip := v.resolve(Target{Pick: Holder}, Pause, seeded(1))
		switch {
		case tt.want == "" && skip == "":
			t.Errorf("%s: got %v, want a skip", tt.name, got)
		case tt.want != "" && !slices.Equal(got, []string{tt.want}):
			t.Errorf("%s: got %v (%s), want %s", tt.name, got, skip, tt.want)
		}
	}
	// A paused holder is not paused again, and the pause's end resumes it.
	v := newView(five)
	for _, e := range acquired("c1") {
		v.observe(&e)
	}
	v.act(&Action{Kind: Pause, Phase: history.PhaseStart, Nodes: []string{"c1"}})
	if got, skip := v.resolve(Target{Pick: Holder}, Pause, seeded(1)); skip == "" {
		t.Errorf("a paused holder: got %v, want a skip", got)
	}
	if v.state["c1"] != paused {
		t.Errorf("c1 is %s after its pause, want paused", v.state["c1"])
	}
}

func TestHolderTargetsOnlyPause(t *testing.T) {
	for _, k := range []Kind{Crash, Partition, Loss} {
		f := Fault{Kind: k, Target: Target{Pick: Holder}}
		if err := f.checkTarget(five); err == nil || !strings.Contains(err.Error(), "only a pause") {
			t.Errorf("%s of the holder: %v, want refused", k, err)
		}
	}
	f := Fault{Kind: Pause, Target: Target{Pick: Holder}}
	if err := f.checkTarget(five); err != nil {
		t.Errorf("pause of the holder: %v", err)
	}
}

// A fault due before the driver first asked what was due (real servers
// not yet ready) lasts its whole length from then; one due later keeps
// its planned end, however late it is carried out, so that a slow
// machine does not reorder a seed's schedule.
func TestLateStartKeepsItsLength(t *testing.T) {
	n := newChecked(t, 1, Fault{Kind: Pause, Target: Target{Nodes: []string{"n2"}}, At: 100 * ms, For: 200 * ms})
	if got := steps(n.Due(250 * ms)); !reflect.DeepEqual(got, []step{{100 * ms, "pause start", "n2"}}) {
		t.Fatalf("late start: %v", got)
	}
	if at, ok := n.Next(); !ok || at != 450*ms {
		t.Errorf("the pause ends at %v (planned %v), want 450ms: 200ms from its start at 250ms", at, ok)
	}
	later := newChecked(t, 1, Fault{Kind: Pause, Target: Target{Nodes: []string{"n2"}}, At: 100 * ms, For: 200 * ms})
	later.Due(0)
	later.Due(120 * ms)
	if at, ok := later.Next(); !ok || at != 300*ms {
		t.Errorf("a pause due after the first ask, carried out 20ms late, ends at %v (planned %v), want its planned 300ms", at, ok)
	}
}
