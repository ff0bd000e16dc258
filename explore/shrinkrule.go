package explore

import (
	"fmt"
	"math"
)

// Rule is how a shrink decides, on a Runner that is not exact, whether a
// candidate fails the same way often enough to be kept. Real runs do not
// replay, so a candidate runs several times, and the rule stops as soon
// as the runs so far decide it.
//
// It is Wald's sequential probability ratio test between two guesses at
// the rate p at which the candidate fails the same way: P1, as often as
// the original did (a candidate worth keeping), and P0, less often (by
// default half as often). After each run the evidence is the log of the
// likelihood ratio of the runs so far,
//
//	same·ln(P1/P0) + other·ln((1−P1)/(1−P0)),
//
// which each same-way failure raises and each other run lowers. The
// candidate is kept once the evidence reaches ln((1−Beta)/Alpha), dropped
// once it falls to ln(Beta/(1−Alpha)): Alpha is then the chance of
// keeping a candidate that fails at P0, Beta the chance of dropping one
// that fails at P1. A candidate still undecided after Max runs is kept
// when the evidence leans towards P1.
type Rule struct {
	// P1 is the rate of a candidate worth keeping; P0 < P1 that of one to
	// drop.
	P1, P0 float64
	// Alpha and Beta are the chances of a wrong keep and of a wrong drop.
	Alpha, Beta float64
	// Max is the most runs a candidate gets.
	Max int
}

// RuleFor is the default rule for a failure the original shows at rate:
// P1 is that rate, within [0.1, 0.9], P0 half of it, Alpha and Beta 10%,
// at most 10 runs. With P1 = 0.9 and P0 = 0.45, four same-way failures in
// a row keep a candidate and two other runs in a row drop it; a
// candidate that fails the same way 90% of the time is kept with
// probability 0.93 after 5.2 runs on average, one at 70% with 0.46, one
// at 10% with 0.0001 after 2.3 runs (Chance). The cap at 0.9 lets a
// candidate of an original that never missed survive one run that did
// not fail.
func RuleFor(rate float64) Rule {
	p1 := min(max(rate, 0.1), 0.9)
	return Rule{P1: p1, P0: p1 / 2, Alpha: 0.1, Beta: 0.1, Max: 10}
}

// Check reports what is wrong with a rule, or nil.
func (r Rule) Check() error {
	switch {
	case !(0 < r.P0 && r.P0 < r.P1 && r.P1 < 1):
		return fmt.Errorf("rule: want 0 < P0 < P1 < 1, got P0 = %g, P1 = %g", r.P0, r.P1)
	case !(0 < r.Alpha && r.Alpha < 0.5 && 0 < r.Beta && r.Beta < 0.5):
		return fmt.Errorf("rule: want Alpha and Beta in (0, 0.5), got %g and %g", r.Alpha, r.Beta)
	case r.Max < 1:
		return fmt.Errorf("rule: want Max ≥ 1, got %d", r.Max)
	}
	return nil
}

// tie absorbs the rounding of sums of logarithms: evidence within it of
// a bound has reached the bound.
const tie = 1e-9

// Decide says, after runs runs of a candidate of which same failed the
// same way, whether the rule is done and, if so, whether it keeps the
// candidate.
func (r Rule) Decide(same, runs int) (keep, done bool) {
	llr := r.evidence(same, runs)
	switch {
	case llr >= math.Log((1-r.Beta)/r.Alpha)-tie:
		return true, true
	case llr <= math.Log(r.Beta/(1-r.Alpha))+tie:
		return false, true
	case runs >= r.Max:
		return llr > 0, true
	}
	return false, false
}

func (r Rule) evidence(same, runs int) float64 {
	return float64(same)*math.Log(r.P1/r.P0) + float64(runs-same)*math.Log((1-r.P1)/(1-r.P0))
}

// Chance is the rule's behaviour, worked out exactly, on a candidate
// that fails the same way at rate p in each run independently: the
// probability that it is kept and the expected number of runs it costs.
func (r Rule) Chance(p float64) (keep, runs float64) {
	// at[s] is the probability of being undecided after n runs with s
	// same-way failures.
	at := []float64{1}
	for n := 0; n < r.Max && len(at) > 0; n++ {
		next := make([]float64, n+2)
		for s, q := range at {
			next[s+1] += q * p
			next[s] += q * (1 - p)
		}
		undecided := false
		for s, q := range next {
			if q == 0 {
				continue
			}
			k, done := r.Decide(s, n+1)
			if !done {
				undecided = true
				continue
			}
			runs += q * float64(n+1)
			if k {
				keep += q
			}
			next[s] = 0
		}
		if !undecided {
			break
		}
		at = next
	}
	return keep, runs
}
