package checks

import "github.com/coupharness/coup/history"

// ClaimsCutShort counts the claims of leadership that ended in a belief
// that is not known (a report whose detail is history.LeaderUnknown: a
// real server's poll failed or timed out), not in one the node stated.
// Such a claim is judged to end there: whether the node went on
// believing it led, nobody could tell.
func ClaimsCutShort(h *history.History) int {
	leading := map[string]bool{}
	n := 0
	for e := range h.All() {
		if e.Kind == history.KindProcess && e.What == history.ProcStart {
			leading[e.Node] = false
		}
		if e.Kind != history.KindReport || e.What != history.ReportLeader {
			continue
		}
		if e.Detail == history.LeaderUnknown && leading[e.Node] {
			n++
		}
		leading[e.Node] = e.Value != "" && e.Value == e.Node
	}
	return n
}
