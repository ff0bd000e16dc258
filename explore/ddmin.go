package explore

// Ddmin is Zeller's delta debugging, minimising by complements: it
// returns a subset of the indices 0..n−1, as small as it could find, for
// which fails still holds, given that it holds for them all. It removes
// chunks of halving size (n/2, n/4, ... down to single items) and starts
// over at a coarser size after each success. The result is 1-minimal:
// removing any one index left makes fails false. fails is also told to
// stop: once it reports that the budget is spent (stop true), ddmin
// returns what it has.
func Ddmin(n int, fails func(keep []int) (ok, stop bool)) []int {
	keep := make([]int, n)
	for i := range keep {
		keep[i] = i
	}
	parts := 2
	for len(keep) > 0 {
		if parts > len(keep) {
			parts = len(keep)
		}
		removed := false
		for c := 0; c < parts; c++ {
			lo, hi := c*len(keep)/parts, (c+1)*len(keep)/parts
			rest := append(append([]int(nil), keep[:lo]...), keep[hi:]...)
			ok, stop := fails(rest)
			if ok {
				keep, removed = rest, true
				parts = max(parts-1, 2)
				break
			}
			if stop {
				return keep
			}
		}
		if !removed {
			if parts >= len(keep) {
				return keep
			}
			parts = min(2*parts, len(keep))
		}
	}
	return keep
}
