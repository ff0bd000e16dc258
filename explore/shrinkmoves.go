package explore

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// removeFaults removes as many faults as it can (ddmin).
func (sh *shrinker) removeFaults() bool {
	before := len(sh.cur.Faults)
	if before == 0 {
		return false
	}
	base := sh.cur
	keep := Ddmin(before, func(keep []int) (bool, bool) {
		cand := copyOf(base)
		cand.Faults = pick(base.Faults, keep)
		return sh.try(cand)
	})
	if len(keep) == before {
		return false
	}
	sh.step("faults %d → %d", before, len(keep))
	return true
}

func pick[T any](all []T, keep []int) []T {
	out := make([]T, 0, len(keep))
	for _, i := range keep {
		out = append(out, all[i])
	}
	return out
}

// concretize replaces each repeated or randomly targeted fault by its
// occurrences in the failing history: one fault per occurrence, at the
// time it happened, on the nodes it hit. Removing and weakening then
// work occurrence by occurrence. On a Runner that is not exact a pick
// stays a pick ("leader" is not the same node from one real run to the
// next); only the times become the occurrences'.
func (sh *shrinker) concretize() bool {
	cand := copyOf(sh.cur)
	cand.Faults = nil
	changed := false
	for i, f := range sh.cur.Faults {
		if f.When != nil || (!repeats(&f) && (!picks(&f) || !sh.exact)) {
			cand.Faults = append(cand.Faults, f)
			continue
		}
		changed = true
		for _, e := range occurrences(sh.out.History, i) {
			if time.Duration(e.Time) >= sh.cur.Duration.D {
				continue // carried out late, at the heal
			}
			o := f
			o.At = scenario.Duration{D: time.Duration(e.Time), Set: true}
			o.Every, o.Random = scenario.Duration{}, nil
			if sh.exact && picks(&f) && len(e.Nodes) > 0 && takesTarget(&f) {
				o.Target = scenario.Target{Names: slices.Clone(e.Nodes), Set: true}
			}
			cand.Faults = append(cand.Faults, o)
		}
	}
	if !changed {
		return false
	}
	before := len(sh.cur.Faults)
	if ok, _ := sh.try(cand); !ok {
		return false
	}
	sh.step("faults %d → %d occurrences at the times and on the nodes they struck", before, len(sh.cur.Faults))
	return true
}

// occurrences are the start events of fault i in a history.
func occurrences(h *history.History, i int) []history.Event {
	prefix := fmt.Sprintf("faults[%d]#", i)
	var out []history.Event
	for _, e := range h.Events {
		if e.Kind == history.KindNemesis && e.Phase == history.PhaseStart && len(e.Name) > len(prefix) && e.Name[:len(prefix)] == prefix {
			out = append(out, e)
		}
	}
	return out
}

func repeats(f *scenario.Fault) bool { return f.Every.Set && f.Every.D > 0 }

// picks reports whether the fault's target is a pick ("leader", "one",
// ...) rather than named nodes.
func picks(f *scenario.Fault) bool {
	if !f.Target.Set || len(f.Target.Names) != 1 {
		return false
	}
	switch f.Target.Names[0] {
	case "leader", "random", "one", "minority", "majority", "all":
		return true
	}
	return false
}

// takesTarget reports whether the fault may name its nodes: every fault
// but a partition whose sides follow from its shape.
func takesTarget(f *scenario.Fault) bool {
	if f.Kind != "partition" {
		return true
	}
	switch f.Shape {
	case "halves", "majorities-ring", "groups":
		return false
	}
	return f.Groups == nil
}

// shrinkTargets removes nodes from the faults that name several.
func (sh *shrinker) shrinkTargets() bool {
	progress := false
	for i := range sh.cur.Faults {
		names := sh.cur.Faults[i].Target.Names
		if len(names) < 2 || picks(&sh.cur.Faults[i]) {
			continue
		}
		base := sh.cur
		keep := Ddmin(len(names), func(keep []int) (bool, bool) {
			if len(keep) == 0 {
				return false, sh.spent()
			}
			cand := copyOf(base)
			cand.Faults = slices.Clone(base.Faults)
			cand.Faults[i].Target = scenario.Target{Names: pick(names, keep), Set: true}
			return sh.try(cand)
		})
		if len(keep) < len(names) {
			sh.step("faults[%d] target %v → %v", i, names, pick(names, keep))
			progress = true
		}
	}
	return progress
}

// removeInitiators removes initiators of an election (ddmin).
func (sh *shrinker) removeInitiators() bool {
	names := sh.cur.Workload.Initiators
	if sh.cur.Workload.Kind != "election" || len(names) < 2 {
		return false
	}
	base := sh.cur
	keep := Ddmin(len(names), func(keep []int) (bool, bool) {
		if len(keep) == 0 {
			return false, sh.spent()
		}
		cand := copyOf(base)
		cand.Workload.Initiators = pick(names, keep)
		return sh.try(cand)
	})
	if len(keep) == len(names) {
		return false
	}
	sh.step("initiators %v → %v", names, pick(names, keep))
	return true
}

// fewerClients halves a workload's clients (locks, lin-kv, sets, echo)
// while it fails the same way.
func (sh *shrinker) fewerClients() bool {
	progress := false
	for hasClients(sh.cur.Workload.Kind) && sh.cur.Workload.Clients > 1 && !sh.spent() {
		before := sh.cur.Workload.Clients
		cand := copyOf(sh.cur)
		cand.Workload.Clients = before / 2
		if ok, _ := sh.try(cand); !ok {
			break
		}
		sh.step("clients %d → %d", before, sh.cur.Workload.Clients)
		progress = true
	}
	return progress
}

// hasClients reports whether a workload of the kind has clients.
func hasClients(kind string) bool {
	switch kind {
	case scenario.WorkloadMutex, scenario.WorkloadLinKV, scenario.WorkloadSet, scenario.WorkloadEcho:
		return true
	}
	return false
}

// removeNodes tries the scenario without each node, from the last.
func (sh *shrinker) removeNodes() bool {
	progress := false
	for k := sh.cur.Nodes - 1; k >= 0 && sh.cur.Nodes > 1 && !sh.spent(); k-- {
		if k >= sh.cur.Nodes {
			continue
		}
		before := sh.cur.Nodes
		cand, ok := WithoutNode(sh.cur, k)
		if !ok {
			continue
		}
		if ok, _ := sh.try(cand); ok {
			sh.step("nodes %d → %d (without %s; the nodes after it renamed)", before, sh.cur.Nodes, scenario.NodeName(k))
			progress = true
		}
	}
	return progress
}

// shortenDuration halves the gap between the duration and the latest
// time anything is scheduled, as long as the run fails the same way.
func (sh *shrinker) shortenDuration() bool {
	low := sh.cur.Workload.At.D + sh.opts.Grain
	for _, f := range sh.cur.Faults {
		low = max(low, f.At.D+sh.opts.Grain)
	}
	before := sh.cur.Duration.D
	sh.bisect(low, func() time.Duration { return sh.cur.Duration.D }, func(s *scenario.Scenario, d time.Duration) {
		s.Duration = scenario.Duration{D: d, Set: true}
	})
	if sh.cur.Duration.D == before {
		return false
	}
	sh.step("duration %s → %s", before, sh.cur.Duration.D)
	return true
}

// safetyChecks are the checks whose verdict cannot turn false because a
// run ends sooner: only their failures let the recovery be shortened.
var safetyChecks = []string{"two-leaders", "one-leader-per-term", "stale-leader", "mutex-cs", "mutex-linearizable", "fencing", "kv-linearizable", "echo", "integrity", "complexity"}

// shortenRecovery shortens the recovery window when every check that
// fails is a safety check: a liveness check given less time could fail
// for want of time, not for the bug. On a Runner that is not exact every
// check that runs must be a safety check: a liveness check that held
// with less time in the runs that kept a candidate may fail for want of
// it in the next, and the file would fail another way.
func (sh *shrinker) shortenRecovery() bool {
	for name, c := range sh.out.Results.Checks {
		if (c.Valid.String() != "true" || !sh.exact) && !slices.Contains(safetyChecks, name) {
			return false
		}
	}
	before := sh.cur.Recovery.D
	sh.bisect(sh.opts.Grain, func() time.Duration { return sh.cur.Recovery.D }, func(s *scenario.Scenario, d time.Duration) {
		s.Recovery = scenario.Duration{D: d, Set: true}
	})
	if sh.cur.Recovery.D == before {
		return false
	}
	sh.step("recovery %s → %s", before, sh.cur.Recovery.D)
	return true
}

// bisect searches for the shortest value, down to low, of a duration for
// which the run still fails, to the grain (a millisecond on an exact
// Runner; on another, the grain or an eighth of the value).
func (sh *shrinker) bisect(low time.Duration, get func() time.Duration, set func(*scenario.Scenario, time.Duration)) {
	for !sh.spent() {
		cur := get()
		mid := ((low + cur) / 2).Round(sh.opts.Grain)
		gap := 2 * sh.opts.Grain
		if !sh.exact {
			// Each step costs real runs, and each kept step may fail the
			// same way a little less often: an eighth is close enough.
			gap = max(gap, cur/8)
		}
		if cur-low < gap || mid >= cur || mid < low {
			return
		}
		cand := copyOf(sh.cur)
		set(cand, mid)
		if ok, _ := sh.try(cand); !ok {
			low = mid
		}
	}
}

// weakenFaults weakens each fault step by step while the run fails the
// same way (see weakenings).
func (sh *shrinker) weakenFaults() bool {
	progress := false
	for i := 0; i < len(sh.cur.Faults) && !sh.spent(); i++ {
		for !sh.spent() {
			kept := false
			for _, w := range weakenings(sh.cur, i, sh.opts.Grain) {
				cand := copyOf(sh.cur)
				cand.Faults = slices.Clone(sh.cur.Faults)
				cand.Faults[i] = w.f
				if ok, _ := sh.try(cand); ok {
					sh.step("faults[%d]: %s", i, w.what)
					kept, progress = true, true
					break
				}
			}
			if !kept {
				break
			}
		}
	}
	return progress
}

// weakening is a fault made weaker, and what changed, for people.
type weakening struct {
	f    scenario.Fault
	what string
}

// weakenings are the weaker forms of fault i, tried in order, one step
// each: a replace becomes a crash, a crash a pause (with the same for),
// a lasting fault lasts half as long (one that lasts until the heal, half
// the time left), a probability is halved (a duplicate fault duplicates
// less, a loss fault loses less), a delay fault's delay and jitter are
// halved, a bandwidth fault's rate is doubled, a clock rate goes halfway
// to 1, a clock's jump is halved.
// Times are halved only while they are longer than grain.
func weakenings(sc *scenario.Scenario, i int, grain time.Duration) []weakening {
	f := sc.Faults[i]
	var out []weakening
	add := func(what string, change func(*scenario.Fault)) {
		w := f
		change(&w)
		out = append(out, weakening{w, what})
	}
	switch f.Kind {
	case "replace":
		add("replace → crash", func(w *scenario.Fault) { w.Kind = "crash" })
	case "crash":
		add("crash → pause", func(w *scenario.Fault) { w.Kind, w.Disk = "pause", "" })
	}
	if takesFor(f.Kind) && lastsFault(&f) {
		switch {
		case f.For.Set && f.For.D > grain:
			d := (f.For.D / 2).Round(time.Microsecond)
			add(fmt.Sprintf("for %s → %s", f.For.D, d), func(w *scenario.Fault) { w.For = scenario.Duration{D: d, Set: true} })
		case !f.For.Set && !repeats(&f) && f.When == nil && sc.Duration.D-f.At.D > 2*grain:
			d := ((sc.Duration.D - f.At.D) / 2).Round(time.Microsecond)
			add(fmt.Sprintf("until the heal → for %s", d), func(w *scenario.Fault) { w.For = scenario.Duration{D: d, Set: true} })
		}
	}
	switch f.Kind {
	case "loss", "duplicate", "corrupt":
		p := 1.0
		if f.Probability != nil {
			p = *f.Probability
		}
		if p > 0.01 {
			q := roundSig(p / 2)
			add(fmt.Sprintf("probability %g → %g", p, q), func(w *scenario.Fault) { w.Probability = &q })
		}
	case "delay":
		if f.Delay.D > grain || f.Jitter.D > grain {
			d, j := (f.Delay.D / 2).Round(time.Microsecond), (f.Jitter.D / 2).Round(time.Microsecond)
			add(fmt.Sprintf("delay %s+%s → %s+%s", f.Delay.D, f.Jitter.D, d, j), func(w *scenario.Fault) {
				w.Delay = scenario.Duration{D: d, Set: true}
				w.Jitter = scenario.Duration{D: j, Set: f.Jitter.Set || j > 0}
			})
		}
	case "bandwidth":
		if f.Rate != nil && *f.Rate < 1e9 {
			r := roundSig(2 * *f.Rate)
			add(fmt.Sprintf("bandwidth %g → %g bytes/s", *f.Rate, r), func(w *scenario.Fault) { w.Rate = &r })
		}
	case "clock":
		if f.Rate != nil && math.Abs(*f.Rate-1) > 0.05 {
			r := roundSig((*f.Rate + 1) / 2)
			add(fmt.Sprintf("clock rate %g → %g", *f.Rate, r), func(w *scenario.Fault) { w.Rate = &r })
		}
		if f.Offset.Set && f.Offset.D.Abs() > grain {
			o := (f.Offset.D / 2).Round(time.Millisecond)
			add(fmt.Sprintf("clock offset %s → %s", f.Offset.D, o), func(w *scenario.Fault) { w.Offset = scenario.Duration{D: o, Set: true} })
		}
	}
	return out
}

// takesFor reports whether a fault of the kind lasts (has a for).
func takesFor(kind string) bool {
	switch kind {
	case "restart", "replace", "resume", "timely":
		return false
	}
	return true
}

// roundSig rounds to three significant digits.
func roundSig(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
	return v
}

// WithoutNode is the scenario without its k-th node (0-based): the nodes
// after it are renamed one down (n5 becomes n4) and keep their election
// ids; faults, initiators and lock targets lose the node, and a fault
// left with no node, or triggered by the node, goes. ok is false when the
// scenario cannot do without the node (the workload names only it).
func WithoutNode(sc *scenario.Scenario, k int) (*scenario.Scenario, bool) {
	if sc.Nodes < 2 {
		return nil, false
	}
	c := copyOf(sc)
	c.Nodes = sc.Nodes - 1
	c.IDs = slices.Delete(slices.Clone(sc.IDs), k, k+1)
	rename := func(names []string) []string {
		var out []string
		for _, n := range names {
			if m, keep := renamed(n, k); keep {
				out = append(out, m)
			}
		}
		return out
	}
	w := &c.Workload
	if len(w.Initiators) > 0 {
		if w.Initiators = rename(w.Initiators); len(w.Initiators) == 0 {
			return nil, false
		}
	}
	if w.Targets != nil {
		if w.Targets = rename(w.Targets); len(w.Targets) == 0 {
			return nil, false
		}
	}
	if w.Clients == sc.Nodes {
		w.Clients = c.Nodes
	}
	c.Faults = nil
	for _, f := range sc.Faults {
		if f.Target.Set && !picks(&f) {
			names := rename(f.Target.Names)
			if len(names) == 0 {
				continue
			}
			f.Target = scenario.Target{Names: names, Set: true}
		}
		if f.Groups != nil {
			var groups [][]string
			for _, g := range f.Groups {
				if g = rename(g); len(g) > 0 {
					groups = append(groups, g)
				}
			}
			if len(groups) == 0 {
				continue
			}
			f.Groups = groups
		}
		if f.When != nil && f.When.Node != "" {
			m, keep := renamed(f.When.Node, k)
			if !keep {
				continue
			}
			when := *f.When
			when.Node = m
			f.When = &when
		}
		c.Faults = append(c.Faults, f)
	}
	return c, true
}

// renamed is a node's name once the k-th node (0-based) is gone; keep is
// false for that node. A name that is no node name stays as it is.
func renamed(name string, k int) (string, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "n"))
	if !strings.HasPrefix(name, "n") || err != nil || n < 1 {
		return name, true
	}
	switch {
	case n-1 == k:
		return "", false
	case n-1 > k:
		return scenario.NodeName(n - 2), true
	}
	return name, true
}
