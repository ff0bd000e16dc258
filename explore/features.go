package explore

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Features are what a run showed, abstracted so that two runs that did
// the same thing share them: a sorted set of short phrases. A guided
// campaign keeps the schedules whose runs showed a feature no earlier run
// had, as AFL keeps the inputs that reached a new edge; the number of
// features seen is the campaign's count of distinct behaviours.
//
// The abstraction (Abstract) reads, from the history alone:
//
//   - per node, the role and term transitions: "role n3 follower>leader",
//     "term n3 +1" (or +2.., back), and who led in which term ("led n3
//     term 2", terms above 8 as one);
//   - the succession of leaders ("succession n5>n4"), how many believed
//     they led at once ("leaders-at-once 2"), and how long the cluster
//     went without one, on a log scale ("leaderless ~64ms");
//   - operation outcome classes, alone and with the kinds of fault in
//     force ("op acquire info", "op read ok during partition"), and a
//     grant while another client held the lock;
//   - each fault × the observed state it met: the role or state of each
//     node it hit and the phase of the cluster ("fault pause hits leader",
//     "fault crash while electing", "fault replace while lock-held");
//   - process events ("process exit n2": a node that died by itself),
//     reports of rejected messages, metrics' names, and what the run
//     refused or stopped recording: the classes of what nodes and servers
//     logged, where the history has them;
//   - counts on a log scale (leader claims, distinct leaders, operations
//     whose outcome is unknown), as AFL buckets its hit counts;
//   - and, when a verdict is given, each check's verdict.
type Features []string

// Moment is an observed moment of a run, at which a guided campaign may
// aim a fault of a later run: a belief change, a node joining an
// election, a grant, a process event, a time at which an operation was
// under way, or a message's delivery. Node is the node it concerns (the
// message's receiver, the node whose belief changed, the leader while an
// operation was under way, or the node that served it), or a client's
// process; Value what it was (the leader believed in, the operation, the
// message's type and sender). Host is, at a grant or a release, the node
// the client's process sits on (its host on real servers, else the node it
// asked); Asked, at a grant, how many acquires other clients invoked while
// the lock was held (a coordinator that forgets the grant then gives the
// lock to one of them). Leads says that Node led then (an operation's
// moment whose node is the leader of the time): a run that is not
// replayed may elect another node, so an aim at it hits whoever leads.
type Moment struct {
	At    time.Duration
	What  scenario.Trigger
	Node  string
	Value string
	Host  string
	Asked int
	Leads bool
}

// maxMoments bounds the moments kept of each kind: the first ones, which
// a later run with the same seed meets first. Of messages, the first
// delivery of each type on each link is a moment, those of the rarest
// types first (an election's rather than a heartbeat's), up to
// maxMessageMoments.
const (
	maxMoments        = 24
	maxMessageMoments = 48
)

// Abstract reads a run's features and moments from its history, and its
// verdict's checks when res is not nil.
func Abstract(h *history.History, res *verdict.Results) (Features, []Moment) {
	a := newAbstraction(h.Meta.Nodes)
	for e := range h.All() {
		a.event(e)
	}
	a.finish(h.End())
	if res != nil {
		for _, name := range res.Order {
			a.add("check %s %s", name, res.Checks[name].Valid)
		}
	}
	out := make(Features, 0, len(a.set))
	for f := range a.set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, a.moments
}

// abstraction is the state Abstract keeps while it reads a history.
type abstraction struct {
	set     map[string]struct{}
	moments []Moment
	perKind map[scenario.Trigger]int

	role     map[string]string // leader, follower, none
	term     map[string]int64
	state    map[string]string // up, down, paused
	current  string            // the latest node to claim leadership
	claims   int
	leaders  map[string]bool // nodes that ever claimed
	leaderAt map[string]bool // nodes claiming now
	noLeader time.Duration   // since when no live node claims, -1 while one does
	longest  time.Duration
	electing map[string]bool
	holders  map[string]bool // client processes holding the lock
	inFlight map[string]history.Event
	// grants are, per client process holding the lock, its grant's
	// moment (an index into moments), while the lock is held
	grants map[string]int
	// spread are the moments of operations under way, thinned to span
	// the whole run (see spreadMoment), and every the spacing between them.
	spread []Moment
	every  int
	faults map[string]string // name -> kind, in force
	infos  int
	// links are the first delivery of each message type on each link;
	// types count the deliveries of each type.
	links map[string]Moment
	types map[string]int
}

func newAbstraction(nodes []string) *abstraction {
	a := &abstraction{
		set: map[string]struct{}{}, perKind: map[scenario.Trigger]int{},
		role: map[string]string{}, term: map[string]int64{}, state: map[string]string{},
		leaders: map[string]bool{}, leaderAt: map[string]bool{}, electing: map[string]bool{},
		holders: map[string]bool{}, inFlight: map[string]history.Event{}, grants: map[string]int{}, faults: map[string]string{},
		links: map[string]Moment{}, types: map[string]int{},
	}
	for _, n := range nodes {
		a.role[n], a.state[n] = "none", "up"
	}
	return a
}

func (a *abstraction) add(format string, args ...any) {
	a.set[fmt.Sprintf(format, args...)] = struct{}{}
}

// moment keeps a moment, unless its kind has maxMoments already; it
// returns the moment kept, or nil.
func (a *abstraction) moment(at int64, what scenario.Trigger, node, value string) *Moment {
	if a.perKind[what] >= maxMoments {
		return nil
	}
	a.perKind[what]++
	a.moments = append(a.moments, Moment{At: time.Duration(at), What: what, Node: node, Value: value})
	return &a.moments[len(a.moments)-1]
}

// spreadMoment keeps a moment of an operation under way so that the kept
// ones span the run, not only its first operations: every a.every-th is
// kept, and when maxMoments are kept every other one is dropped and the
// spacing doubles. A workload's first operations all come within a few
// milliseconds; a bug may need one in the middle of the run.
func (a *abstraction) spreadMoment(m Moment) {
	if a.every == 0 {
		a.every = 1
	}
	if a.perKind[m.What]%a.every == 0 {
		if len(a.spread) == maxMoments {
			kept := a.spread[:0]
			for i := 0; i < len(a.spread); i += 2 {
				kept = append(kept, a.spread[i])
			}
			a.spread = kept
			a.every *= 2
		}
		if a.perKind[m.What]%a.every == 0 {
			a.spread = append(a.spread, m)
		}
	}
	a.perKind[m.What]++
}

func (a *abstraction) event(e *history.Event) {
	switch e.Kind {
	case history.KindMsg:
		if e.What == history.MsgDeliver {
			a.types[e.MType]++
			key := e.MType + " " + e.Src + ">" + e.Dest
			if _, ok := a.links[key]; !ok {
				a.links[key] = Moment{At: time.Duration(e.Time), What: scenario.TriggerMessage, Node: e.Dest, Value: e.MType + " from " + e.Src}
			}
		}
	case history.KindMeta:
	case history.KindReport:
		a.report(e)
	case history.KindProcess:
		a.process(e)
	case history.KindOp:
		a.op(e)
	case history.KindNemesis:
		a.nemesis(e)
	case history.KindRefused, history.KindLimit:
		a.add("%s %s", e.Kind, e.What)
	}
}

func (a *abstraction) report(e *history.Event) {
	switch e.What {
	case history.ReportLeader:
		a.moment(e.Time, scenario.TriggerLeader, e.Node, e.Value)
		role := "follower"
		switch e.Value {
		case e.Node:
			role = "leader"
		case "":
			role = "none"
		}
		if old := a.role[e.Node]; old != role {
			a.add("role %s %s>%s", e.Node, old, role)
			a.role[e.Node] = role
		}
		if e.Term != nil {
			t := *e.Term
			if old, ok := a.term[e.Node]; ok && t != old {
				switch {
				case t == old+1:
					a.add("term %s +1", e.Node)
				case t > old:
					a.add("term %s +2..", e.Node)
				default:
					a.add("term %s back", e.Node)
				}
			}
			a.term[e.Node] = t
			if role == "leader" {
				a.add("led %s term %s", e.Node, termClass(t))
			}
		}
		if role == "leader" {
			a.claims++
			a.leaders[e.Node] = true
			if e.Node != a.current {
				prev := a.current
				if prev == "" {
					prev = "-"
				}
				a.add("succession %s>%s", prev, e.Node)
				a.current = e.Node
			}
			a.leaderAt[e.Node] = true
		} else {
			delete(a.leaderAt, e.Node)
		}
		a.leadersNow(e.Time)
	case history.ReportParticipant:
		if e.Value == "true" {
			a.moment(e.Time, scenario.TriggerParticipant, e.Node, "")
			a.add("participant %s while %s", e.Node, a.role[e.Node])
			a.electing[e.Node] = true
		} else {
			delete(a.electing, e.Node)
		}
	case history.ReportCS:
		a.add("cs %s %s", e.Node, e.Value)
	case history.ReportRejected:
		a.add("rejected %s", firstWord(e.Value))
	case history.ReportMetric:
		a.add("metric %s", e.Name)
	}
}

// leadersNow notes how many live nodes claim leadership at once, and how
// long the cluster goes without any.
func (a *abstraction) leadersNow(at int64) {
	n := 0
	for node := range a.leaderAt {
		if a.state[node] != "down" {
			n++
		}
	}
	switch {
	case n >= 3:
		a.add("leaders-at-once 3+")
	case n == 2:
		a.add("leaders-at-once 2")
	}
	t := time.Duration(at)
	switch {
	case n == 0 && a.noLeader < 0:
		a.noLeader = t
	case n > 0 && a.noLeader >= 0:
		a.longest = max(a.longest, t-a.noLeader)
		a.noLeader = -1
	}
}

func (a *abstraction) process(e *history.Event) {
	switch e.What {
	case history.ProcStart:
		if e.Incarnation > 1 {
			a.moment(e.Time, scenario.TriggerStart, e.Node, "")
			a.add("process start again %s while %s", e.Node, a.phase())
		}
		a.state[e.Node] = "up"
	case history.ProcCrash:
		a.moment(e.Time, scenario.TriggerCrash, e.Node, "")
		a.state[e.Node] = "down"
		a.add("process crash %s", a.role[e.Node])
	case history.ProcExit:
		a.state[e.Node] = "down"
		a.add("process exit %s", e.Node)
	case history.ProcPause:
		a.state[e.Node] = "paused"
	case history.ProcResume:
		a.state[e.Node] = "up"
	case history.ProcStop:
		return
	}
	a.leadersNow(e.Time)
}

func (a *abstraction) op(e *history.Event) {
	if e.Type == history.OpInvoke {
		a.inFlight[e.Process] = *e
		if e.F == "acquire" {
			for p, i := range a.grants {
				if p != e.Process {
					a.moments[i].Asked++
				}
			}
		}
		return
	}
	if inv, ok := a.inFlight[e.Process]; ok {
		delete(a.inFlight, e.Process)
		// the node to hit while it is under way: the leader, when a node
		// claims leadership (whose being cut off or stopped a read or
		// write feels first), else the node that served it (the member,
		// on real servers) or the one its client talks to
		node, leads := e.Process, false
		switch {
		case a.current != "" && a.leaderAt[a.current]:
			node, leads = a.current, true
		case e.Served != "":
			node = e.Served
		case e.Node != "":
			node = e.Node
		}
		a.spreadMoment(Moment{At: time.Duration(inv.Time + (e.Time-inv.Time)/2), What: scenario.TriggerInFlight, Node: node, Value: e.F, Leads: leads})
	}
	a.add("op %s %s", e.F, e.Type)
	if kinds := a.faultKinds(); kinds != "" {
		a.add("op %s %s during %s", e.F, e.Type, kinds)
	}
	if e.Type == history.OpInfo {
		a.infos++
	}
	if e.Type != history.OpOK {
		return
	}
	switch e.F {
	case "acquire":
		// the holder, and the leader of the time (a coordinator, a
		// lock service's leader): the grantor
		leader := ""
		if a.current != "" && a.leaderAt[a.current] {
			leader = a.current
		}
		if mo := a.moment(e.Time, scenario.TriggerAcquire, e.Process, leader); mo != nil {
			mo.Host = cmp.Or(e.Host, e.Node)
			a.grants[e.Process] = len(a.moments) - 1
		}
		if len(a.holders) > 0 {
			a.add("acquire ok while held")
		}
		a.holders[e.Process] = true
	case "release":
		delete(a.grants, e.Process)
		if mo := a.moment(e.Time, scenario.TriggerRelease, e.Process, ""); mo != nil {
			mo.Host = cmp.Or(e.Host, e.Node)
		}
		delete(a.holders, e.Process)
	}
}

func (a *abstraction) nemesis(e *history.Event) {
	if e.Phase == history.PhaseEnd {
		delete(a.faults, e.Name)
		return
	}
	for _, n := range e.Nodes {
		who := a.role[n]
		if s := a.state[n]; s != "up" {
			who = s
		}
		a.add("fault %s hits %s", e.What, who)
	}
	a.add("fault %s while %s", e.What, a.phase())
	a.faults[e.Name] = e.What
}

// phase is the cluster's state as the faults meet it: whether some live
// node claims leadership, an election is under way, the lock is held,
// operations are in flight.
func (a *abstraction) phase() string {
	var p []string
	if len(a.electing) > 0 {
		p = append(p, "electing")
	}
	led := false
	for n := range a.leaderAt {
		led = led || a.state[n] != "down"
	}
	if !led {
		p = append(p, "leaderless")
	}
	if len(a.holders) > 0 {
		p = append(p, "lock-held")
	}
	if len(a.inFlight) > 0 {
		p = append(p, "ops-in-flight")
	}
	if len(p) == 0 {
		return "stable"
	}
	return strings.Join(p, ",")
}

// faultKinds are the kinds of the faults in force, sorted, without
// repeats.
func (a *abstraction) faultKinds() string {
	var kinds []string
	for _, k := range a.faults {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ",")
}

func (a *abstraction) finish(end int64) {
	a.moments = append(a.moments, a.spread...)
	a.messageMoments()
	if a.noLeader >= 0 {
		a.longest = max(a.longest, time.Duration(end)-a.noLeader)
	}
	if a.longest > 0 {
		a.add("leaderless ~%s", logClass(a.longest))
	}
	a.add("leader-claims %s", countClass(a.claims))
	a.add("leaders %d", len(a.leaders))
	if a.infos > 0 {
		a.add("op info %s", countClass(a.infos))
	}
	beliefs := map[string]bool{}
	for n, s := range a.state {
		if s != "down" {
			beliefs[a.role[n]] = true
		}
	}
	if a.current != "" {
		a.add("end roles %d", len(beliefs))
	}
}

// messageMoments keeps the first delivery of each type on each link, the
// rarest types first (then in time order), after the other moments.
func (a *abstraction) messageMoments() {
	ms := make([]Moment, 0, len(a.links))
	for _, m := range a.links {
		ms = append(ms, m)
	}
	typeOf := func(m Moment) string { t, _, _ := strings.Cut(m.Value, " from "); return t }
	sort.Slice(ms, func(i, j int) bool {
		ti, tj := a.types[typeOf(ms[i])], a.types[typeOf(ms[j])]
		if ti != tj {
			return ti < tj
		}
		if ms[i].At != ms[j].At {
			return ms[i].At < ms[j].At
		}
		return ms[i].Value+ms[i].Node < ms[j].Value+ms[j].Node
	})
	a.moments = append(a.moments, ms[:min(len(ms), maxMessageMoments)]...)
}

// termClass is a term as a feature names it: small terms themselves,
// larger ones as one.
func termClass(t int64) string {
	if t > 8 {
		return "9+"
	}
	return fmt.Sprint(t)
}

// countClass buckets a count as AFL buckets hit counts: 0, 1, 2, 3, 4–7,
// 8–15, 16–31, …
func countClass(n int) string {
	if n < 4 {
		return fmt.Sprint(n)
	}
	lo := 1 << (bits.Len(uint(n)) - 1)
	return fmt.Sprintf("%d-%d", lo, 2*lo-1)
}

// logClass is a duration rounded down to a power of two milliseconds.
func logClass(d time.Duration) string {
	ms := d.Milliseconds()
	if ms < 1 {
		return "<1ms"
	}
	return fmt.Sprintf("%dms", 1<<(bits.Len64(uint64(ms))-1))
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " :("); i > 0 {
		return s[:i]
	}
	return s
}
