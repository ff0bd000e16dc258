package explore

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// aimScenario starts faults between 300ms and 900ms, at a time only, on
// any one node.
const aimScenario = `name = "aims"
algorithm = "bully"
nodes = 3
duration = "1s"
recovery = "200ms"

[explore]
kinds = ["pause", "partition"]
targets = ["one"]
shapes = ["isolate", "halves"]
triggers = ["time"]
max_faults = 2
at = ["300ms", "900ms"]
for = ["10ms", "640ms"]
`

// A guided lane's first run is random's first: it pays no run for a
// baseline without faults.
func TestGuidedFirstRunIsRandoms(t *testing.T) {
	sc := loadFake(t)
	for seed := int64(1); seed <= 5; seed++ {
		r, _ := newStrategy(Random, sc, seed, 0, 8)
		g, _ := newStrategy(Guided, sc, seed, 0, 8)
		got, want := g.next(0, 0), r.next(0, 0)
		if !sameSchedule(got, want) || len(got.Faults) == 0 {
			t.Errorf("seed %d: guided's first run %q, random's %q", seed, got, want)
		}
	}
}

// A new entry's plan takes each kind of moment in turn, and only moments
// a fault may start at: none before the vocabulary's first start nor
// after its last. Each planned child adds a fault that starts just before
// its moment, hits its node (at a leader change, the leader believed in;
// a partition isolates it) and lasts in the upper half of the
// vocabulary's durations.
func TestPlannedAims(t *testing.T) {
	sc, err := scenario.Parse("aims.toml", aimScenario)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := newStrategy(Guided, sc, 1, 0, 8)
	g := st.(*guided)
	first := g.next(0, 0)
	moments := []Moment{
		{At: 100 * time.Millisecond, What: scenario.TriggerLeader, Node: "n1", Value: "n3"}, // before 300ms
		{At: 400 * time.Millisecond, What: scenario.TriggerLeader, Node: "n1", Value: "n3"},
		{At: 410 * time.Millisecond, What: scenario.TriggerLeader, Node: "n2", Value: "n3"},
		{At: 500 * time.Millisecond, What: scenario.TriggerInFlight, Node: "n2", Value: "write"},
		{At: 600 * time.Millisecond, What: scenario.TriggerInFlight, Node: "n2", Value: "read"},
		{At: 950 * time.Millisecond, What: scenario.TriggerAcquire, Node: "c1"}, // after 900ms
	}
	g.observe(0, &observation{run: 0, sched: first, features: Features{"a"}, moments: moments})
	if len(g.aims) != aimsPerEntry {
		t.Fatalf("%d aims planned, want %d: %+v", len(g.aims), aimsPerEntry, g.aims)
	}
	kinds := map[scenario.Trigger]int{}
	for i, p := range g.aims {
		kinds[p.moment.What]++
		if p.moment.At < 300*time.Millisecond || p.moment.At > 900*time.Millisecond {
			t.Errorf("aim %d at %s, outside the vocabulary's starts", i, p.moment.At)
		}
		if i < 2 && (i == 0) != (p.moment.What == scenario.TriggerLeader) {
			t.Errorf("aim %d at a %s moment: want a leader change, then an operation under way", i, p.moment.What)
		}
	}
	if kinds[scenario.TriggerLeader] != 2 || kinds[scenario.TriggerInFlight] != 2 {
		t.Fatalf("aims by kind %v, want 2 leader changes and 2 operations under way", kinds)
	}
	mid := time.Duration(math.Sqrt(float64(10*time.Millisecond) * float64(640*time.Millisecond)))
	for i := range aimsPerEntry {
		p := g.aims[0]
		child := g.next(1+2*i, 1+2*i) // planned children come every other run at most
		for len(g.aims) > 0 && g.aims[0] == p {
			child = g.next(2+2*i, 2+2*i)
		}
		var aimed *scenario.Fault
		for j := range child.Faults {
			f := &child.Faults[j]
			if f.At.D <= p.moment.At && f.At.D >= p.moment.At-time.Millisecond && f.When == nil {
				aimed = f
			}
		}
		if aimed == nil {
			t.Fatalf("aim at %s %s: no fault starts just before it in %q", p.moment.What, p.moment.At, child)
		}
		want := p.moment.Node
		if p.moment.What == scenario.TriggerLeader {
			want = p.moment.Value
		}
		if !aimed.Target.Set || aimed.Target.Names[0] != want {
			t.Errorf("aim at %s %s hits %v, want %s", p.moment.What, p.moment.At, aimed.Target.Names, want)
		}
		if aimed.Kind == "partition" && aimed.Shape != "isolate" {
			t.Errorf("aim at %s %s: partition shape %q, want isolate", p.moment.What, p.moment.At, aimed.Shape)
		}
		if aimed.For.D < mid || aimed.For.D > 640*time.Millisecond {
			t.Errorf("aim at %s %s lasts %s, want %s to 640ms", p.moment.What, p.moment.At, aimed.For.D, mid)
		}
	}
}

// The moments of operations under way span the run, not only its first
// operations, and stay bounded; each names the leader of its time.
func TestInFlightMomentsSpanTheRun(t *testing.T) {
	h := hist(t, "many operations", func(b *histBuilder) {
		for i := int64(0); i < 900; i++ {
			b.op(50+i, "c1", history.OpInvoke, "read").op(50+i, "c1", history.OpOK, "read")
		}
	})
	_, moments := Abstract(h, nil)
	var at []time.Duration
	for _, m := range moments {
		if m.What == scenario.TriggerInFlight {
			at = append(at, m.At)
			if m.Node != "n3" {
				t.Errorf("moment at %s names %s, want the leader n3", m.At, m.Node)
			}
		}
	}
	if len(at) == 0 || len(at) > maxMoments {
		t.Fatalf("%d moments of operations under way, want 1 to %d", len(at), maxMoments)
	}
	if first, last := at[0], at[len(at)-1]; first > 60*time.Millisecond || last < 600*time.Millisecond {
		t.Errorf("moments from %s to %s: want them to span 50ms to 950ms", first, last)
	}
}

// A plan aims first at the kinds of moment the scenario's checks are
// about (an operation under way for a store's checks, a grant for a
// lock's), whichever kind its run showed first; the first two aims of a
// run drawn afresh run at once, each alone after its moment (the parent's
// faults armed after it dropped) and as long as the vocabulary lets it;
// a grant is aimed at twice, hitting the holder and then the leader of
// the time. Aims made from an aim's run wait their turn.
func TestAimsAtTheChecksMomentsFirst(t *testing.T) {
	for _, tt := range []struct {
		checks string
		want   []scenario.Trigger // the kinds of the first aims, in order
		nodes  []string           // the node each hits ("" none named)
	}{
		{`["kv-linearizable"]`, []scenario.Trigger{scenario.TriggerInFlight, scenario.TriggerLeader}, []string{"n2", "n3"}},
		{`["mutex-linearizable"]`, []scenario.Trigger{scenario.TriggerAcquire, scenario.TriggerAcquire}, []string{"n1", "n3"}},
		{`["two-leaders"]`, []scenario.Trigger{scenario.TriggerLeader}, []string{"n3"}}, // then the others, in turn
	} {
		sc, err := scenario.Parse("aims.toml", aimScenario+"\n[checks]\nrun = "+tt.checks+"\n")
		if err != nil {
			t.Fatal(err)
		}
		st, _ := newStrategy(Guided, sc, 1, 0, 8)
		g := st.(*guided)
		first := g.next(0, 0)
		first.Faults = append(first.Faults[:0], scenario.Fault{Kind: "pause", At: dur(800 * time.Millisecond), For: dur(50 * time.Millisecond),
			Target: scenario.Target{Names: []string{"one"}, Set: true}})
		moments := []Moment{
			{At: 400 * time.Millisecond, What: scenario.TriggerLeader, Node: "n1", Value: "n3"},
			{At: 500 * time.Millisecond, What: scenario.TriggerInFlight, Node: "n2", Value: "write"},
			{At: 600 * time.Millisecond, What: scenario.TriggerAcquire, Node: "n1", Value: "n3"},
		}
		g.observe(0, &observation{run: 0, sched: first, features: Features{"a"}, moments: moments})
		for i, want := range tt.want {
			if len(g.aims) == 0 {
				t.Fatalf("%s: %d aims, want at least %d", tt.checks, i, len(tt.want))
			}
			p := g.aims[0]
			if p.moment.What != want {
				t.Errorf("%s: aim %d at a %s moment, want %s", tt.checks, i, p.moment.What, want)
			}
			if !p.now {
				t.Errorf("%s: aim %d waits its turn; it should run at once", tt.checks, i)
			}
			child := g.next(1+i, 1+i)
			if len(g.aims) > 0 && g.aims[0] == p {
				t.Fatalf("%s: run %d is not the aim", tt.checks, 1+i)
			}
			if len(child.Faults) != 1 {
				t.Fatalf("%s: aim %d: %q, want the aimed fault alone (the parent's at 800ms dropped)", tt.checks, i, child)
			}
			f := child.Faults[0]
			// just before its moment, in force as it happens; at a grant,
			// just after it, while the lock is held
			lo, hi, when := p.moment.At-time.Millisecond, p.moment.At, "before"
			if want == scenario.TriggerAcquire {
				lo, hi, when = p.moment.At, p.moment.At+time.Millisecond, "after"
			}
			if f.At.D > hi || f.At.D < lo || f.For.D != 640*time.Millisecond {
				t.Errorf("%s: aim %d at %s: %q, want a start just %s it lasting 640ms", tt.checks, i, p.moment.At, child, when)
			}
			if got := f.Target.Names[0]; got != tt.nodes[i] {
				t.Errorf("%s: aim %d hits %s, want %s", tt.checks, i, got, tt.nodes[i])
			}
		}
		if len(g.aims) > 0 && g.aims[0].now {
			t.Errorf("%s: aim %+v runs at once: only the first two at the checks' kinds should", tt.checks, g.aims[0])
		}
		// an aim's run that shows something new plans aims that wait
		before := len(g.aims)
		g.observe(1, &observation{run: 1, sched: first, features: Features{"b"}, moments: moments})
		for _, p := range g.aims[before:] {
			if p.now {
				t.Errorf("%s: an aim's entry planned an aim to run at once: %+v", tt.checks, p)
			}
		}
	}
}

// A grant's moment says how many acquires other clients invoked while the
// lock was held, and the node its client sits on; a plan aims first at
// the grants others asked during (a coordinator that forgets such a
// grant gives the lock again), and a fault that cannot hit a client's
// process hits its host.
func TestGrantsOthersAskedDuringFirst(t *testing.T) {
	h := hist(t, "grants", func(b *histBuilder) {
		acquire := func(ms int64, process, node string, typ string) {
			b.add(history.Event{Time: ms * 1e6, Kind: history.KindOp, Process: process, Node: node, Type: typ, F: "acquire"})
		}
		release := func(ms int64, process, node string) {
			b.add(history.Event{Time: ms * 1e6, Kind: history.KindOp, Process: process, Node: node, Type: history.OpInvoke, F: "release"})
			b.add(history.Event{Time: ms * 1e6, Kind: history.KindOp, Process: process, Node: node, Type: history.OpOK, F: "release"})
		}
		// c1's grant: nobody asks while it holds
		acquire(300, "c1", "n1", history.OpInvoke)
		acquire(301, "c1", "n1", history.OpOK)
		release(350, "c1", "n1")
		// c2's grant: c1 and c3 ask while c2 holds
		acquire(400, "c2", "n2", history.OpInvoke)
		acquire(401, "c2", "n2", history.OpOK)
		acquire(420, "c1", "n1", history.OpInvoke)
		acquire(430, "c3", "n1", history.OpInvoke)
		release(450, "c2", "n2")
		acquire(452, "c1", "n1", history.OpOK)
		release(500, "c1", "n1")
	})
	_, moments := Abstract(h, nil)
	asked := map[time.Duration]int{}
	for _, m := range moments {
		if m.What == scenario.TriggerAcquire {
			asked[m.At] = m.Asked
			if want := map[string]string{"c1": "n1", "c2": "n2"}[m.Node]; m.Host != want {
				t.Errorf("grant to %s at %s: host %q, want %q", m.Node, m.At, m.Host, want)
			}
		}
	}
	want := map[time.Duration]int{301 * time.Millisecond: 0, 401 * time.Millisecond: 2, 452 * time.Millisecond: 0}
	if !maps.Equal(asked, want) {
		t.Fatalf("grants' asks %v, want %v", asked, want)
	}

	sc, err := scenario.Parse("aims.toml", aimScenario+"\n[checks]\nrun = [\"mutex-linearizable\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(1); seed <= 20; seed++ {
		st, _ := newStrategy(Guided, sc, seed, 0, 8)
		g := st.(*guided)
		first := g.next(0, 0)
		g.observe(0, &observation{run: 0, sched: first, features: Features{"a"}, moments: moments})
		if len(g.aims) == 0 || g.aims[0].moment.What != scenario.TriggerAcquire || g.aims[0].moment.At != 401*time.Millisecond {
			t.Fatalf("seed %d: first aim %+v, want the grant at 401ms", seed, g.aims)
		}
		child := g.next(1, 1)
		f := child.Faults[len(child.Faults)-1]
		if !f.Target.Set || f.Target.Names[0] != "n2" { // the vocabulary has no holder pick
			t.Errorf("seed %d: a %s aimed at c2's grant hits %v, want its host n2", seed, f.Kind, f.Target.Names)
		}
	}
}

// On a driver that does not replay its runs, an aim at a moment whose
// trigger the vocabulary has is that trigger, armed a little before the
// moment: the child's leader change does not come at the parent's time.
// On the simulator, which replays the parent up to the aim, it is a time.
func TestRealAimsAreEventTriggers(t *testing.T) {
	src := strings.Replace(aimScenario, `triggers = ["time"]`, `triggers = ["time", "leader"]`, 1)
	sc, err := scenario.Parse("aims.toml", src+"\n[checks]\nrun = [\"two-leaders\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	change := Moment{At: 600 * time.Millisecond, What: scenario.TriggerLeader, Node: "n1", Value: "n3"}
	for _, real := range []bool{false, true} {
		st, _ := newStrategy(Guided, sc, 1, 0, 8)
		g := st.(*guided)
		g.real = real
		first := g.next(0, 0)
		g.observe(0, &observation{run: 0, sched: first, features: Features{"a"}, moments: []Moment{change}})
		child := g.next(1, 1)
		f := child.Faults[len(child.Faults)-1]
		switch {
		case real && (f.When == nil || f.When.Report != "leader" || f.At.D != change.At-realArm):
			t.Errorf("real: the aim %q, want it armed at %s on a leader change", child, change.At-realArm)
		case !real && (f.When != nil || f.At.D > change.At || f.At.D < change.At-time.Millisecond):
			t.Errorf("replayed: the aim %q, want a time just before %s", child, change.At)
		}
	}
}

// On a driver that does not replay its runs, an aim at a moment whose
// node led then (an operation under way while a node led, a leader
// change) hits whoever leads when the fault starts: the child's run may
// elect another node. On the simulator it hits the node by name.
func TestRealAimsHitWhoeverLeads(t *testing.T) {
	src := strings.Replace(aimScenario, `targets = ["one"]`, `targets = ["leader", "one"]`, 1)
	sc, err := scenario.Parse("aims.toml", src+"\n[checks]\nrun = [\"two-leaders\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	moments := map[string]Moment{
		"in-flight": {At: 500 * time.Millisecond, What: scenario.TriggerInFlight, Node: "n2", Value: "read", Leads: true},
		"leader":    {At: 600 * time.Millisecond, What: scenario.TriggerLeader, Node: "n1", Value: "n3"},
		"follower":  {At: 500 * time.Millisecond, What: scenario.TriggerInFlight, Node: "n2", Value: "read"},
	}
	for name, mo := range moments {
		for _, real := range []bool{false, true} {
			for seed := int64(1); seed <= 8; seed++ {
				st, _ := newStrategy(Guided, sc, seed, 0, 8)
				g := st.(*guided)
				g.real = real
				var child Schedule
				f := g.aimAtMoment(&child, mo, true, "", false)
				want := mo.Node
				switch {
				case real && mo.Leads || real && mo.What == scenario.TriggerLeader:
					want = "leader"
				case mo.What == scenario.TriggerLeader:
					want = mo.Value
				}
				if f.Kind == "partition" && f.Shape != "isolate" {
					continue // a partition into halves takes no target
				}
				if !f.Target.Set || f.Target.Names[0] != want {
					t.Errorf("%s, real %v, seed %d: the aim %q hits %v, want %s", name, real, seed, child, f.Target.Names, want)
				}
			}
		}
	}
}

// An entry's two aims run at once are two kinds of fault (for a store's
// checks, about a leader cut off, both partitions), and the second
// stands alone: the parent's faults in force at its moment are dropped,
// while the first keeps them (they may have brought the moment about).
func TestNowAimsTakeKindsInTurn(t *testing.T) {
	inForce := scenario.Fault{Kind: "pause", At: dur(400 * time.Millisecond), For: dur(300 * time.Millisecond),
		Target: scenario.Target{Names: []string{"n1"}, Set: true}}
	ended := scenario.Fault{Kind: "pause", At: dur(310 * time.Millisecond), For: dur(50 * time.Millisecond),
		Target: scenario.Target{Names: []string{"n3"}, Set: true}}
	for _, c := range []struct {
		check    string
		what     scenario.Trigger
		triggers string
		store    bool
	}{
		{"kv-linearizable", scenario.TriggerInFlight, `["time"]`, true},
		{"two-leaders", scenario.TriggerLeader, `["time", "leader"]`, false},
	} {
		src := strings.Replace(aimScenario, `triggers = ["time"]`, "triggers = "+c.triggers, 1)
		sc, err := scenario.Parse("aims.toml", src+"\n[checks]\nrun = [\""+c.check+"\"]\n")
		if err != nil {
			t.Fatal(err)
		}
		moments := []Moment{
			{At: 500 * time.Millisecond, What: c.what, Node: "n2", Value: "n2"},
			{At: 520 * time.Millisecond, What: c.what, Node: "n3", Value: "n3"},
		}
		for seed := int64(1); seed <= 8; seed++ {
			st, _ := newStrategy(Guided, sc, seed, 0, 8)
			g := st.(*guided)
			first := Schedule{Seed: seed, Faults: []scenario.Fault{ended, inForce}}
			g.observe(0, &observation{run: 0, sched: first, features: Features{"a"}, moments: moments})
			if len(g.aims) < 2 || !g.aims[0].now || !g.aims[1].now {
				t.Fatalf("%s, seed %d: aims %+v, want two run at once", c.check, seed, g.aims)
			}
			a, b := g.next(1, 1), g.next(2, 2)
			if len(a.Faults) != 2 || len(b.Faults) != 2 { // max_faults is 2
				t.Fatalf("%s, seed %d: children %q and %q", c.check, seed, a, b)
			}
			// the aim is the fault at its moment; the other is the parent's
			aimed := func(s Schedule) (aim, kept scenario.Fault) {
				for _, f := range s.Faults {
					if f.At.D >= 490*time.Millisecond {
						aim = f
					} else {
						kept = f
					}
				}
				return aim, kept
			}
			fa, ka := aimed(a)
			fb, kb := aimed(b)
			switch {
			case c.store && (fa.Kind != "partition" || fb.Kind != "partition"):
				t.Errorf("%s, seed %d: aims %q and %q, want two partitions", c.check, seed, a, b)
			case !c.store && (fa.Kind == "" || fb.Kind == "" || fa.Kind == fb.Kind):
				t.Errorf("%s, seed %d: aims %q and %q, want one of each kind", c.check, seed, a, b)
			}
			if !sameFault(ka, ended) && !sameFault(ka, inForce) {
				t.Errorf("%s, seed %d: the first aim %q kept none of the parent's faults", c.check, seed, a)
			}
			if !sameFault(kb, ended) {
				t.Errorf("%s, seed %d: the second aim %q, want the fault that ended before its moment kept and the one in force dropped", c.check, seed, b)
			}
		}
	}
}

func sameFault(a, b scenario.Fault) bool {
	return a.Kind == b.Kind && a.At == b.At && a.For == b.For && slices.Equal(a.Target.Names, b.Target.Names)
}

// A guided lane whose runs stop showing anything new draws afresh more
// and more often: the fake's failure, a pause of the leader begun from
// 200ms to 260ms, which no moment of a run explains, is found in every
// campaign of 400 runs, as random finds it.
func TestGuidedDrawsAfreshWhenDry(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		_, res := campaignFile(t, Campaign{Strategy: Guided, Seed: seed, Runs: 400})
		if len(res.Tally.Groups()) == 0 {
			t.Errorf("seed %d: the fake's failure not found in 400 runs", seed)
		}
	}
	if dryShare(0) != 0 || dryShare(drySpell/2) <= 0 || dryShare(drySpell) != dryShare(10*drySpell) {
		t.Errorf("dry shares %v %v %v", dryShare(0), dryShare(drySpell/2), dryShare(drySpell))
	}
}

// When the checks judge acknowledged writes and the vocabulary has disk
// faults, an entry's two aims run at once are power failures (a crash
// whose disk loses what was not synced) at the operation under way:
// the first of every host where the vocabulary lets a crash hit all,
// the second of the moment's node (the leader, on a real driver); else
// both of the moment's node. Without disk faults they are partitions.
func TestStoresAimPowerFailuresWithDiskFaults(t *testing.T) {
	for _, c := range []struct {
		kinds, targets string
		want           [2]string // the aims' kind, power failure and target
	}{
		{`["crash", "disk", "partition"]`, `["one", "all"]`, [2]string{"crash lose-unsynced all", "crash lose-unsynced n2"}},
		{`["crash", "disk"]`, `["one"]`, [2]string{"crash lose-unsynced n2", "crash lose-unsynced n2"}},
		{`["crash", "partition"]`, `["one", "all"]`, [2]string{"partition  n2", "partition  n2"}},
	} {
		sc, err := scenario.Parse("power.toml", `nodes = 3
duration = "10s"

[server]
preset = "etcd"

[workload]
kind = "set"

[explore]
kinds = `+c.kinds+`
targets = `+c.targets+`
shapes = ["isolate"]
triggers = ["time"]
at = ["300ms", "900ms"]

[checks]
run = ["lost-writes"]
`)
		if err != nil {
			t.Fatal(err)
		}
		for seed := int64(1); seed <= 8; seed++ {
			st, _ := newStrategy(Guided, sc, seed, 0, 8)
			g := st.(*guided)
			first := g.next(0, 0)
			g.observe(0, &observation{run: 0, sched: first, features: Features{"a"}, moments: []Moment{
				{At: 500 * time.Millisecond, What: scenario.TriggerInFlight, Node: "n2", Value: "add"},
				{At: 520 * time.Millisecond, What: scenario.TriggerInFlight, Node: "n2", Value: "add"},
			}})
			for i, want := range c.want {
				child := g.next(i+1, i+1)
				f := child.Faults[len(child.Faults)-1]
				got := fmt.Sprintf("%s %s %s", f.Kind, f.Disk, strings.Join(f.Target.Names, ","))
				if got != want {
					t.Errorf("kinds %s, targets %s, seed %d: aim %d is %q (%s), want %q", c.kinds, c.targets, seed, i+1, got, child, want)
				}
			}
		}
	}
}

// For an election's checks, a run drawn afresh whose leader stood
// through the vocabulary's starts (its one claim came before them) has
// no leader change to aim at: its first aim is at that leader from the
// first start, lasting the longest the vocabulary allows. A run with a
// change to aim at aims at the change.
func TestAimsAtTheLeaderThatStood(t *testing.T) {
	sc, err := scenario.Parse("aims.toml", aimScenario+"\n[checks]\nrun = [\"two-leaders\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	claims := []Moment{
		{At: 100 * time.Millisecond, What: scenario.TriggerLeader, Node: "n2", Value: "n2"},
		{At: 110 * time.Millisecond, What: scenario.TriggerLeader, Node: "n1", Value: "n2"},
		{At: 120 * time.Millisecond, What: scenario.TriggerLeader, Node: "n3", Value: "n2"},
	}
	change := Moment{At: 600 * time.Millisecond, What: scenario.TriggerLeader, Node: "n1", Value: "n3"}
	for seed := int64(1); seed <= 8; seed++ {
		for _, c := range []struct {
			moments []Moment
			at      time.Duration
			target  string
		}{
			{claims, 300 * time.Millisecond, "n2"},
			{append(slices.Clone(claims), change), 600 * time.Millisecond, "n3"},
		} {
			st, _ := newStrategy(Guided, sc, seed, 0, 8)
			g := st.(*guided)
			first := g.next(0, 0)
			g.observe(0, &observation{run: 0, sched: first, features: Features{"a"}, moments: c.moments})
			child := g.next(1, 1)
			f := child.Faults[len(child.Faults)-1]
			if f.At.D > c.at || f.At.D < c.at-time.Millisecond || f.Target.Names[0] != c.target || f.For.D != 640*time.Millisecond {
				t.Errorf("seed %d, %d moments: the first aim %q, want %s held 640ms from just before %s", seed, len(c.moments), child, c.target, c.at)
			}
		}
	}
}
