package checks

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/coupharness/coup/history"
)

// The course material measures a mutual-exclusion algorithm by three
// figures; mutex-measures takes them from the history:
//
//   - bandwidth: messages between nodes per entry into the critical
//     section, entry and exit together (every message the run sent,
//     divided by the entries reported by live nodes);
//   - client delay: from a client's acquire to its grant. The course's
//     figure is for an acquire that waits for nobody, so the check gives
//     it for uncontended acquires (invoked when no node was inside and no
//     other acquire waited) apart from all of them;
//   - synchronisation delay: from one node leaving the critical section to
//     the next entering it, counted when the next one was already waiting
//     as the first left.
//
// Delays are given in nanoseconds and also in message delays: divided by
// the mean time a message took from its send to its delivery (recorded
// message events only).

// messageCounts returns the messages sent between nodes, in all and by
// type: from the end event's counters when the history has one, else from
// its message events.
func messageCounts(h *history.History) (int64, map[string]int64) {
	byType := map[string]int64{}
	for i := len(h.Events) - 1; i >= 0; i-- {
		e := &h.Events[i]
		if e.Kind != history.KindEnd || e.Counts == nil {
			continue
		}
		const sent = "messages.sent"
		for k, v := range e.Counts {
			if t, ok := strings.CutPrefix(k, sent+"."); ok {
				byType[t] = v
			}
		}
		return e.Counts[sent], byType
	}
	var total int64
	for e := range h.All() {
		if e.Kind == history.KindMsg && e.What == history.MsgSend {
			total++
			byType[e.MType]++
		}
	}
	return total, byType
}

// messageDelay is the mean time from a message's send to its delivery, over
// the recorded messages that were delivered; 0 when none was.
func messageDelay(h *history.History) int64 {
	sent := map[int64]int64{}
	var sum, n int64
	for e := range h.All() {
		if e.Kind != history.KindMsg {
			continue
		}
		switch e.What {
		case history.MsgSend:
			sent[e.Msg] = e.Time
		case history.MsgDeliver:
			if t, ok := sent[e.Msg]; ok {
				sum += e.Time - t
				n++
				delete(sent, e.Msg)
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// stats are the figures of a sample of durations.
type stats struct {
	n                   int
	median, mean, worst int64
}

func summarise(xs []int64) stats {
	if len(xs) == 0 {
		return stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum int64
	for _, x := range s {
		sum += x
	}
	return stats{n: len(s), median: s[len(s)/2], mean: sum / int64(len(s)), worst: s[len(s)-1]}
}

func (s stats) put(r *Result, name string, msgDelay int64) {
	r.figure(name+"_count", s.n)
	if s.n == 0 {
		return
	}
	r.figure(name+"_median_ns", s.median)
	r.figure(name+"_mean_ns", s.mean)
	r.figure(name+"_max_ns", s.worst)
	if msgDelay > 0 {
		r.figure(name+"_median_msgs", round2(float64(s.median)/float64(msgDelay)))
	}
}

// clientDelays returns the delay of every granted acquire, and of those
// that were uncontended: invoked when no node was in the critical section
// and no other acquire was waiting.
func clientDelays(h *history.History, claims []*claim) (all, uncontended []int64) {
	ops := lockOps(h)
	for _, o := range ops {
		if o.f != fAcquire || o.outcome(h) != history.OpOK {
			continue
		}
		at := h.Events[o.invoke].Time
		d := h.Events[o.done].Time - at
		all = append(all, d)
		if !insideAt(claims, h.Events[o.invoke].Index) && !otherWaiting(ops, o) {
			uncontended = append(uncontended, d)
		}
	}
	return all, uncontended
}

// insideAt reports whether a node was in the critical section when the
// event of index idx was recorded.
func insideAt(claims []*claim, idx int64) bool {
	for _, c := range claims {
		if c.begin.Index < idx && (c.end == nil || c.end.Index > idx) {
			return true
		}
	}
	return false
}

// otherWaiting reports whether another acquire was waiting (invoked and
// not yet answered) when o was invoked.
func otherWaiting(ops []*lockOp, o *lockOp) bool {
	for _, p := range ops {
		if p == o || p.f != fAcquire || p.invoke > o.invoke {
			continue
		}
		if p.done < 0 || p.done > o.invoke {
			return true
		}
	}
	return false
}

// syncDelays returns, for every entry that followed an exit with no node
// inside in between, the time from that exit to the entry, when an acquire
// at the entering node was already waiting at the exit.
func syncDelays(h *history.History, claims []*claim) []int64 {
	ops := lockOps(h)
	byFrom := slices.Clone(claims)
	sort.SliceStable(byFrom, func(i, j int) bool { return byFrom[i].begin.Index < byFrom[j].begin.Index })
	var out []int64
	for k, c := range byFrom {
		// The latest exit before c's entry, by an exit report.
		var prev *claim
		for _, p := range byFrom[:k] {
			if p.end == nil || p.end.Kind != history.KindReport || p.end.Index > c.begin.Index {
				continue
			}
			if prev == nil || p.end.Index > prev.end.Index {
				prev = p
			}
		}
		if prev == nil || insideBetween(byFrom[:k], prev, c) {
			continue
		}
		exit := prev.end
		for _, o := range ops {
			if o.f == fAcquire && o.node == c.node && h.Events[o.invoke].Index < exit.Index &&
				o.outcome(h) == history.OpOK && h.Events[o.done].Index >= c.begin.Index {
				out = append(out, c.from-exit.Time)
				break
			}
		}
	}
	return out
}

// insideBetween reports whether some claim other than prev was open at any
// point between prev's exit and c's entry.
func insideBetween(claims []*claim, prev, c *claim) bool {
	for _, o := range claims {
		if o == prev {
			continue
		}
		if o.end == nil || o.end.Index > prev.end.Index {
			return true
		}
	}
	return false
}

// mutexMeasures: the course material's measures of the run. Always true:
// it reports, it does not judge.
func mutexMeasures(h *history.History) Result {
	claims, _ := csClaims(h)
	sent, byType := messageCounts(h)
	msgDelay := messageDelay(h)
	all, uncontended := clientDelays(h, claims)
	syncs := syncDelays(h, claims)
	r := Result{Valid: True, Figures: map[string]any{"entries": len(claims), "messages": sent}}
	if msgDelay > 0 {
		r.figure("message_delay_ns", msgDelay)
	}
	if len(claims) == 0 {
		r.Explanation = fmt.Sprintf("no node entered the critical section, so there is nothing to measure (%s sent)", plural(int(sent), "message"))
		return r
	}
	perEntry := round2(float64(sent) / float64(len(claims)))
	r.figure("messages_per_entry", perEntry)
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Strings(types)
	var parts []string
	for _, t := range types {
		v := round2(float64(byType[t]) / float64(len(claims)))
		r.figure("messages_per_entry_"+t, v)
		parts = append(parts, fmt.Sprintf("%g %s", v, t))
	}
	summarise(all).put(&r, "client_delay", msgDelay)
	u := summarise(uncontended)
	u.put(&r, "uncontended_client_delay", msgDelay)
	s := summarise(syncs)
	s.put(&r, "sync_delay", msgDelay)
	r.Explanation = fmt.Sprintf("%s, %g messages each", entries(len(claims)), perEntry)
	if len(parts) > 0 {
		r.Explanation += " (" + strings.Join(parts, ", ") + ")"
	}
	if u.n > 0 {
		r.Explanation += fmt.Sprintf("; uncontended client delay %s (median of %d)", fmtDur(u.median), u.n)
	}
	if s.n > 0 {
		r.Explanation += fmt.Sprintf("; synchronisation delay %s (median of %d)", fmtDur(s.median), s.n)
	}
	if msgDelay > 0 {
		r.Explanation += fmt.Sprintf("; a message takes %s on average", fmtDur(msgDelay))
	}
	return r
}
