// Package ring holds the small geometry that ring and id-ordered algorithms
// share: a node's neighbours in ring order, and the nodes sorted by election
// id. The functions are pure; they read the node list an Env gives.
package ring

import (
	"cmp"
	"slices"

	"github.com/coupharness/coup/nodes"
)

// Next is the node after self in ring order (self in a ring of one).
func Next(ring []string, self string) string { return step(ring, self, 1) }

// Prev is the node before self in ring order (self in a ring of one).
func Prev(ring []string, self string) string { return step(ring, self, -1) }

func step(ring []string, self string, by int) string {
	i := slices.Index(ring, self)
	if i < 0 {
		return self
	}
	n := len(ring)
	return ring[((i+by)%n+n)%n]
}

// ByID returns every node of env, sorted by election id, smallest first.
func ByID(env nodes.Env) []string {
	out := slices.Clone(env.Nodes())
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(env.ElectionID(a), env.ElectionID(b)) })
	return out
}

// Others returns every node of env but self, in ring order.
func Others(env nodes.Env) []string {
	var out []string
	for _, n := range env.Nodes() {
		if n != env.Self() {
			out = append(out, n)
		}
	}
	return out
}
