package checks

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
)

// responseWindow is how long after a node was handed a message of an
// election a message it sends still counts as its answer, once the
// election has otherwise settled (see electionsOf).
const responseWindow = int64(20 * time.Millisecond)

// maxListed is how many elections a complexity result lists in its figures.
const maxListed = 100

// election is one election found in a history: the messages sent from its
// trigger until the live nodes agree on a live leader and nothing it sent
// is in flight.
type election struct {
	num      int   // 1, 2, … in the order they began (elections without messages are not numbered)
	from, to int64 // its trigger, and when it settled, was cut short or the run ended
	// causes are its triggers: the first opened it, the others joined it.
	causes []*history.Event
	byType map[string]int64
	total  int64
	// over is the send that took the election over the bound, if any.
	over *history.Event
	// settled is true when it ended with the live nodes agreeing on a live
	// leader and nothing in flight; cut is the trigger that cut it short.
	settled bool
	cut     *history.Event

	inFlight int64 // copies of its messages sent and not yet delivered or dropped
	quiet    bool  // settled now, with nothing in flight, since quietAt
	quietAt  int64
}

// electionMsg is a counted message still in flight.
type electionMsg struct {
	e      *election
	copies int64
}

// handed is the last message a node was handed.
type handed struct {
	e  *election // the election the message belonged to; nil for none
	at int64
}

// beliefTally counts the beliefs of the live nodes, so that whether they
// agree is known at once after every event.
type beliefTally struct {
	live, none int
	byLeader   map[string]int
}

func (t *beliefTally) add(n *node, d int) {
	if !n.live {
		return
	}
	t.live += d
	if n.leader == "" {
		t.none += d
		return
	}
	t.byLeader[n.leader] += d
	if t.byLeader[n.leader] == 0 {
		delete(t.byLeader, n.leader)
	}
}

// settled reports whether every live node believes in the same live leader.
func (t *beliefTally) settled(w *world) bool {
	if t.live == 0 || t.none > 0 || len(t.byLeader) != 1 {
		return false
	}
	for l := range t.byLeader {
		n, ok := w.nodes[l]
		return ok && n.live
	}
	return false
}

// elections is what electionsOf finds.
type elections struct {
	list []*election
	// outside counts, by type, the messages sent while no election was open.
	outside      map[string]int64
	outsideTotal int64
	// sends is the number of message send events; faults the number of
	// triggers other than elect requests and the first start.
	sends  int
	faults int
	// lateElect is an elect request made after the nodes had first settled.
	lateElect bool
	// firstTrigger is the first event that began an election, if any.
	firstTrigger *history.Event
	end          int64
}

// electionsOf divides the run (the history before the harness's shutdown)
// into elections, in one pass.
//
// An election begins at a trigger: an elect request, a nemesis event (any
// phase), a crash or exit, a restart under the same id, the first process
// start when the history has no elect request (the algorithm starts by
// itself), or a live node's change of belief while no election is under
// way. Every message sent from then on is counted in it, by type, until it
// settles: the live nodes all believe in the same live leader and no
// message it sent is in flight. After that, a message still counts if its
// sender was handed a message of the election within responseWindow
// before (the last node to learn the leader often passes the news on), and
// then the election is under way again; any other send, or a new trigger,
// ends it at the moment it settled. A trigger that arrives before the
// election settled cuts it short and begins the next one, except that an
// elect request joins it (several initiators start one election), and any
// trigger joins an election that has not yet sent a message. Elections
// that sent no message are dropped. Messages sent while no election is
// under way are counted apart.
func electionsOf(h *history.History) *elections {
	out := &elections{outside: map[string]int64{}}
	selfStarting := true
	stopped := false // the history has a stop event: out.end is its time
	out.end = h.End()
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind == history.KindProcess && e.What == history.ProcStop {
			out.end, stopped = e.Time, true
			break
		}
		if isElect(e) {
			selfStarting = false
		}
	}

	w := newWorld(&h.Meta)
	t := &beliefTally{byLeader: map[string]int{}}
	flights := map[int64]electionMsg{}
	last := map[string]handed{}
	var cur *election
	var opened []*election
	started, everSettled := false, false

	open := func(e *history.Event) {
		cur = &election{from: e.Time, causes: []*history.Event{e}, byType: map[string]int64{}}
		opened = append(opened, cur)
	}
	// closeAt ends the current election: at the moment it settled when it
	// had, or cut short by e.
	closeAt := func(e *history.Event) {
		if cur.quiet {
			cur.to, cur.settled = cur.quietAt, true
		} else {
			cur.to, cur.cut = e.Time, e
		}
		cur = nil
	}

	for e := range h.All() {
		if stopped && e.Kind == history.KindProcess && e.What == history.ProcStop {
			break // the history before the harness's shutdown
		}
		// trigger: e may begin an election; fault: it is not the
		// algorithm's own start or an elect request.
		trigger, fault := false, false
		switch e.Kind {
		case history.KindOp:
			trigger = isElect(e)
			out.lateElect = out.lateElect || (trigger && everSettled)
		case history.KindNemesis:
			trigger, fault = true, true
		case history.KindProcess:
			if e.Node == "" {
				break
			}
			n := w.node(e.Node)
			switch e.What {
			case history.ProcCrash, history.ProcExit:
				trigger, fault = n.live, n.live
			case history.ProcStart:
				switch {
				case n.start != nil: // a restart under the same id
					trigger, fault = true, true
				case selfStarting && !started:
					trigger = true
				}
				started = true
			}
		case history.KindReport:
			if e.What == history.ReportLeader && e.Node != "" {
				n := w.node(e.Node)
				trigger = n.live && n.leader != e.Value && (cur == nil || cur.quiet)
				fault = trigger
			}
		}
		if fault {
			out.faults++
		}
		if trigger && out.firstTrigger == nil {
			out.firstTrigger = e
		}
		if trigger {
			switch {
			case cur == nil:
				open(e)
			case cur.total == 0 || (isElect(e) && !cur.quiet):
				cur.causes = append(cur.causes, e)
			default:
				closeAt(e)
				open(e)
			}
		}

		if affects(e) {
			n := w.node(e.Node)
			t.add(n, -1)
			w.apply(e)
			t.add(n, +1)
		}

		if e.Kind == history.KindMsg {
			switch e.What {
			case history.MsgSend:
				out.sends++
				if cur != nil && cur.quiet {
					if l := last[e.Src]; l.e == cur && e.Time-l.at <= responseWindow {
						cur.quiet = false // an answer: the election goes on
					} else {
						closeAt(kept(e))
					}
				}
				if cur == nil {
					out.outside[e.MType]++
					out.outsideTotal++
					break
				}
				cur.byType[e.MType]++
				cur.total++
				cur.inFlight++
				if cur.over == nil && h.Meta.MessageBound > 0 && cur.total > h.Meta.MessageBound {
					cur.over = kept(e)
				}
				flights[e.Msg] = electionMsg{e: cur, copies: 1}
			case history.MsgDuplicate:
				if f, ok := flights[e.Msg]; ok {
					f.copies++
					f.e.inFlight++
					flights[e.Msg] = f
				}
			case history.MsgDeliver, history.MsgDrop:
				var of *election
				if f, ok := flights[e.Msg]; ok {
					of = f.e
					f.copies--
					f.e.inFlight--
					if f.copies <= 0 {
						delete(flights, e.Msg)
					} else {
						flights[e.Msg] = f
					}
				}
				if e.What == history.MsgDeliver {
					last[e.Dest] = handed{e: of, at: e.Time}
				}
			}
		}

		settled := t.settled(w)
		everSettled = everSettled || settled
		if cur != nil {
			switch now := settled && cur.inFlight <= 0; {
			case now && !cur.quiet:
				cur.quiet, cur.quietAt = true, e.Time
			case !now && cur.quiet:
				cur.quiet = false
			}
		}
	}
	if cur != nil {
		if cur.quiet {
			cur.to, cur.settled = cur.quietAt, true
		} else {
			cur.to = out.end
		}
	}
	for _, e := range opened {
		if e.total > 0 {
			e.num = len(out.list) + 1
			out.list = append(out.list, e)
		}
	}
	return out
}

// isElect reports whether e is the invocation of an elect request.
func isElect(e *history.Event) bool {
	return e.Kind == history.KindOp && e.Type == history.OpInvoke && e.F == "elect"
}

// complexity: every election costs at most the algorithm's message bound.
func complexity(h *history.History) Result {
	return unrecordedAfter(h, complexityOf(h), "the cost of the elections after it is unknown")
}

func complexityOf(h *history.History) Result {
	bound := h.Meta.MessageBound
	es := electionsOf(h)
	r := Result{Figures: map[string]any{"elections": len(es.list)}}
	if bound > 0 {
		r.Figures["bound"] = bound
	}
	if es.sends == 0 {
		return complexityFromCounts(h, es, r)
	}
	r.Figures["source"] = "events"
	if es.outsideTotal > 0 {
		r.Figures["outside_elections"] = es.outsideTotal
		r.Figures["outside_by_type"] = es.outside
	}
	var most *election
	var over []*election
	unsettled := 0
	var listed []map[string]any
	for _, e := range es.list {
		if most == nil || e.total > most.total {
			most = e
		}
		if bound > 0 && e.total > bound {
			over = append(over, e)
		}
		if !e.settled && e.cut == nil {
			unsettled++
		}
		if len(listed) < maxListed {
			listed = append(listed, electionFigure(e))
		}
	}
	if len(listed) > 0 {
		r.Figures["per_election"] = listed
	}
	if most != nil {
		r.Figures["max_messages"] = most.total
	}
	outside := ""
	if es.outsideTotal > 0 {
		outside = fmt.Sprintf("; %s sent outside any election (%s)", plural(int(es.outsideTotal), "message was"), byTypeText(es.outside))
		outside = strings.Replace(outside, "messages was", "messages were", 1)
	}
	pending := ""
	if unsettled > 0 {
		pending = "; the last election had not settled when the run ended"
	}

	switch {
	case len(over) > 0:
		e := over[0]
		r.Valid = False
		r.Interval = &Interval{From: e.from, To: e.to}
		r.Evidence = []history.Event{*e.causes[0], *e.over}
		sortEvents(r.Evidence)
		r.Figures["over_bound"] = len(over)
		r.Explanation = fmt.Sprintf("%s, cost %d messages (%s), more than the algorithm's bound of %d per election; the message that went over the bound was %s %s→%s at %s",
			describeElection(e, es.end), e.total, byTypeText(e.byType), bound, e.over.MType, e.over.Src, e.over.Dest, fmtTime(e.over.Time))
		if len(over) > 1 {
			r.Explanation += fmt.Sprintf("; %d of %d elections went over the bound", len(over), len(es.list))
		}
		return r
	case len(es.list) == 0:
		r.Valid = True
		r.Explanation = "no election sent a message (no message followed an elect request, a fault or a change of belief)" + outside
		return r
	}
	r.Valid = True
	what := fmt.Sprintf("the one election, %s, cost %d messages (%s)", describeElection(most, es.end), most.total, byTypeText(most.byType))
	if len(es.list) > 1 {
		what = fmt.Sprintf("%d elections cost at most %d messages each; the costliest, %s, cost %d (%s)",
			len(es.list), most.total, describeElection(most, es.end), most.total, byTypeText(most.byType))
	}
	if bound > 0 {
		r.Explanation = fmt.Sprintf("%s, within the algorithm's bound of %d per election%s%s", what, bound, pending, outside)
	} else {
		r.Explanation = fmt.Sprintf("%s; the algorithm declares no message bound, so none is enforced%s%s", what, pending, outside)
	}
	return r
}

// complexityFromCounts judges a history whose messages were not recorded
// one by one, from the counters on its end event. That is only possible
// for a run without faults, whose messages all belong to one election.
func complexityFromCounts(h *history.History, es *elections, r Result) Result {
	bound := h.Meta.MessageBound
	var counts map[string]int64
	var endEvent *history.Event
	for i := len(h.Events) - 1; i >= 0; i-- {
		if h.Events[i].Kind == history.KindEnd {
			endEvent = &h.Events[i]
			counts = endEvent.Counts
			break
		}
	}
	const prefix = "messages.sent."
	byType := map[string]int64{}
	for k, v := range counts {
		if t, ok := strings.CutPrefix(k, prefix); ok {
			byType[t] = v
		}
	}
	total := counts["messages.sent"]
	r.Figures["source"] = "counts"
	delete(r.Figures, "elections")
	switch {
	case counts == nil && !h.Ended:
		r.Valid = Unknown
		r.Explanation = "the history records no message and has no end event with the run's counters (the run was killed), so the cost of its elections is unknown"
		return r
	case total == 0:
		r.Valid = True
		r.Explanation = "no message was sent in the run (its end event counts none)"
		return r
	case es.faults > 0 || es.lateElect:
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("the run sent %d messages but did not record them one by one, and it had faults or several elections, so they cannot be divided among its elections; set messages = true under [history] in the scenario", total)
		return r
	}
	r.Figures["max_messages"] = total
	what := fmt.Sprintf("the run's one election cost %d messages (%s; counted on the end event, as messages were not recorded one by one)", total, byTypeText(byType))
	switch {
	case bound > 0 && total > bound:
		r.Valid = False
		r.Evidence = []history.Event{*endEvent}
		if first := es.firstTrigger; first != nil {
			r.Evidence = append([]history.Event{*first}, r.Evidence...)
		}
		r.Explanation = fmt.Sprintf("%s, more than the algorithm's bound of %d per election", what, bound)
	case bound > 0:
		r.Valid = True
		r.Explanation = fmt.Sprintf("%s, within the algorithm's bound of %d per election", what, bound)
	default:
		r.Valid = True
		r.Explanation = what + "; the algorithm declares no message bound, so none is enforced"
	}
	return r
}

// describeElection names an election for a sentence: "election 2, from
// 1.200s (the crash of n5) to 1.500s".
func describeElection(e *election, end int64) string {
	to := fmt.Sprintf("to %s", fmtTime(e.to))
	switch {
	case e.cut != nil:
		to = fmt.Sprintf("to %s, when %s cut it short", fmtTime(e.to), causeText(e.cut))
	case !e.settled:
		to = fmt.Sprintf("to the end of the run at %s, unsettled", fmtTime(end))
	}
	const most = 3
	var causes []string
	for _, c := range e.causes[:min(len(e.causes), most)] {
		causes = append(causes, causeText(c))
	}
	if k := len(e.causes) - most; k > 0 {
		causes = append(causes, plural(k, "more trigger"))
	}
	cause := joinNames(causes)
	return fmt.Sprintf("election %d, from %s (%s) %s", e.num, fmtTime(e.from), cause, to)
}

// causeText names a trigger: "the elect request to n2", "the crash of n5".
func causeText(e *history.Event) string {
	switch e.Kind {
	case history.KindOp:
		return fmt.Sprintf("the elect request to %s", e.Node)
	case history.KindNemesis:
		s := fmt.Sprintf("the nemesis's %s %s", e.What, e.Phase)
		if len(e.Nodes) > 0 {
			s += " on " + joinNames(e.Nodes)
		}
		return s
	case history.KindProcess:
		switch e.What {
		case history.ProcStart:
			if e.Incarnation > 1 {
				return fmt.Sprintf("the restart of %s", e.Node)
			}
			return fmt.Sprintf("the start of %s", e.Node)
		case history.ProcExit:
			return fmt.Sprintf("the exit of %s", e.Node)
		}
		return fmt.Sprintf("the %s of %s", e.What, e.Node)
	case history.KindReport:
		if e.Value == "" {
			return fmt.Sprintf("%s losing its leader", e.Node)
		}
		return fmt.Sprintf("%s turning to %s", e.Node, e.Value)
	case history.KindMsg:
		return fmt.Sprintf("the %s message %s→%s", e.MType, e.Src, e.Dest)
	}
	return fmt.Sprintf("event %d", e.Index)
}

// byTypeText lists counts by type, sorted by type: "elected 5, election 9".
func byTypeText(m map[string]int64) string {
	types := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%s %d", t, m[t])
	}
	return strings.Join(parts, ", ")
}

// electionFigure is one election as the figures list it.
func electionFigure(e *election) map[string]any {
	f := map[string]any{
		"election": e.num, "from_ns": e.from, "to_ns": e.to, "cause": causeText(e.causes[0]),
		"messages": e.total, "by_type": e.byType, "settled": e.settled,
	}
	if e.cut != nil {
		f["cut_short_by"] = causeText(e.cut)
	}
	return f
}

// kept is e to keep: a copy of a message event, which All yields in a
// scratch event that the next step overwrites; e itself otherwise.
func kept(e *history.Event) *history.Event {
	if e.Kind != history.KindMsg {
		return e
	}
	c := *e
	return &c
}

// messageLimit returns the limit event after which the history stops
// recording messages one by one, if it has one.
func messageLimit(h *history.History) *history.Event {
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == history.KindLimit && e.What == history.LimitMessages {
			return e
		}
	}
	return nil
}

// unrecordedAfter judges a check that needs every message on a history
// that stopped recording them: a violation found among the recorded
// messages stands; anything else is unknown, since what was not recorded
// may hide one.
func unrecordedAfter(h *history.History, r Result, unknown string) Result {
	lim := messageLimit(h)
	if lim == nil || r.Valid == False {
		return r
	}
	r.Valid = Unknown
	r.Evidence = []history.Event{*lim}
	r.Explanation = fmt.Sprintf("the run stopped recording messages one by one at %s, after %s of them (history.max_messages), so %s; among the recorded ones: %s",
		fmtTime(lim.Time), lim.Value, unknown, r.Explanation)
	return r
}
