package explore

import (
	"math/rand/v2"
)

// DefaultCorpus is how many schedules a guided lane keeps by default.
const DefaultCorpus = 64

// corpus is a guided lane's bounded set of schedules that showed
// behaviour not seen before, each with the moments of its run at which a
// child may aim its faults.
type corpus struct {
	max     int
	entries []*entry
	last    int // the last entry's id
	// watch, when set, is told of every entry added and evicted.
	watch func(added, evicted *entry)
}

// entry is one schedule of the corpus.
type entry struct {
	id    int
	run   int // the campaign's run that showed it
	sched Schedule
	// fresh is how many features its run showed first; features how many
	// it showed in all.
	fresh, features int
	// novel are a few of the features its run showed first, for people.
	novel   []string
	moments []Moment
	// picked is how often it was a parent, found how often a child of
	// its showed something new.
	picked, found int
}

// score is how much an entry has paid: what it found, and what its
// children found, each of which counts more.
func (e *entry) score() int { return e.fresh + 3*e.found }

// add puts e in the corpus and returns the entry it evicted to stay
// within its bound, if any: the one that has paid least (the oldest of
// those), never e itself.
func (c *corpus) add(e *entry) (evicted *entry) {
	c.last++
	e.id = c.last
	c.entries = append(c.entries, e)
	if c.watch != nil {
		defer func() { c.watch(e, evicted) }()
	}
	if len(c.entries) <= c.max {
		return nil
	}
	worst := 0
	for i, x := range c.entries[:len(c.entries)-1] {
		if x.score() < c.entries[worst].score() {
			worst = i
		}
	}
	evicted = c.entries[worst]
	c.entries = append(c.entries[:worst], c.entries[worst+1:]...)
	return evicted
}

// pick chooses a parent, each entry with a weight that grows with what it
// paid and shrinks with how often it was picked already, so that new
// entries get their turn and fruitful ones come back.
func (c *corpus) pick(rng *rand.Rand) *entry {
	total := 0.0
	for _, e := range c.entries {
		total += weight(e)
	}
	x := rng.Float64() * total
	for _, e := range c.entries {
		if x -= weight(e); x < 0 {
			return e
		}
	}
	return c.entries[len(c.entries)-1]
}

func weight(e *entry) float64 { return float64(1+e.score()) / float64(1+e.picked) }

func (c *corpus) len() int { return len(c.entries) }
