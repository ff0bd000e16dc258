package sim

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/coupharness/coup/nemesis"
)

// pct is the PCT strategy's state in one run (see PCT). Threads are the
// nodes; a step is a message sent. Node i's priority is level[i], higher
// going first; rank[i] is how many nodes go before it.
type pct struct {
	depth   int
	level   []int
	rank    []int32
	changes []time.Duration // the change points, in time order
	passed  int             // how many have passed
	split   int32           // ranks from split on are late
}

// newPCT draws the priorities, a random permutation of d..d+n−1, and the
// d−1 change points, uniform over [0, horizon), from the seed's PCT
// stream.
func newPCT(seed int64, n, depth int, horizon time.Duration) *pct {
	if depth < 1 {
		depth = DefaultDepth
	}
	if horizon <= 0 {
		horizon = time.Second
	}
	rng := rand.New(rand.NewPCG(uint64(seed), pctStream))
	p := &pct{depth: depth, level: make([]int, n), rank: make([]int32, n)}
	for i, v := range rng.Perm(n) {
		p.level[i] = depth + v
	}
	for range depth - 1 {
		p.changes = append(p.changes, time.Duration(rng.Int64N(int64(horizon))))
	}
	slices.Sort(p.changes)
	if n > 1 {
		p.split = 1 + int32(rng.IntN(n-1))
	}
	p.rerank()
	return p
}

// sending is called before node from sends at now: at each change point
// passed since the last send, the sender drops below every other node
// (the j-th change point gives it level d−j).
func (p *pct) sending(from int32, now time.Duration) {
	changed := false
	for p.passed < len(p.changes) && p.changes[p.passed] <= now {
		p.passed++
		p.level[from] = p.depth - p.passed
		changed = true
	}
	if changed {
		p.rerank()
	}
}

func (p *pct) rerank() {
	for i, li := range p.level {
		r := int32(0)
		for _, lj := range p.level {
			if lj > li {
				r++
			}
		}
		p.rank[i] = r
	}
}

// spread places a message's jitter by its sender's rank: the senders
// ranked before the split get none (their messages arrive as early as the
// network allows), the others all of it (as late as it allows). Timing
// bugs live at these edges; the order among early (or late) messages sent
// at the same time is the queue's tie-break, by rank again.
func (p *pct) spread(from int32) float64 {
	if len(p.rank) < 2 || p.rank[from] < p.split {
		return 0
	}
	return 1
}

// prio is the queue's tie-break for an item at node i: lower goes first.
func (p *pct) prio(i int32) int32 { return p.rank[i] + 1 }

// spreadFunc is the net's Spread hook for a run under PCT.
func (s *Sim) spreadFunc() func(nemesis.Link) float64 {
	return func(l nemesis.Link) float64 {
		if n := s.byName[l.From]; n != nil {
			return s.pct.spread(n.index)
		}
		return 0
	}
}
