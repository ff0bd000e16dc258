package nemesis

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// layout is a partition made concrete: the links it cuts, and a line for
// people that says how.
type layout struct {
	cut      map[Link]bool
	describe string
}

// cuts lays out a partition over the nodes (in ring order), with target the
// nodes the fault resolved to (for isolate, bridge and ring-cut) and rng
// for the shapes that are random (halves, bridge).
func cuts(f *Fault, ring, target []string, rng *rand.Rand) layout {
	switch f.Shape {
	case Isolate:
		return sides(f, [][]string{target, without(ring, target)})
	case Halves:
		shuffled := shuffle(ring, rng)
		k := len(ring) / 2
		return sides(f, [][]string{inRing(ring, shuffled[:k]), inRing(ring, shuffled[k:])})
	case Groups:
		groups := append([][]string(nil), f.Groups...)
		var listed []string
		for _, g := range groups {
			listed = append(listed, g...)
		}
		if rest := without(ring, listed); len(rest) > 0 {
			groups = append(groups, rest)
		}
		return sides(f, groups)
	case Bridge:
		others := shuffle(without(ring, target), rng)
		k := len(others) / 2
		a, b := inRing(ring, others[:k]), inRing(ring, others[k:])
		l := layout{cut: map[Link]bool{}}
		cutBetween(l.cut, a, b)
		cutBetween(l.cut, b, a)
		l.describe = describeGroups([][]string{a, target, b}) + " (bridge " + strings.Join(target, ",") + ")"
		return l
	case MajoritiesRing:
		return majoritiesRing(ring)
	case RingCut:
		l := layout{cut: map[Link]bool{}}
		var parts []string
		for _, t := range target {
			s := successor(ring, t)
			if s == t {
				continue
			}
			switch {
			case !f.OneWay:
				l.cut[Link{t, s}], l.cut[Link{s, t}] = true, true
				parts = append(parts, t+"-"+s)
			case f.Direction == Out:
				l.cut[Link{t, s}] = true
				parts = append(parts, t+"->"+s)
			default:
				l.cut[Link{s, t}] = true
				parts = append(parts, s+"->"+t)
			}
		}
		l.describe = "ring cut " + strings.Join(parts, " ")
		return l
	}
	return layout{cut: map[Link]bool{}}
}

// sides cuts between groups: every link from one group to another, or, one
// way, only the links out of (Direction out) or into (in) the first group.
func sides(f *Fault, groups [][]string) layout {
	l := layout{cut: map[Link]bool{}}
	var nonEmpty [][]string
	for _, g := range groups {
		if len(g) > 0 {
			nonEmpty = append(nonEmpty, g)
		}
	}
	groups = nonEmpty
	if len(groups) < 2 {
		l.describe = describeGroups(groups) + " (nothing to cut)"
		return l
	}
	switch {
	case !f.OneWay:
		for i, a := range groups {
			for j, b := range groups {
				if i != j {
					cutBetween(l.cut, a, b)
				}
			}
		}
		l.describe = describeGroups(groups)
	case f.Direction == Out:
		for _, b := range groups[1:] {
			cutBetween(l.cut, groups[0], b)
		}
		l.describe = describeGroups(groups) + " (one way: the first side cannot reach the rest)"
	default:
		for _, b := range groups[1:] {
			cutBetween(l.cut, b, groups[0])
		}
		l.describe = describeGroups(groups) + " (one way: the rest cannot reach the first side)"
	}
	return l
}

// majoritiesRing lets node i hear only the m = ⌊n/2⌋+1 consecutive nodes of
// the ring centred on it (Jepsen's majorities ring). For odd n the cut is
// symmetric.
func majoritiesRing(ring []string) layout {
	l := layout{cut: map[Link]bool{}, describe: "majorities ring: each node hears only the majority around it"}
	n := len(ring)
	m := n/2 + 1
	back := (m - 1) / 2
	for i, to := range ring {
		hears := map[string]bool{}
		for k := 0; k < m; k++ {
			hears[ring[((i-back+k)%n+n)%n]] = true
		}
		for _, from := range ring {
			if !hears[from] {
				l.cut[Link{from, to}] = true
			}
		}
	}
	return l
}

func cutBetween(cut map[Link]bool, from, to []string) {
	for _, a := range from {
		for _, b := range to {
			if a != b {
				cut[Link{a, b}] = true
			}
		}
	}
}

func describeGroups(groups [][]string) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = strings.Join(g, " ")
	}
	return strings.Join(parts, " | ")
}

// without returns the nodes of ring that are not in drop, in ring order.
func without(ring, drop []string) []string {
	var out []string
	for _, n := range ring {
		if !slices.Contains(drop, n) {
			out = append(out, n)
		}
	}
	return out
}

// inRing returns the nodes of some, sorted in ring order.
func inRing(ring, some []string) []string {
	var out []string
	for _, n := range ring {
		if slices.Contains(some, n) {
			out = append(out, n)
		}
	}
	return out
}

func shuffle(nodes []string, rng *rand.Rand) []string {
	out := append([]string(nil), nodes...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// successor is the node after n in ring order.
func successor(ring []string, n string) string {
	i := slices.Index(ring, n)
	if i < 0 {
		return n
	}
	return ring[(i+1)%len(ring)]
}
