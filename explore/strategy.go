package explore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
)

// The strategies of a campaign.
const (
	// Random draws every run's schedule afresh from the vocabulary, as
	// Jepsen's random nemesis does: the baseline.
	Random = "random"
	// Guided keeps the schedules whose runs showed behaviour not seen
	// before, mutates and splices them, and aims faults at the moments
	// their runs showed.
	Guided = "guided"
)

// Strategies lists the strategies.
var Strategies = []string{Random, Guided}

// The seeded streams of the strategies: a random run's draws (plus its
// run index), a guided lane's (plus its lane).
const (
	randomStream = 0x72616e64 << 32
	guidedStream = 0x67756964 << 32
)

// strategy chooses the schedules of one lane of a campaign.
type strategy interface {
	// next is the schedule of the lane's run t, the campaign's run i.
	next(t, i int) Schedule
	// observe tells it what the lane's run t showed; it returns how many
	// features the run showed that the lane had not seen.
	observe(t int, o *observation) int
	// corpusSize is how many schedules it keeps.
	corpusSize() int
}

// observation is what a run showed, as a strategy learns it.
type observation struct {
	run      int // the campaign's run number, from 1 (0: none)
	sched    Schedule
	features Features
	moments  []Moment
}

// newStrategy makes the strategy name for lane of a campaign of sc.
func newStrategy(name string, sc *scenario.Scenario, seed int64, lane, corpusMax int) (strategy, error) {
	d := newDrawer(sc)
	switch name {
	case Random:
		return &random{d: d, seed: seed, seen: map[string]struct{}{}}, nil
	case Guided:
		if corpusMax < 1 {
			corpusMax = DefaultCorpus
		}
		return &guided{
			d: d, seed: seed, seen: map[string]struct{}{}, focus: focusOf(sc.Checks.Run), cut: cutsFirst(sc.Checks.Run),
			power:  powerFirst(sc.Checks.Run, d.v.Kinds),
			rng:    rand.New(rand.NewPCG(uint64(seed), guidedStream+uint64(lane))),
			corpus: &corpus{max: corpusMax}, made: map[int]*making{},
			ops: newBandit(len(mutations)), kinds: newBandit(len(scenario.Triggers)),
		}, nil
	}
	return nil, fmt.Errorf("unknown strategy %q (known: random, guided)", name)
}

// random is the Jepsen-style baseline: every run's schedule drawn afresh,
// from a stream of its own run index, so that any run of any lane or
// shard is the same for the same campaign seed.
type random struct {
	d    *drawer
	seed int64
	seen map[string]struct{}
}

func (r *random) next(t, i int) Schedule {
	rng := rand.New(rand.NewPCG(uint64(r.seed), randomStream+uint64(i)))
	return Schedule{Seed: r.seed + int64(i), Faults: r.d.schedule(rng)}
}

func (r *random) observe(t int, o *observation) int { return learn(r.seen, o.features) }

func (r *random) corpusSize() int { return 0 }

// learn adds features to seen and returns how many were new.
func learn(seen map[string]struct{}, fs Features) int {
	fresh := 0
	for _, f := range fs {
		if _, ok := seen[f]; !ok {
			seen[f] = struct{}{}
			fresh++
		}
	}
	return fresh
}

// guided is the feedback-driven strategy of one lane. Its first run is
// random's first draw (what the system does before its first fault is
// what it does undisturbed); until its corpus holds a schedule with
// faults it draws as random does. A run whose features include one the
// lane has not seen enters the corpus with the moments of its run, and
// plans a few children: a fault aimed at each of a few of those moments
// (each kind of moment in turn, the first deliveries of its rarest
// messages first), hitting the moment's node (or, at a leader change, the
// leader believed in) just before it. Then each run is, by turns drawn
// from the lane's own stream:
//
//   - every other run while children are planned, the next planned one;
//   - one in ten of the others, a fresh random schedule;
//   - one in seven, a splice: the first faults of one parent and the last
//     of another;
//   - else a child of one parent (chosen by what it paid, see corpus.pick)
//     changed by one to three mutations, each chosen by a bandit that
//     favours those whose children showed something new; one of them
//     aims a fault at a moment of the parent's run, of a kind chosen by
//     another bandit.
//
// A run's parent and the mutations that made it are credited when it
// shows something new. When runs stop showing anything new, guided
// draws afresh more often, as random does: before the planned children
// and the mutations, a share of the runs that grows with the runs since
// one showed something new, to 0.8 after drySpell of them (dryShare).
// The moments and the corpus lead only to the bugs that what a run
// showed explains; a bug that only a time explains, nothing shown does.
type guided struct {
	d      *drawer
	seed   int64
	rng    *rand.Rand
	seen   map[string]struct{}
	corpus *corpus
	made   map[int]*making // by lane run, until observed
	// aims are children planned when an entry joined the corpus: one
	// fault aimed at each of a few of its run's moments, the rarest
	// messages first, tried before the havoc of random mutations (every
	// other run while there are some), as AFL runs its deterministic
	// stage on a new input.
	aims  []planned
	ops   *bandit
	kinds *bandit // which kind of moment to aim at
	// real: the runs are not replayed (node processes, real servers), so
	// a moment of a parent's run does not recur at its time in a child's;
	// an aim at it is made an event trigger where the vocabulary has one
	real bool
	// cut: the checks are a store's, about a leader cut off (cutsFirst):
	// the first tries at their moments are partitions.
	cut bool
	// power: the checks judge lost writes and the vocabulary has power
	// failures (powerFirst): the first tries at their moments are power
	// failures, every host's and the leader's.
	power bool
	// stale counts the lane's runs since one showed something new.
	stale int
	// focus is the kinds of moment the scenario's checks are about
	// (focusOf), most telling first: a plan aims at them first, and
	// runs those aims at once rather than every other run.
	focus []scenario.Trigger
}

// planned is a child to be made: parent with a fault aimed at a moment of
// its run.
type planned struct {
	parent *entry
	moment Moment
	// grantor: at a grant, the fault hits the leader of the time (the
	// coordinator, the lock service's leader) rather than the holder.
	grantor bool
	// now: an aim at a kind of moment the checks are about, one of its
	// entry's first, run before any other run.
	now bool
	// kind is the kind of fault a now aim makes: an entry's now aims
	// take kinds of the vocabulary in turn, so that its first tries at
	// the checks' moments are not all one kind of fault, except for a
	// store's checks, whose are partitions (cutsFirst) ("": drawn).
	kind nemesis.Kind
	// alone: the aim stands alone from its moment on, the parent's
	// faults still in force there dropped (an entry's second now aim;
	// its first keeps them, which may have brought the moment about).
	alone bool
	// standing: the aim is at the leader that stood through the
	// vocabulary's starts (standingLeader).
	standing bool
	// power: the aim is a power failure (a crash whose disk loses what
	// was not synced); all: of every host at once.
	power, all bool
}

// focusOf is the kinds of moment a scenario's checks are about, the most
// telling first: a grant and a release for the lock's checks (a lock
// given twice is given around a grant), an operation under way and a
// leader change for a store's (a read or a write that meets a leader cut
// off), an election's messages and a leader change for an election's.
// A plan aims at these before the other kinds, whichever the run showed
// first.
func focusOf(run []string) []scenario.Trigger {
	var out []scenario.Trigger
	add := func(ts ...scenario.Trigger) {
		for _, t := range ts {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	for _, c := range run {
		switch c {
		case "mutex-linearizable", "mutex-cs", "mutex-progress", "fencing":
			add(scenario.TriggerAcquire, scenario.TriggerRelease)
		case "kv-linearizable", "lost-writes":
			add(scenario.TriggerInFlight, scenario.TriggerLeader)
		case "two-leaders", "agreement", "validity", "termination", "one-leader-per-term", "stale-leader", "eventual-leadership":
			add(scenario.TriggerMessage, scenario.TriggerLeader)
		}
	}
	return out
}

// cutsFirst reports whether a scenario's checks are a store's (a read or
// a write that meets a leader cut off from the others: a stale read, a
// write acknowledged by a leader that is then deposed), whose first aims
// are best a partition cutting the moment's node off.
func cutsFirst(run []string) bool {
	for _, c := range run {
		switch c {
		case "kv-linearizable", "lost-writes":
			return true
		}
	}
	return false
}

// powerFirst reports whether a store's first tries at its checks'
// moments are best power failures: the checks judge acknowledged writes
// (lost-writes, kv-linearizable) and the vocabulary has crashes and disk
// faults, so that a crash may be a power failure. A vocabulary of disk
// faults is a storage test's: it asks whether what was acknowledged was
// synced, which a power failure while writes are under way answers, of
// every host at once (what no replica kept is gone) and of the leader's
// (what it acknowledged before syncing it).
func powerFirst(run []string, kinds []nemesis.Kind) bool {
	return cutsFirst(run) && slices.Contains(kinds, nemesis.Crash) && slices.Contains(kinds, nemesis.Disk)
}

// Bounds of a plan's aims run at once: per new entry, the first aims at
// the checks' kinds of moment.
const aimsNowPerEntry = 2

// Bounds of the planned aims: per new entry, and waiting in all.
const (
	aimsPerEntry = 4
	maxPlanned   = 64
)

// making is how a run's schedule was made, to credit when its run is
// observed.
type making struct {
	parent *entry
	ops    []int
	aim    int // the kind of moment aimed at, -1 for none
}

func (g *guided) corpusSize() int { return g.corpus.len() }

func (g *guided) next(t, i int) Schedule {
	fresh := func() Schedule {
		rng := rand.New(rand.NewPCG(uint64(g.seed), randomStream+uint64(i)))
		return Schedule{Seed: g.seed + int64(i), Faults: g.d.schedule(rng)}
	}
	if t == 0 {
		return fresh()
	}
	var parents []*entry
	for _, e := range g.corpus.entries {
		if len(e.sched.Faults) > 0 {
			parents = append(parents, e)
		}
	}
	if g.rng.Float64() < dryShare(g.stale) && (len(g.aims) == 0 || !g.aims[0].now) {
		return fresh()
	}
	if len(g.aims) > 0 && (g.aims[0].now || g.rng.IntN(2) == 0) {
		p := g.aims[0]
		g.aims = g.aims[1:]
		child := p.parent.sched.clone()
		m := &making{parent: p.parent, aim: slices.Index(scenario.Triggers, p.moment.What)}
		p.parent.picked++
		mo := p.moment
		if p.grantor {
			mo.Node, mo.Host, mo.Leads = mo.Value, "", true
		}
		f := g.aimAtMoment(&child, mo, true, p.kind, p.alone)
		if p.now {
			g.longest(f)
		}
		if p.power {
			f.Disk = string(nemesis.LoseUnsynced)
			if p.all {
				f.Target = scenario.Target{Names: []string{string(nemesis.All)}, Set: true}
			}
		}
		g.made[t] = m
		return child
	}
	r := g.rng.Float64()
	switch {
	case len(parents) == 0 || r < freshShare:
		return fresh()
	case r < freshShare+1.0/7 && len(parents) > 1:
		a, b := g.corpus.pick(g.rng), g.corpus.pick(g.rng)
		if a != b && len(a.sched.Faults)+len(b.sched.Faults) > 1 {
			a.picked++
			g.made[t] = &making{parent: a, aim: -1}
			return g.splice(a.sched, b.sched)
		}
	}
	parent := g.corpus.pick(g.rng)
	parent.picked++
	child := parent.sched.clone()
	m := &making{parent: parent, aim: -1}
	for range 1 + g.rng.IntN(3) {
		for try := 0; try < 8; try++ {
			op := g.ops.choose(g.rng)
			if mutations[op](g, &child, parent, i, m) {
				m.ops = append(m.ops, op)
				break
			}
		}
	}
	if len(m.ops) == 0 || sameSchedule(child, parent.sched) {
		child.Seed = g.seed + int64(i) // at least a new seed
	}
	g.made[t] = m
	return child
}

func (g *guided) observe(t int, o *observation) int {
	fresh := 0
	var novel []string
	for _, f := range o.features {
		if _, ok := g.seen[f]; !ok {
			g.seen[f] = struct{}{}
			fresh++
			if len(novel) < 8 {
				novel = append(novel, f)
			}
		}
	}
	if fresh > 0 {
		g.stale = 0
	} else {
		g.stale++
	}
	m := g.made[t]
	delete(g.made, t)
	if m != nil {
		for _, op := range m.ops {
			g.ops.reward(op, fresh > 0)
		}
		if m.aim >= 0 {
			g.kinds.reward(m.aim, fresh > 0)
		}
		if fresh > 0 {
			m.parent.found++
		}
	}
	if fresh > 0 {
		e := &entry{run: o.run, sched: o.sched, fresh: fresh, features: len(o.features), novel: novel, moments: o.moments}
		g.corpus.add(e)
		g.plan(e, m == nil)
	}
	return fresh
}

// plan plans the aims of a new entry: one moment of each kind its run
// showed, in turn, until aimsPerEntry: the kinds the checks are about
// first (focusOf), then the first delivery of its rarest message, then a
// leader change, a grant, an operation in flight … (each drawn among its
// kind's), then the next of each, and so on. Every kind of moment is
// tried early, whichever one the bug needs. A grant is aimed at twice
// when the run had a leader then: once hitting the holder, once the
// leader. When the entry's schedule was drawn afresh (the lane's first
// run, a fresh random one), not made from a parent, its first aims at
// the checks' kinds run before anything else: aims at an aim's moments
// wait their turn, lest aims beget aims and starve the rest. When the
// checks are about leaders and such a run showed none of the checks'
// moments where a fault may start, its leader stood through them: its
// first aim is at that leader (standingLeader).
func (g *guided) plan(e *entry, drawn bool) {
	byKind := map[scenario.Trigger][]Moment{}
	var kinds []scenario.Trigger
	for _, mo := range e.moments {
		if !g.aimable(mo) {
			continue
		}
		if len(byKind[mo.What]) == 0 {
			kinds = append(kinds, mo.What)
		}
		byKind[mo.What] = append(byKind[mo.What], mo)
	}
	// the checks' kinds first, then messages, then the other kinds in the
	// order of scenario.Triggers
	rank := func(t scenario.Trigger) int {
		if i := slices.Index(g.focus, t); i >= 0 {
			return i - 100
		}
		return triggerRank(t)
	}
	slices.SortStableFunc(kinds, func(a, b scenario.Trigger) int { return rank(a) - rank(b) })
	// grants during whose hold others asked for the lock first
	slices.SortStableFunc(byKind[scenario.TriggerAcquire], func(a, b Moment) int { return b.Asked - a.Asked })
	focused := slices.ContainsFunc(kinds, func(t scenario.Trigger) bool { return slices.Contains(g.focus, t) })
	var picks []Moment
	for len(picks) < aimsPerEntry && len(kinds) > 0 {
		for k := 0; k < len(kinds) && len(picks) < aimsPerEntry; k++ {
			ms := byKind[kinds[k]]
			i := 0
			// messages come rarest first, grants others asked during first
			if kinds[k] != scenario.TriggerMessage && (kinds[k] != scenario.TriggerAcquire || ms[0].Asked == 0) {
				i = g.rng.IntN(len(ms))
			}
			picks = append(picks, ms[i])
			if byKind[kinds[k]] = slices.Delete(ms, i, i+1); len(byKind[kinds[k]]) == 0 {
				kinds = slices.Delete(kinds, k, k+1)
				k--
			}
		}
	}
	var aims []planned
	if drawn && !focused {
		if mo, ok := g.standingLeader(e.moments); ok {
			aims = append(aims, planned{parent: e, moment: mo, standing: true})
		}
	}
	for _, mo := range picks {
		aims = append(aims, planned{parent: e, moment: mo})
		if mo.What == scenario.TriggerAcquire && mo.Value != "" && mo.Value != mo.Node && slices.Contains(g.d.nodes, mo.Value) {
			aims = append(aims, planned{parent: e, moment: mo, grantor: true})
		}
	}
	aims = aims[:min(len(aims), aimsPerEntry)]
	var faults []nemesis.Kind // the now aims' kinds, in an order drawn
	for i := range aims {
		aims[i].now = drawn && i < aimsNowPerEntry && (aims[i].standing || slices.Contains(g.focus, aims[i].moment.What))
		if !aims[i].now {
			continue
		}
		switch {
		case g.power:
			faults = []nemesis.Kind{nemesis.Crash}
			// every host first, where the vocabulary lets a crash hit
			// all; then (or else) the leader the moment gives
			aims[i].power = true
			aims[i].all = i == 0 && slices.Contains(g.d.targets(nemesis.Crash), string(nemesis.All))
		case g.cut && slices.Contains(g.d.v.Kinds, nemesis.Partition):
			faults = []nemesis.Kind{nemesis.Partition}
		case faults == nil:
			faults = slices.Clone(g.d.v.Kinds)
			g.rng.Shuffle(len(faults), func(i, j int) { faults[i], faults[j] = faults[j], faults[i] })
		}
		aims[i].kind, aims[i].alone = faults[i%len(faults)], i%2 == 1
	}
	// aims run at once go before those waiting their turn
	n := 0
	for n < len(g.aims) && g.aims[n].now {
		n++
	}
	var now, later []planned
	for _, a := range aims {
		if a.now {
			now = append(now, a)
		} else {
			later = append(later, a)
		}
	}
	g.aims = slices.Concat(g.aims[:n], now, g.aims[n:], later)
	if len(g.aims) > maxPlanned {
		g.aims = g.aims[len(g.aims)-maxPlanned:]
	}
}

// standingLeader is the moment to aim at in a run whose leader stood
// through the vocabulary's starts, where the checks are about leaders
// (their moments include a leader change): the vocabulary's first start,
// as a time, at the node that last claimed leadership before it. A
// leader that is never deposed shows no change to aim at, yet the
// longest fault of that leader from the first start is the checks'
// likeliest try (a new leader elected beside the one cut off). False
// when no node claimed leadership before the first start.
func (g *guided) standingLeader(moments []Moment) (Moment, bool) {
	if !slices.Contains(g.focus, scenario.TriggerLeader) || !slices.Contains(g.d.v.Triggers, scenario.TriggerTime) {
		return Moment{}, false
	}
	leader := ""
	for _, mo := range moments {
		if mo.What == scenario.TriggerLeader && mo.At <= g.d.v.At[0] && mo.Value == mo.Node && slices.Contains(g.d.nodes, mo.Node) {
			leader = mo.Node
		}
	}
	if leader == "" {
		return Moment{}, false
	}
	return Moment{At: g.d.v.At[0], What: scenario.TriggerTime, Node: leader, Leads: true}, true
}

// triggerRank orders the kinds of moment a plan takes in turn: messages
// first, then as scenario.Triggers lists them.
func triggerRank(t scenario.Trigger) int {
	if t == scenario.TriggerMessage {
		return -1
	}
	return slices.Index(scenario.Triggers, t)
}

// aimable reports whether a fault may be aimed at a moment: one within
// the vocabulary's bounds on a start, of a kind whose trigger the
// vocabulary has, or any kind when it starts faults at a time, which the
// moment's time then is. A grant or a leader change is a moment worth
// aiming at even where the vocabulary lets faults start only at a time.
func (g *guided) aimable(mo Moment) bool {
	if mo.At < g.d.v.At[0] || mo.At > g.d.v.At[1] || mo.At >= g.d.duration-time.Microsecond {
		return false // a fault cannot start there: clamped, it would miss the moment
	}
	return slices.Contains(g.d.v.Triggers, mo.What) || slices.Contains(g.d.v.Triggers, scenario.TriggerTime)
}

// splice joins the first faults of a and the last of b, within the
// vocabulary's bound, on a's seed.
func (g *guided) splice(a, b Schedule) Schedule {
	i := 1 + g.rng.IntN(max(1, len(a.Faults)))
	j := g.rng.IntN(max(1, len(b.Faults)))
	out := a.clone()
	out.Faults = out.Faults[:min(i, len(out.Faults))]
	for _, f := range b.Faults[min(j, len(b.Faults)):] {
		if len(out.Faults) >= g.d.v.MaxFaults {
			break
		}
		out.Faults = append(out.Faults, cloneFault(f))
	}
	return out
}

// mutations change a child schedule in place; each returns false when it
// does not apply (and changed nothing).
var mutations = []func(g *guided, s *Schedule, parent *entry, run int, m *making) bool{
	// add a fresh fault, after the others (so that theirs keep their
	// seeded streams)
	func(g *guided, s *Schedule, _ *entry, _ int, _ *making) bool {
		if len(s.Faults) >= g.d.v.MaxFaults {
			return false
		}
		s.Faults = append(s.Faults, g.d.fault(g.rng))
		return true
	},
	// drop a fault
	func(g *guided, s *Schedule, _ *entry, _ int, _ *making) bool {
		if len(s.Faults) < 2 {
			return false
		}
		i := g.rng.IntN(len(s.Faults))
		s.Faults = slices.Delete(s.Faults, i, i+1)
		return true
	},
	// hit another target
	func(g *guided, s *Schedule, _ *entry, _ int, _ *making) bool {
		f := g.one(s)
		if f == nil {
			return false
		}
		g.d.retarget(g.rng, f)
		return true
	},
	// move a fault in time: a little, or anywhere
	func(g *guided, s *Schedule, _ *entry, _ int, _ *making) bool {
		f := g.one(s)
		if f == nil {
			return false
		}
		if g.rng.IntN(3) == 0 {
			f.At = dur(g.d.at(g.rng))
			return true
		}
		f.At = dur(g.clamp(f.At.D + g.nudge()))
		return true
	},
	// make it last longer or shorter
	func(g *guided, s *Schedule, _ *entry, _ int, _ *making) bool {
		f := g.one(s)
		if f == nil || !lastsFault(f) {
			return false
		}
		k := 0.25 + 3.75*g.rng.Float64()
		f.For = dur(min(g.d.v.For[1], max(g.d.v.For[0], round(time.Duration(float64(f.For.D)*k)))))
		return true
	},
	// change its intensity, or its kind
	func(g *guided, s *Schedule, _ *entry, _ int, _ *making) bool {
		f := g.one(s)
		if f == nil {
			return false
		}
		if f.Probability == nil && !f.Delay.Set && f.Rate == nil || g.rng.IntN(2) == 0 {
			at, when := f.At, f.When
			*f = g.d.fault(g.rng)
			f.At, f.When = at, when
			return true
		}
		g.d.intensity(g.rng, f)
		return true
	},
	// start it on another trigger
	func(g *guided, s *Schedule, _ *entry, _ int, _ *making) bool {
		f := g.one(s)
		if f == nil || len(g.d.v.Triggers) < 2 {
			return false
		}
		f.When = g.d.v.Triggers[g.rng.IntN(len(g.d.v.Triggers))].When()
		return true
	},
	// aim a fault at a moment the parent's run showed
	func(g *guided, s *Schedule, parent *entry, _ int, m *making) bool { return g.aim(s, parent, m) },
	// run it with another seed
	func(g *guided, s *Schedule, _ *entry, run int, _ *making) bool {
		s.Seed = g.seed + int64(run)
		return true
	},
}

// one is one of s's faults, at random; nil when it has none.
func (g *guided) one(s *Schedule) *scenario.Fault {
	if len(s.Faults) == 0 {
		return nil
	}
	return &s.Faults[g.rng.IntN(len(s.Faults))]
}

// aim aims a fault of s at a moment of the parent's run: the kind of
// moment chosen by a bandit that favours the kinds whose aims showed
// something new (the policy: which moment pays off), the moment at random
// among that kind's (see aimAtMoment).
func (g *guided) aim(s *Schedule, parent *entry, m *making) bool {
	byKind := map[scenario.Trigger][]Moment{}
	for _, mo := range parent.moments {
		if g.aimable(mo) {
			byKind[mo.What] = append(byKind[mo.What], mo)
		}
	}
	if len(byKind) == 0 {
		return false
	}
	allowed := make([]bool, len(scenario.Triggers))
	for i, t := range scenario.Triggers {
		allowed[i] = len(byKind[t]) > 0
	}
	k := g.kinds.chooseAmong(g.rng, allowed)
	if k < 0 {
		return false
	}
	kind := scenario.Triggers[k]
	g.aimAtMoment(s, byKind[kind][g.rng.IntN(len(byKind[kind]))], false, "", false)
	m.aim = k
	return true
}

// aimAtMoment aims a fault of s (a new one, or one it has) at mo. With a
// time, the fault starts at the moment, just before or just after it;
// with a trigger, it is armed just before the moment, and may name the
// node and value the moment had, so that on the simulator, whose run with
// the same seed is the same up to there, it fires at that very event. A
// planned aim drops the parent's faults armed after the moment, adds a
// fault (in place of one, when the schedule is still full), hits the
// moment's node (a partition isolates it, where the vocabulary
// has that shape), starts just before the moment and lasts long (the
// upper half of the vocabulary's durations): a fault aimed at a moment
// is meant to be in force through what follows it. kind, when not "",
// is the fault's kind; alone drops the parent's faults still in force at
// the moment too (they would shape what follows it as much as the aim).
func (g *guided) aimAtMoment(s *Schedule, mo Moment, planned bool, kind nemesis.Kind, alone bool) *scenario.Fault {
	if planned {
		// the parent's faults armed after the moment go: they came after
		// what its run showed there, and would change what follows the
		// moment that the aim is about
		s.Faults = slices.DeleteFunc(s.Faults, func(f scenario.Fault) bool {
			return f.At.D > mo.At || alone && inForce(f, mo.At)
		})
	}
	draw := func() scenario.Fault {
		if kind != "" {
			return g.d.faultOf(g.rng, kind)
		}
		return g.d.fault(g.rng)
	}
	var f *scenario.Fault
	switch {
	case len(s.Faults) < g.d.v.MaxFaults && (planned || len(s.Faults) == 0 || g.rng.IntN(2) == 0):
		s.Faults = append(s.Faults, draw())
		f = &s.Faults[len(s.Faults)-1]
	case planned:
		// the schedule is full: a fresh fault takes one's place, so that
		// the aim is a fault of its own, not one of the parent's moved
		f = g.one(s)
		*f = draw()
	default:
		f = g.one(s)
	}
	if planned && f.Kind == string(nemesis.Partition) && slices.Contains(g.d.v.Shapes, nemesis.Isolate) {
		f.Shape = string(nemesis.Isolate) // cut the moment's node off
	}
	if node := mo.Node; node != "" && (planned || g.rng.IntN(2) == 0) {
		leads := mo.Leads
		if mo.What == scenario.TriggerLeader && slices.Contains(g.d.nodes, mo.Value) {
			node, leads = mo.Value, true // the leader believed in, not the believer
		}
		g.aimAt(f, node, mo.Host)
		if leads && g.real {
			g.aimAtLeader(f)
		}
	}
	if planned {
		if lastsFault(f) {
			// in force through what follows the moment: the upper half
			// of the vocabulary's durations, on a log scale
			lo, hi := g.d.v.For[0], g.d.v.For[1]
			mid := time.Duration(math.Sqrt(float64(lo) * float64(hi)))
			f.For = dur(max(time.Microsecond, round(logUniform(g.rng, mid, hi))))
		}
		if when := mo.What.When(); g.real && when != nil && slices.Contains(g.d.v.Triggers, mo.What) {
			// armed a little before the moment, it starts at the first
			// such event, wherever this run puts it
			f.When = when
			f.At = dur(g.clamp(mo.At - realArm))
			return f
		}
		f.When = nil
		d := round(logUniform(g.rng, time.Microsecond, time.Millisecond))
		if mo.What == scenario.TriggerAcquire {
			// just after the grant, while the lock is held: a fault
			// before it would only delay the grant
			f.At = dur(g.clamp(mo.At + d))
		} else {
			f.At = dur(g.clamp(mo.At - d))
		}
		return f
	}
	when := mo.What.When()
	if when == nil || !slices.Contains(g.d.v.Triggers, mo.What) || g.rng.IntN(3) == 0 {
		f.When = nil
		at := mo.At
		if g.rng.IntN(3) != 0 {
			at += g.nudge()
		}
		f.At = dur(g.clamp(at))
		return f
	}
	if g.rng.IntN(2) == 0 && slices.Contains(g.d.nodes, mo.Node) {
		switch mo.What {
		case scenario.TriggerLeader:
			when.Node, when.Value = mo.Node, mo.Value
		case scenario.TriggerParticipant, scenario.TriggerStart, scenario.TriggerCrash:
			when.Node = mo.Node
		}
	}
	f.When = when
	f.At = dur(g.clamp(mo.At - time.Microsecond))
	return f
}

// realArm is how long before a parent's moment an aim of a run that is
// not replayed is armed: a real run's events come a little earlier or
// later than its parent's, by its processes' start and scheduling.
const realArm = 100 * time.Millisecond

// longest makes an aimed fault of a plan run at once last as long as the
// vocabulary lets it: the first try at a moment the checks are about
// gives what follows the moment the most time to go wrong (a new leader
// elected beside the one cut off, a lease run out).
func (g *guided) longest(f *scenario.Fault) {
	if lastsFault(f) {
		f.For = dur(g.d.v.For[1])
	}
}

// aimAt makes f hit node, the node of a moment (a message's receiver, the
// node whose belief changed), when the vocabulary lets a fault hit any one
// node (a pick of one, or the node named) and f's kind takes a node.
// A client's process is hit by a pause of the holder where the
// vocabulary has that pick, else through host, the node it sits on.
func (g *guided) aimAt(f *scenario.Fault, node, host string) {
	v := g.d.v
	if !slices.Contains(g.d.nodes, node) { // a client's process
		if f.Kind == string(nemesis.Pause) && slices.Contains(v.Targets, string(nemesis.Holder)) {
			f.Target = scenario.Target{Names: []string{string(nemesis.Holder)}, Set: true}
			return
		}
		if node = host; !slices.Contains(g.d.nodes, node) {
			return
		}
	}
	if !slices.Contains(v.Targets, node) && !slices.Contains(v.Targets, string(nemesis.One)) && !slices.Contains(v.Targets, string(nemesis.Random)) {
		return
	}
	if f.Kind == string(nemesis.Partition) && f.Shape != string(nemesis.Isolate) {
		return
	}
	f.Target = scenario.Target{Names: []string{node}, Set: true}
}

// aimAtLeader makes f, aimed at a node that led at its moment, hit
// whoever leads when it starts, where the vocabulary has that pick and
// f's kind takes it: a run that is not replayed elects by its own
// timing, and the node that led in the parent's run may follow in the
// child's.
func (g *guided) aimAtLeader(f *scenario.Fault) {
	if !slices.Contains(g.d.targets(nemesis.Kind(f.Kind)), string(nemesis.Leader)) {
		return
	}
	if f.Kind == string(nemesis.Partition) && f.Shape != string(nemesis.Isolate) {
		return
	}
	f.Target = scenario.Target{Names: []string{string(nemesis.Leader)}, Set: true}
}

// inForce reports whether f, armed before at, may be in force there: it
// lasts past at, or it waits for a trigger, which may fire at any time.
func inForce(f scenario.Fault, at time.Duration) bool {
	if f.At.D > at || !lastsFault(&f) {
		return false
	}
	return f.When != nil || f.At.D+f.For.D > at
}

// nudge is a small shift in time, either way: from a microsecond to tens
// of milliseconds, on a log scale.
func (g *guided) nudge() time.Duration {
	d := round(logUniform(g.rng, time.Microsecond, 20*time.Millisecond))
	if g.rng.IntN(2) == 0 {
		return -d
	}
	return d
}

// clamp keeps a start within the vocabulary's bounds and the run.
func (g *guided) clamp(at time.Duration) time.Duration {
	hi := min(g.d.v.At[1], g.d.duration-time.Microsecond)
	return max(g.d.v.At[0], min(hi, at))
}

// sameSchedule reports whether two schedules would run alike.
func sameSchedule(a, b Schedule) bool {
	return a.Seed == b.Seed && a.String() == b.String()
}

// bandit chooses among arms by their smoothed rate of success, each in
// proportion to (successes+1)/(tries+2): an arm that pays is chosen more,
// and none is ever starved.
type bandit struct{ tries, hits []int }

func newBandit(n int) *bandit { return &bandit{tries: make([]int, n), hits: make([]int, n)} }

func (b *bandit) rate(i int) float64 { return float64(b.hits[i]+1) / float64(b.tries[i]+2) }

func (b *bandit) choose(rng *rand.Rand) int {
	all := make([]bool, len(b.tries))
	for i := range all {
		all[i] = true
	}
	return b.chooseAmong(rng, all)
}

// chooseAmong chooses among the allowed arms; -1 when none is.
func (b *bandit) chooseAmong(rng *rand.Rand, allowed []bool) int {
	total := 0.0
	for i, ok := range allowed {
		if ok {
			total += b.rate(i)
		}
	}
	if total == 0 {
		return -1
	}
	x := rng.Float64() * total
	last := -1
	for i, ok := range allowed {
		if !ok {
			continue
		}
		last = i
		if x -= b.rate(i); x < 0 {
			return i
		}
	}
	return last
}

func (b *bandit) reward(i int, hit bool) {
	b.tries[i]++
	if hit {
		b.hits[i]++
	}
}

// drySpell is how many runs showing nothing new make most of a guided
// lane's runs fresh draws: the share grows linearly from nothing to 0.8
// over it.
const drySpell = 20

// dryShare is the share of fresh draws after stale runs showing nothing
// new.
func dryShare(stale int) float64 {
	return 0.8 * min(1, float64(stale)/drySpell)
}

// freshShare is the share of a guided lane's runs, beyond its planned
// aims, that are drawn afresh as random's are.
const freshShare = 0.1
