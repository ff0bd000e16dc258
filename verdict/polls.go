package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/console"
)

// PollStats count one node's polls, for a run of real servers that polls
// them (docs/servers.md): the questions answered, those left unanswered
// within the poll's timeout (a paused or cut-off server), those that
// failed before it (a refused connection, an HTTP error, a command that
// failed), and the rounds skipped while the node was down; and how often
// its belief became unknown (a round with no answer: no claim).
type PollStats struct {
	Answered   int64 `json:"answered"`
	Unanswered int64 `json:"unanswered"`
	Failed     int64 `json:"failed"`
	Skipped    int64 `json:"skipped"`
	Unknown    int64 `json:"unknown_beliefs,omitempty"`
}

// pollStats reads the polls' counters ("polls.n1.answered") by node; nil
// when the run polled nothing.
func pollStats(counts map[string]int64) map[string]PollStats {
	var out map[string]PollStats
	for k, v := range counts {
		rest, ok := strings.CutPrefix(k, history.CountPolls+".")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '.')
		if i < 0 {
			continue
		}
		node, how := rest[:i], rest[i+1:]
		if out == nil {
			out = map[string]PollStats{}
		}
		p := out[node]
		switch how {
		case history.PollAnswered:
			p.Answered = v
		case history.PollUnanswered:
			p.Unanswered = v
		case history.PollFailed:
			p.Failed = v
		case history.PollSkipped:
			p.Skipped = v
		case history.PollUnknown:
			p.Unknown = v
		default:
			continue
		}
		out[node] = p
	}
	return out
}

// pollsLine is the console's line of the polls, over every node, or "".
func pollsLine(polls map[string]PollStats) string {
	if len(polls) == 0 {
		return ""
	}
	var all PollStats
	var quiet []string // nodes with unanswered or failed questions
	for _, node := range slices.Sorted(maps.Keys(polls)) {
		p := polls[node]
		all.Answered += p.Answered
		all.Unanswered += p.Unanswered
		all.Failed += p.Failed
		all.Skipped += p.Skipped
		all.Unknown += p.Unknown
		if p.Unanswered+p.Failed > 0 {
			quiet = append(quiet, fmt.Sprintf("%s %d/%d", console.Printable(node), p.Unanswered, p.Failed))
		}
	}
	line := fmt.Sprintf("  polls: %d answered, %d unanswered within the timeout, %d failed, %d rounds skipped (server down)",
		all.Answered, all.Unanswered, all.Failed, all.Skipped)
	if all.Unknown > 0 {
		line += fmt.Sprintf("; %d beliefs made unknown (no claim) by rounds without an answer", all.Unknown)
	}
	if len(quiet) > 0 {
		line += "; unanswered/failed by node: " + strings.Join(quiet, ", ")
	}
	return line + "\n"
}
