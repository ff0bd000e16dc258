package checks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
)

// Naive reference checkers. They share no code with the fast checks: each
// answers every question by replaying the history from its beginning, so
// they are quadratic or worse, and simple enough to trust. Each takes a
// planted bug (bug = true) that the randomised comparison must be able to
// catch, to show that the random histories exercise the rule the bug
// breaks.

// nnode is a node's state in a naive replay.
type nnode struct {
	live, paused bool
	leader       string
	starts       int // starts so far: which incarnation this is
}

// naiveNodes returns every node's state after the first k events of h.
func naiveNodes(h *history.History, k int) map[string]nnode {
	st := map[string]nnode{}
	for _, e := range h.Events[:k] {
		if e.Node == "" {
			continue
		}
		s := st[e.Node]
		switch {
		case e.Kind == history.KindProcess && e.What == history.ProcStart:
			st[e.Node] = nnode{live: true, starts: s.starts + 1}
		case e.Kind == history.KindProcess && (e.What == history.ProcCrash || e.What == history.ProcExit || e.What == history.ProcStop):
			st[e.Node] = nnode{starts: s.starts}
		case e.Kind == history.KindProcess && e.What == history.ProcPause && s.live:
			s.paused = true
			st[e.Node] = s
		case e.Kind == history.KindProcess && e.What == history.ProcResume:
			s.paused = false
			st[e.Node] = s
		case e.Kind == history.KindReport && e.What == history.ReportLeader && s.live:
			s.leader = e.Value
			st[e.Node] = s
		}
	}
	return st
}

// naiveStop returns the number of events before the harness's shutdown:
// the position of the first stop event, or all of them.
func naiveStop(h *history.History) int {
	for i, e := range h.Events {
		if e.Kind == history.KindProcess && e.What == history.ProcStop {
			return i
		}
	}
	return len(h.Events)
}

// naiveEnd is the time of the end of the run.
func naiveEnd(h *history.History) int64 {
	k := naiveStop(h)
	if k < len(h.Events) {
		return h.Events[k].Time
	}
	return h.Events[len(h.Events)-1].Time
}

// naiveUnjudgeable reports whether the checks must refuse h: it has leader
// reports but not one process start.
func naiveUnjudgeable(h *history.History) bool {
	starts, reports := 0, 0
	for _, e := range h.Events {
		if e.Kind == history.KindProcess && e.What == history.ProcStart {
			starts++
		}
		if e.Kind == history.KindReport && e.What == history.ReportLeader {
			reports++
		}
	}
	return starts == 0 && reports > 0
}

// naiveAgreement returns whether the live nodes at the end of the run
// believe in at most one leader, and how many. Bug: "no leader" counts as
// a leader.
func naiveAgreement(h *history.History, bug bool) (bool, int) {
	leaders := map[string]bool{}
	for _, s := range naiveNodes(h, naiveStop(h)) {
		if s.live && (s.leader != "" || bug) {
			leaders[s.leader] = true
		}
	}
	return len(leaders) <= 1, len(leaders)
}

// naiveValidity returns the verdict of validity: whether every leader a
// live node believes in at the end of the run is live and has the best live
// id, and how many believers are wrong. A live leader without an id makes it
// unknown, unless some believer is wrong. Bug: a dead leader is fine.
func naiveValidity(h *history.History, bug bool) (Validity, int) {
	elects := h.Meta.Elects
	if elects != "" && elects != "max" && elects != "min" {
		return Unknown, 0
	}
	st := naiveNodes(h, naiveStop(h))
	id := func(n string) (int, bool) {
		for i, name := range h.Meta.Nodes {
			if name == n && i < len(h.Meta.IDs) {
				return h.Meta.IDs[i], true
			}
		}
		return 0, false
	}
	best, have := 0, false
	for n, s := range st {
		if i, ok := id(n); s.live && ok && (!have || (elects == "min" && i < best) || (elects != "min" && i > best)) {
			best, have = i, true
		}
	}
	wrong, noID := 0, false
	for _, s := range st {
		if !s.live || s.leader == "" {
			continue
		}
		if !st[s.leader].live && !bug {
			wrong++
			continue
		}
		if !st[s.leader].live || elects == "" {
			continue
		}
		if i, ok := id(s.leader); !ok {
			noID = true
		} else if i != best {
			wrong++
		}
	}
	switch {
	case wrong > 0:
		return False, wrong
	case noID:
		return Unknown, 0
	}
	return True, 0
}

// naiveTermination returns the verdict of termination and how many live
// nodes lack a leader at the deadline. Bug: the deadline counts from the
// first nemesis event instead of the last.
func naiveTermination(h *history.History, bug bool) (Validity, int) {
	ref := h.Events[0].Time
	first := true
	for _, e := range h.Events {
		if (e.Kind == history.KindNemesis && (!bug || first)) || (e.Kind == history.KindOp && e.Type == history.OpInvoke && e.F == "elect") {
			ref = max(ref, e.Time)
			if e.Kind == history.KindNemesis {
				first = false
			}
		}
	}
	bound := h.Meta.Termination
	if bound <= 0 {
		bound = int64(time.Second)
	}
	d := ref + bound
	if h.Events[len(h.Events)-1].Time < d {
		return Unknown, 0
	}
	k := 0
	for k < len(h.Events) && h.Events[k].Time <= d {
		k++
	}
	without := 0
	for _, s := range naiveNodes(h, k) {
		if s.live && s.leader == "" {
			without++
		}
	}
	if without > 0 {
		return False, without
	}
	return True, 0
}

// naiveOmega returns the verdict of eventual leadership, the leader and
// when it became stable (-1 if it did not). Bug: a paused node is correct.
func naiveOmega(h *history.History, bug bool) (Validity, string, int64) {
	stop := naiveStop(h)
	end := naiveEnd(h)
	correct := map[string]bool{}
	for n, s := range naiveNodes(h, stop) {
		if s.live && (!s.paused || bug) {
			correct[n] = true
		}
	}
	if len(correct) == 0 {
		return True, "", -1
	}
	var deadline int64
	if h.Meta.Stabilisation > 0 {
		ref := h.Events[0].Time
		if h.Meta.GST > 0 {
			ref = h.Meta.GST
		}
		deadline = ref + h.Meta.Stabilisation
	} else {
		// The termination deadline, measured from GST when that is later.
		ref := h.Events[0].Time
		for _, e := range h.Events {
			if e.Kind == history.KindNemesis || (e.Kind == history.KindOp && e.Type == history.OpInvoke && e.F == "elect") {
				ref = max(ref, e.Time)
			}
		}
		ref = max(ref, h.Meta.GST)
		bound := h.Meta.Termination
		if bound <= 0 {
			bound = int64(time.Second)
		}
		deadline = ref + bound
	}
	// stable(k): after the first k events, every correct node trusts the
	// same correct node.
	stable := func(k int) string {
		st := naiveNodes(h, k)
		leader := ""
		for n := range correct {
			l := st[n].leader
			if l == "" || (leader != "" && l != leader) {
				return ""
			}
			leader = l
		}
		if !correct[leader] {
			return ""
		}
		return leader
	}
	leader := stable(stop)
	if leader == "" {
		if end < deadline {
			return Unknown, "", -1
		}
		return False, "", -1
	}
	k := stop
	for k > 0 && stable(k-1) == leader {
		k--
	}
	at := h.Events[k-1].Time
	switch {
	case at > deadline:
		return False, leader, at
	case end < deadline:
		return Unknown, leader, at
	}
	return True, leader, at
}

// nelection is an election as the naive complexity checker sees it.
type nelection struct {
	from, to      int64
	total         int64
	byType        map[string]int64
	settled, cut  bool
	causes        int
	sends         []int // positions of its sends
	quiet         bool
	quietAt       int64
	closed        bool
	firstOverSend int
}

// naiveComplexity divides the run into elections by the rules of
// electionsOf, answering every question by rescanning: whether the nodes
// agree (a replay), which messages are in flight (a scan of every message
// event so far), what a node was last handed (a scan backwards). Bug:
// elect requests never join an election under way.
func naiveComplexity(h *history.History, bug bool) (list []*nelection, outside int64) {
	stop := naiveStop(h)
	selfStarting := true
	for _, e := range h.Events[:stop] {
		if e.Kind == history.KindOp && e.Type == history.OpInvoke && e.F == "elect" {
			selfStarting = false
		}
	}
	var all []*nelection
	var cur *nelection
	owner := map[int]*nelection{} // position of a send → its election
	settledAfter := func(k int) bool {
		st := naiveNodes(h, k)
		leader, live := "", 0
		for _, s := range st {
			if !s.live {
				continue
			}
			live++
			if s.leader == "" || (leader != "" && s.leader != leader) {
				return false
			}
			leader = s.leader
		}
		return live > 0 && st[leader].live
	}
	// inFlight counts copies of el's messages sent and not yet delivered
	// or dropped among the first k events.
	inFlight := func(el *nelection, k int) int {
		n := 0
		for _, p := range el.sends {
			id := h.Events[p].Msg
			for _, e := range h.Events[p:k] {
				if e.Kind != history.KindMsg || e.Msg != id {
					continue
				}
				switch e.What {
				case history.MsgSend, history.MsgDuplicate:
					n++
				case history.MsgDeliver, history.MsgDrop:
					n--
				}
			}
		}
		return n
	}
	// lastHanded returns the election of the last message delivered to
	// node among the first k events, and when.
	lastHanded := func(node string, k int) (*nelection, int64, bool) {
		for i := k - 1; i >= 0; i-- {
			e := h.Events[i]
			if e.Kind != history.KindMsg || e.What != history.MsgDeliver || e.Dest != node {
				continue
			}
			for p, el := range owner {
				if h.Events[p].Msg == e.Msg && p < i {
					return el, e.Time, true
				}
			}
			return nil, e.Time, true
		}
		return nil, 0, false
	}
	closeAt := func(e history.Event) {
		if cur.quiet {
			cur.to, cur.settled = cur.quietAt, true
		} else {
			cur.to, cur.cut = e.Time, true
		}
		cur.closed = true
		cur = nil
	}
	for i, e := range h.Events[:stop] {
		before := naiveNodes(h, i)
		isElectReq := e.Kind == history.KindOp && e.Type == history.OpInvoke && e.F == "elect"
		trigger := isElectReq || e.Kind == history.KindNemesis
		if e.Kind == history.KindProcess && e.Node != "" {
			switch e.What {
			case history.ProcCrash, history.ProcExit:
				trigger = before[e.Node].live
			case history.ProcStart:
				earlierStarts := 0
				for _, x := range h.Events[:i] {
					// A process event that names no node is ignored, as the
					// world model ignores it.
					if x.Kind == history.KindProcess && x.What == history.ProcStart && x.Node != "" {
						if x.Node == e.Node {
							trigger = true
						}
						earlierStarts++
					}
				}
				if selfStarting && earlierStarts == 0 {
					trigger = true
				}
			}
		}
		if e.Kind == history.KindReport && e.What == history.ReportLeader && e.Node != "" {
			s := before[e.Node]
			trigger = s.live && s.leader != e.Value && (cur == nil || cur.quiet)
		}
		if trigger {
			switch {
			case cur == nil:
				cur = &nelection{from: e.Time, byType: map[string]int64{}, causes: 1}
				all = append(all, cur)
			case cur.total == 0 || (isElectReq && !cur.quiet && !bug):
				cur.causes++
			default:
				closeAt(e)
				cur = &nelection{from: e.Time, byType: map[string]int64{}, causes: 1}
				all = append(all, cur)
			}
		}
		if e.Kind == history.KindMsg && e.What == history.MsgSend {
			if cur != nil && cur.quiet {
				el, at, ok := lastHanded(e.Src, i)
				if ok && el == cur && e.Time-at <= 20*int64(time.Millisecond) {
					cur.quiet = false
				} else {
					closeAt(e)
				}
			}
			if cur == nil {
				outside++
			} else {
				cur.total++
				cur.byType[e.MType]++
				cur.sends = append(cur.sends, i)
				owner[i] = cur
			}
		}
		if cur != nil {
			now := settledAfter(i+1) && inFlight(cur, i+1) <= 0
			if now && !cur.quiet {
				cur.quiet, cur.quietAt = true, e.Time
			} else if !now {
				cur.quiet = false
			}
		}
	}
	if cur != nil {
		if cur.quiet {
			cur.to, cur.settled = cur.quietAt, true
		} else {
			cur.to = naiveEnd(h)
		}
	}
	for _, el := range all {
		if el.total > 0 {
			list = append(list, el)
		}
	}
	return list, outside
}

// naiveComplexityVerdict judges elections against the bound.
func naiveComplexityVerdict(h *history.History, list []*nelection) Validity {
	for _, el := range list {
		if h.Meta.MessageBound > 0 && el.total > h.Meta.MessageBound {
			return False
		}
	}
	return True
}

// nintegrity is what the naive integrity checker counts.
type nintegrity struct {
	corrupted, deliveries, rejected, accepted, undecided, undelivered, unexplained int
}

// naiveIntegrity matches rejections with deliveries of corrupted messages
// by rescanning, and decides each unmatched delivery by replaying the
// history to its grace deadline. Bug: a rejection by a later incarnation
// of the receiver counts.
func naiveIntegrity(h *history.History, bug bool) nintegrity {
	var out nintegrity
	corrupt := map[int64]bool{}
	for _, e := range h.Events {
		if e.Kind == history.KindMsg && e.What == history.MsgCorrupt && !corrupt[e.Msg] {
			corrupt[e.Msg] = true
			out.corrupted++
		}
	}
	// dels are the positions of deliveries of corrupted copies: the first
	// delivery of a message to a node after a corrupt event of that
	// message to that node, with no delivery of it to that node between.
	var dels []int
	for i, e := range h.Events {
		if e.Kind != history.KindMsg || e.What != history.MsgDeliver {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			x := h.Events[j]
			if x.Kind != history.KindMsg || x.Msg != e.Msg || x.Dest != e.Dest {
				continue
			}
			if x.What == history.MsgCorrupt {
				dels = append(dels, i)
			}
			if x.What == history.MsgCorrupt || x.What == history.MsgDeliver {
				break
			}
		}
	}
	out.deliveries = len(dels)
	delivered := map[int64]bool{}
	for _, p := range dels {
		delivered[h.Events[p].Msg] = true
	}
	out.undelivered = out.corrupted - len(delivered)
	startsOf := func(node string, k int) int { return naiveNodes(h, k)[node].starts }
	matched := map[int]bool{}
	for i, e := range h.Events {
		if e.Kind != history.KindReport || e.What != history.ReportRejected {
			continue
		}
		found := -1
		for _, p := range dels {
			d := h.Events[p]
			if p > i || matched[p] || d.Dest != e.Node {
				continue
			}
			if !bug && startsOf(e.Node, p+1) != startsOf(e.Node, i+1) {
				continue
			}
			if e.Msg == 0 || e.Msg == d.Msg {
				found = p
				break
			}
		}
		if found < 0 {
			out.unexplained++
		} else {
			matched[found] = true
		}
	}
	end := h.Events[len(h.Events)-1].Time
	for _, p := range dels {
		if matched[p] {
			out.rejected++
			continue
		}
		d := h.Events[p]
		deadline := d.Time + int64(100*time.Millisecond)
		if deadline > end {
			out.undecided++
			continue
		}
		k := 0
		for k < len(h.Events) && h.Events[k].Time <= deadline {
			k++
		}
		s := naiveNodes(h, k)[d.Dest]
		if s.live && !s.paused && s.starts == startsOf(d.Dest, p+1) {
			out.accepted++
		} else {
			out.undecided++
		}
	}
	return out
}

// ntnode is a node's state in a naive replay of terms.
type ntnode struct {
	live   bool
	leader string
	term   *int64 // the term of its last leader report since its start
	// since is when its current claim began: the last time it came to
	// claim leadership, or claimed it in another term (or none).
	since  int64
	starts int
	// downClaim and downTerm are whether it claimed, and in which term,
	// when it last went down (for a planted bug).
	downClaim bool
	downTerm  *int64
}

func (s ntnode) claims(name string) bool { return s.live && s.leader == name }

// naiveTermNodes returns every node's state after the first k events of h.
func naiveTermNodes(h *history.History, k int) map[string]ntnode {
	st := map[string]ntnode{}
	for _, e := range h.Events[:k] {
		if e.Node == "" {
			continue
		}
		s := st[e.Node]
		switch {
		case e.Kind == history.KindProcess && e.What == history.ProcStart:
			st[e.Node] = ntnode{live: true, starts: s.starts + 1}
		case e.Kind == history.KindProcess && (e.What == history.ProcCrash || e.What == history.ProcExit || e.What == history.ProcStop):
			if s.live {
				st[e.Node] = ntnode{starts: s.starts, downClaim: s.leader == e.Node, downTerm: s.term}
			}
		case e.Kind == history.KindReport && e.What == history.ReportLeader && s.live:
			was, wasTerm := s.leader == e.Node, s.term
			s.leader, s.term = e.Value, e.Term
			if s.leader == e.Node && (!was || !naiveSameTerm(wasTerm, s.term)) {
				s.since = e.Time
			}
			st[e.Node] = s
		}
	}
	return st
}

func naiveSameTerm(a, b *int64) bool {
	switch {
	case a == nil && b == nil:
		return true
	case a == nil || b == nil:
		return false
	}
	return *a == *b
}

// naiveTermed reports whether any leader report from a live node carries a
// term.
func naiveTermed(h *history.History) bool {
	for i, e := range h.Events {
		if e.Kind == history.KindReport && e.What == history.ReportLeader && e.Term != nil && naiveTermNodes(h, i)[e.Node].live {
			return true
		}
	}
	return false
}

// nterms is what the naive one-leader-per-term checker finds.
type nterms struct {
	valid              Validity
	claims, untermed   int // claims with a term, and without
	terms, contested   int
	firstNodes         []string // the first violation's claimants
	firstFrom, firstTo int64    // when the first claimed, when the second did
	contestedBy        map[int64][]string
}

// naiveOneLeaderPerTerm looks at every leader report: one that names its
// own node, from a live node, is a claim of its term; a claim by a node
// that did not claim that term just before begins a new claim. A term is
// contested once claims by two nodes name it. Bug: a node restarted under
// the same id counts as another claimant.
func naiveOneLeaderPerTerm(h *history.History, bug bool) nterms {
	out := nterms{valid: True}
	claimants := map[int64][]string{}
	latest := map[string]int64{} // claimant key+term → when its latest claim began
	for i, e := range h.Events {
		if e.Kind != history.KindReport || e.What != history.ReportLeader || e.Value != e.Node {
			continue
		}
		before := naiveTermNodes(h, i)[e.Node]
		if !before.live {
			continue
		}
		if before.leader == e.Node && naiveSameTerm(before.term, e.Term) {
			continue // the claim goes on
		}
		if e.Term == nil {
			out.untermed++
			continue
		}
		out.claims++
		t := *e.Term
		key := e.Node
		if bug {
			key = fmt.Sprintf("%s#%d", e.Node, before.starts)
		}
		if !slices.Contains(claimants[t], key) {
			claimants[t] = append(claimants[t], key)
			if len(claimants[t]) == 2 {
				out.contested++
				if out.firstNodes == nil {
					first := claimants[t][0]
					out.firstNodes = []string{strings.Split(first, "#")[0], e.Node}
					out.firstFrom, out.firstTo = latest[fmt.Sprint(first, "/", t)], e.Time
				}
			}
		}
		latest[fmt.Sprint(key, "/", t)] = e.Time
	}
	out.terms = len(claimants)
	out.contestedBy = map[int64][]string{}
	for t, keys := range claimants {
		if len(keys) >= 2 {
			for _, k := range keys {
				out.contestedBy[t] = append(out.contestedBy[t], strings.Split(k, "#")[0])
			}
		}
	}
	switch {
	case !naiveTermed(h):
		out.valid = Unknown
	case out.contested > 0:
		out.valid = False
	}
	return out
}

// nstale is what the naive stale-leader checker finds.
type nstale struct {
	valid         Validity
	longest       int64
	stale, over   int
	windows       map[string]int64 // by claim: node and when it began
	firsts, lasts map[string]int64
}

// naiveStaleLeader samples the state between every two successive distinct
// times of h: a live node that claims leadership in term t is stale there
// when another live node claims a higher term, and the time adds to the
// window of its claim, named by the node and when the claim began. Bug:
// a node that went down while claiming goes on claiming.
func naiveStaleLeader(h *history.History, bug bool) nstale {
	out := nstale{valid: True, windows: map[string]int64{}, firsts: map[string]int64{}, lasts: map[string]int64{}}
	if !naiveTermed(h) {
		out.valid = Unknown
		return out
	}
	n := len(h.Events)
	for k := 1; k < n; k++ {
		t, next := h.Events[k-1].Time, h.Events[k].Time
		if next == t {
			continue // not the last event at this time
		}
		st := naiveTermNodes(h, k)
		// claimed returns the term a node claims, and whether it claims
		// one; with the bug, a node that went down claiming goes on.
		claimed := func(name string, s ntnode) (int64, bool) {
			switch {
			case s.claims(name) && s.term != nil:
				return *s.term, true
			case bug && !s.live && s.downClaim && s.downTerm != nil:
				return *s.downTerm, true
			}
			return 0, false
		}
		for a, sa := range st {
			ta, ok := claimed(a, sa)
			if !ok {
				continue
			}
			stale := false
			for b, sb := range st {
				if tb, ok := claimed(b, sb); ok && b != a && tb > ta {
					stale = true
				}
			}
			if !stale {
				continue
			}
			key := fmt.Sprintf("%s@%d", a, sa.since)
			if out.windows[key] == 0 {
				out.firsts[key] = t
			}
			out.windows[key] += next - t
			out.lasts[key] = next
		}
	}
	for _, w := range out.windows {
		out.stale++
		out.longest = max(out.longest, w)
		if h.Meta.StaleLeader > 0 && w > h.Meta.StaleLeader {
			out.over++
		}
	}
	if out.over > 0 {
		out.valid = False
	}
	return out
}
