package explore

import (
	"fmt"
	"math"
)

// Findability is how often a sweep found a failure: at Found of Seeds
// seeds. From it follow the estimated probability that one seed shows the
// failure, a confidence interval around it, and how many seeds a fix must
// survive before one may believe the failure gone.
type Findability struct {
	Found, Seeds int
}

// Confidence is the confidence of the interval and of the seeds to
// survive: 95%.
const Confidence = 0.95

// z is the standard normal quantile of a two-sided 95% interval.
const z = 1.959963984540054

// Estimate is the per-seed probability's point estimate, Found/Seeds (0
// for no seeds).
func (f Findability) Estimate() float64 {
	if f.Seeds <= 0 {
		return 0
	}
	return float64(f.Found) / float64(f.Seeds)
}

// Interval is the Wilson score interval of the per-seed probability at
// 95% confidence. Unlike the normal approximation it stays within [0, 1]
// and is sound when failures are rare (Found near 0), which is the usual
// case.
func (f Findability) Interval() (lo, hi float64) {
	if f.Seeds <= 0 {
		return 0, 1
	}
	n := float64(f.Seeds)
	p := f.Estimate()
	z2 := z * z
	denom := 1 + z2/n
	centre := (p + z2/(2*n)) / denom
	half := z / denom * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	if f.Found == 0 {
		lo = 0
	}
	if f.Found == f.Seeds {
		hi = 1
	}
	return lo, hi
}

// Survive is how many seeds in a row a fix must pass for 95% confidence
// that the failure is gone, if the failure occurs at each seed with
// probability p: a failure still there goes unseen for m seeds with
// probability (1−p)^m, which is at most 5% once m ≥ ln 0.05 / ln(1−p),
// about 3/p (the "rule of three"). It is 0 when p is 0 (nothing to
// survive) and 1 when p is 1.
func Survive(p float64) int {
	switch {
	case p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	return int(math.Ceil(math.Log(1-Confidence) / math.Log1p(-p)))
}

// SurviveSeeds is Survive of the estimate, and of the interval's lower
// end: a failure rarer than it seemed needs more seeds, so the second
// figure is the one to rely on.
func (f Findability) SurviveSeeds() (estimate, cautious int) {
	lo, _ := f.Interval()
	return Survive(f.Estimate()), Survive(lo)
}

// String says it all in one line, as a sweep prints it.
func (f Findability) String() string { return f.In("seed") }

// In says it all in one line, counting in unit ("seed", or "run" for a
// campaign's runs).
func (f Findability) In(unit string) string {
	lo, hi := f.Interval()
	if f.Found == 0 {
		return fmt.Sprintf("0 of %d %ss: per-%s probability below %s (%.0f%% confidence)", f.Seeds, unit, unit, percent(hi), 100*Confidence)
	}
	est, cautious := f.SurviveSeeds()
	return fmt.Sprintf("%d of %d %ss: per-%s probability %s (%.0f%% interval %s–%s); a fix must pass %s in a row for %.0f%% confidence that it is gone (%d at the interval's low end)",
		f.Found, f.Seeds, unit, unit, percent(f.Estimate()), 100*Confidence, percent(lo), percent(hi), count(est, unit), 100*Confidence, cautious)
}

func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// percent writes a probability as a percentage with three significant
// digits.
func percent(p float64) string {
	v := 100 * p
	switch {
	case v == 0 || v >= 10:
		return fmt.Sprintf("%.3g%%", v)
	case v >= 1:
		return fmt.Sprintf("%.2f%%", v)
	}
	return fmt.Sprintf("%.2g%%", v)
}
