package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coupharness/coup/scenario"
)

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
// halved, a clock rate goes halfway to 1.
func weakenings(sc *scenario.Scenario, i int) []weakening {
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
		add("crash → pause", func(w *scenario.Fault) { w.Kind = "pause" })
	}
	if lasts(f.Kind) {
		switch {
		case f.For.Set && f.For.D > time.Millisecond:
			d := (f.For.D / 2).Round(time.Microsecond)
			add(fmt.Sprintf("for %s → %s", f.For.D, d), func(w *scenario.Fault) { w.For = scenario.Duration{D: d, Set: true} })
		case !f.For.Set && !repeats(&f) && f.When == nil && sc.Duration.D-f.At.D > 2*time.Millisecond:
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
		if f.Delay.D > time.Millisecond || f.Jitter.D > time.Millisecond {
			d, j := (f.Delay.D / 2).Round(time.Microsecond), (f.Jitter.D / 2).Round(time.Microsecond)
			add(fmt.Sprintf("delay %s+%s → %s+%s", f.Delay.D, f.Jitter.D, d, j), func(w *scenario.Fault) {
				w.Delay = scenario.Duration{D: d, Set: true}
				w.Jitter = scenario.Duration{D: j, Set: f.Jitter.Set || j > 0}
			})
		}
	case "clock":
		if f.Rate != nil && math.Abs(*f.Rate-1) > 0.05 {
			r := roundSig((*f.Rate + 1) / 2)
			add(fmt.Sprintf("clock rate %g → %g", *f.Rate, r), func(w *scenario.Fault) { w.Rate = &r })
		}
	}
	return out
}

// lasts reports whether a fault of the kind lasts (has a for).
func lasts(kind string) bool {
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

// withoutNode is the scenario without its k-th node (0-based): the nodes
// after it are renamed one down (n5 becomes n4) and keep their election
// ids; faults, initiators and lock targets lose the node, and a fault
// left with no node, or triggered by the node, goes. ok is false when the
// scenario cannot do without the node (the workload names only it).
func withoutNode(sc *scenario.Scenario, k int) (*scenario.Scenario, bool) {
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
