package hirschbergsinclair

// Cost counts, without running the machines, the messages of an election
// for ids in ring order, however many initiate (every process is a
// candidate in phase 0, asked or woken by a message). It
// follows the analysis phase by phase: in phase k each remaining candidate's
// probe travels, each way, until a larger id swallows it or until its
// 2^k-th hop, after which a reply comes back the same distance. The
// candidate whose probes could travel all the way round (the highest id,
// once 2^k ≥ n) gets both back after n hops each, and its announcement goes
// round: n more. Which probes are swallowed depends only on the ids, not on
// timing, so the count is exact.
func Cost(ids []int) (probes, replies, elected int) {
	n := len(ids)
	if n == 0 {
		return 0, 0, 0
	}
	candidates := make([]int, n)
	for i := range candidates {
		candidates[i] = i
	}
	for phase := 0; ; phase++ {
		reach := 1 << phase
		var next []int
		for _, c := range candidates {
			if reach >= n && isMax(ids, c) {
				return probes + 2*n, replies, n
			}
			won := 0
			for _, dir := range []int{1, -1} {
				for hop := 1; hop <= reach; hop++ {
					at := ((c+dir*hop)%n + n) % n
					probes++
					if ids[at] > ids[c] {
						break // swallowed
					}
					if hop == reach {
						replies += reach
						won++
					}
				}
			}
			if won == 2 {
				next = append(next, c)
			}
		}
		candidates = next
	}
}

func isMax(ids []int, c int) bool {
	for _, id := range ids {
		if id > ids[c] {
			return false
		}
	}
	return true
}
