package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// Strategy is how a seed's run explores the choices a scenario leaves
// open: the order of near-simultaneous deliveries and timer firings, and
// the moments faults strike. Every strategy draws from sources seeded by
// the seed alone, so the same seed and the same strategy give the same
// history, always. The zero value is Random.
type Strategy struct {
	// Name is one of Strategies.
	Name string
	// Depth is PCT's d: the number of priority change points is d−1
	// (default 3).
	Depth int
}

// The strategies.
const (
	// Random is uniform random choices: every delivery's jitter drawn
	// uniformly, faults at their scheduled times. It is what a seed gave
	// before strategies existed, so its histories are unchanged.
	Random = "random"
	// PCT is probabilistic concurrency testing (Burckhardt et al., ASPLOS
	// 2010) mapped onto timed message passing. Each node is a thread with a
	// random priority; a message's jitter is placed by its sender's rank,
	// the highest priority getting the least, so that the order of
	// near-simultaneous deliveries follows the priorities; exactly
	// simultaneous deliveries and timer firings go in priority order too.
	// At d−1 change points, drawn uniformly over the run's time, the node
	// sending next drops below every other. Delays stay within the
	// scenario's latency and jitter: what PCT finds, the network allows.
	PCT = "pct"
	// Bias holds each scheduled fault until a node's belief changes (a
	// leader, participant or critical-section report), the moments where
	// a fault does most harm, within a window (the fault's period, or
	// 100ms): what strikes and whom is the nemesis's choice as under
	// Random, only the moment moves. Deliveries are as under Random.
	Bias = "bias"
	// Portfolio takes turns, as Coyote's portfolio does: seed s runs
	// Random, PCT or Bias by s mod 3, so a sweep gives each a third of its
	// seeds.
	Portfolio = "portfolio"
)

// Strategies lists the strategies, in the order the documentation gives
// them.
var Strategies = []string{Random, PCT, Bias, Portfolio}

// DefaultDepth is PCT's default d.
const DefaultDepth = 3

// ParseStrategy reads a strategy as the command line writes it: "random",
// "pct" or "pct:D" (D the depth), "bias", "portfolio".
func ParseStrategy(s string) (Strategy, error) {
	name, arg, hasArg := strings.Cut(s, ":")
	switch name {
	case "", Random, Bias, Portfolio:
		if hasArg {
			return Strategy{}, fmt.Errorf("strategy %q takes no parameter", name)
		}
		if name == "" {
			name = Random
		}
		return Strategy{Name: name}, nil
	case PCT:
		st := Strategy{Name: PCT, Depth: DefaultDepth}
		if hasArg {
			d, err := strconv.Atoi(arg)
			if err != nil || d < 1 || d > 100 {
				return Strategy{}, fmt.Errorf("pct depth %q: want a whole number from 1 to 100", arg)
			}
			st.Depth = d
		}
		return st, nil
	}
	return Strategy{}, fmt.Errorf("unknown strategy %q (known: %s)", s, strings.Join(Strategies, ", "))
}

// String writes the strategy as ParseStrategy reads it ("pct" for PCT at
// the default depth).
func (st Strategy) String() string {
	switch {
	case st.Name == "":
		return Random
	case st.Name == PCT && st.Depth != DefaultDepth && st.Depth != 0:
		return fmt.Sprintf("%s:%d", PCT, st.Depth)
	}
	return st.Name
}

// IsRandom reports whether the strategy is uniform random choices.
func (st Strategy) IsRandom() bool { return st.Name == "" || st.Name == Random }

// For is the strategy a seed runs: a portfolio's turn, or the strategy
// itself.
func (st Strategy) For(seed int64) Strategy {
	if st.Name != Portfolio {
		return st
	}
	turns := []Strategy{{Name: Random}, {Name: PCT, Depth: DefaultDepth}, {Name: Bias}}
	return turns[int(((seed%3)+3)%3)]
}

// The seeded streams of the strategies.
const (
	pctStream  = 0x706374
	biasStream = 0x62696173
)
