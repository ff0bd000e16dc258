package explore

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// Signature is how a run failed, in a form that two runs failing for the
// same cause share, neither more nor less: the first violation's check and
// the kind of violation it found, the cause that the history shows for it
// (at start-up, restarted under the same id, paused, cut off) and the
// faults in force when it began (or none). The checks that also failed
// are no part of it: one failover that shows as two-leaders alone in one
// run and as two-leaders and lost-writes in the next (the heal came early
// enough for the final reads to miss the old master's writes) is one
// failure. It is "" for a run as expected with no violation.
//
//	two-leaders: nodes both believed they were the leader (at start-up, before any fault)
//	two-leaders: nodes both believed they were the leader (restarted under the same id; no fault in force)
//	two-leaders: nodes both believed they were the leader (cut off; in force: partition)
//
// The first violation is that of the check nearest its cause: a check of
// the run's moments (who led, who held the lock, what an operation
// returned) before a check of what the run came to (agreement, validity,
// termination, eventual-leadership, mutex-progress, lost-writes: judged
// at or after the heal, they fail because of what went wrong before);
// among equals, the one whose violation began first (its interval, else
// its first evidence), and then the one that ran first.
//
// The kind is the headline of the check's explanation (up to its first
// colon or semicolon) in words, with what differs from one run of the
// same failure to the next taken out: node names ("nodes", "a node"),
// times, durations, counts, fault names and asides in parentheses (Kind).
// The cause and the faults come from the history, about the violation's
// nodes at the moment it began (causeOf); a nil history gives the kind
// alone.
//
// A run that failed without a violation says so: "CHECK: unknown" for a
// check that could not decide, "no violation: CHECK held (a violation was
// expected)" for a violation the scenario expects and the run did not
// show, "no violation (one was expected)" for a scenario that expects any.
//
// Shrinking keeps a run's signature; a campaign and a merge of sweeps
// count failures by it.
func Signature(res *verdict.Results, h *history.History) string {
	if res == nil || (res.Outcome == verdict.AsExpected && res.Valid != checks.False) {
		return ""
	}
	if name, ok := firstViolation(res, h); ok {
		c := res.Checks[name]
		s := name + ": " + Kind(c.Explanation)
		if h != nil {
			s += " (" + causeOf(h, name, located(name, c)).words + ")"
		}
		return s
	}
	for _, name := range res.Order {
		if res.Checks[name].Valid == checks.Unknown {
			return name + ": unknown"
		}
	}
	for _, x := range res.Exits {
		if !x.Expected {
			// A process's own exit is a finding of its own, whatever the
			// checks said: its signature is the process and how it ended.
			return "exit: " + x.Process + " exited on its own (" + x.Status + ")"
		}
	}
	var held []string
	for _, name := range res.Expected.Violations {
		if c, ok := res.Checks[name]; ok && c.Valid == checks.True {
			held = append(held, name)
		}
	}
	switch {
	case len(held) == 1:
		return "no violation: " + held[0] + " held (a violation was expected)"
	case len(held) > 1:
		return "no violation: " + strings.Join(held, ", ") + " held (violations were expected)"
	}
	return "no violation (one was expected)"
}

// Cause is one cause of a run's failure: its signature, and the detail
// that the signature leaves out and a person reading the finding wants
// (how long after which fault of which nodes it began), "" for none.
type Cause struct {
	Signature, Detail string
}

// Causes are the distinct causes of a run's violations, the first
// violation's (Signature) first: then each violation of a check of the
// run's moments (every overlap two-leaders found, not only its first: a
// start-up overlap does not hide a later one after a fault) whose
// signature is not among them yet, in the order of the checks; and
// validity's, when its cause is none of theirs (a wrong leader at the end
// with nothing to explain it that explains the others). The other checks
// of what a run came to (agreement, termination, lost-writes…) fail
// because of what went wrong before and are no cause of their own. Nil
// for a run with no violation, or no history.
func Causes(res *verdict.Results, h *history.History) []Cause {
	first, ok := firstViolation(res, h)
	if h == nil || !ok {
		return nil
	}
	var out []Cause
	words := map[string]bool{}
	add := func(name string, c checks.Result) {
		cs := causeOf(h, name, located(name, c))
		sig := name + ": " + Kind(c.Explanation) + " (" + cs.words + ")"
		if !slices.ContainsFunc(out, func(x Cause) bool { return x.Signature == sig }) {
			out = append(out, Cause{Signature: sig, Detail: cs.detail})
			words[cs.words] = true
		}
	}
	add(first, res.Checks[first])
	for _, name := range res.Order {
		c := res.Checks[name]
		if c.Valid != checks.False || outcomeChecks[name] {
			continue
		}
		if len(c.Violations) == 0 {
			add(name, c)
		}
		for _, v := range c.Violations {
			iv := v.Interval
			add(name, checks.Result{Name: name, Valid: checks.False, Nodes: v.Nodes, Interval: &iv, Evidence: v.Evidence, Explanation: v.Explanation})
		}
	}
	if c, ok := res.Checks["validity"]; ok && c.Valid == checks.False && first != "validity" && !words[causeOf(h, "validity", located("validity", c)).words] {
		add("validity", c)
	}
	return out
}

// startUpCause is the cause of a violation before any fault.
const startUpCause = "(at start-up, before any fault)"

// StartUp reports whether a signature is that of an overlap of leaders
// at start-up, before any fault: of the nodes' own start, which no
// schedule drew (their processes started at different moments), a
// finding apart from those after faults. A wrong leader elected at
// start-up (validity) is the system's finding.
func StartUp(sig string) bool {
	return strings.HasPrefix(sig, "two-leaders: ") && strings.HasSuffix(sig, " "+startUpCause)
}

// Violated reports whether a signature is a violation's, not that of a
// run that failed without one (a check unknown, an expected violation
// missing): shrinking and its measures keep violations only.
func Violated(sig string) bool {
	if sig == "" || strings.HasPrefix(sig, "no violation") {
		return false
	}
	name, rest, _ := strings.Cut(sig, ": ")
	return name != "" && rest != "unknown"
}

// outcomeChecks are the checks of what a run came to, judged at or after
// the heal: they fail because of what went wrong before, so a violation
// of another check, when there is one, is the first.
var outcomeChecks = map[string]bool{
	"agreement": true, "validity": true, "termination": true, "eventual-leadership": true,
	"mutex-progress": true, "lost-writes": true,
}

// firstViolation is the check of a run's first violation (see
// Signature); false when no check found one. A wrong leader that validity
// finds at the end, believed since before any other violation began, is
// no consequence of one: validity is then a check of that moment, the
// wrong leader's (wrongSince), and is first when it came first.
func firstViolation(res *verdict.Results, h *history.History) (string, bool) {
	best, bestTier, bestAt := "", 2, int64(math.MaxInt64)
	for _, name := range res.Order {
		c := res.Checks[name]
		if c.Valid != checks.False {
			continue
		}
		tier, at := 0, violationStart(c)
		if outcomeChecks[name] {
			tier = 1
		}
		if name == "validity" && h != nil {
			if since, ok := wrongSince(c); ok && since < firstMoment(res) {
				tier, at = 0, since
			}
		}
		if tier < bestTier || (tier == bestTier && at < bestAt) {
			best, bestTier, bestAt = name, tier, at
		}
	}
	return best, best != ""
}

// firstMoment is when the first violation of a check of the run's
// moments began (math.MaxInt64 for none).
func firstMoment(res *verdict.Results) int64 {
	first := int64(math.MaxInt64)
	for _, name := range res.Order {
		if c := res.Checks[name]; c.Valid == checks.False && !outcomeChecks[name] {
			first = min(first, violationStart(c))
		}
	}
	return first
}

// wrongSince is when validity's wrong leader became wrong: its evidence
// is the last report of a node that believes in it (held from then to
// the end) and what made it wrong (the start of the live node that should
// lead, the leader's crash), so the latest of them; false when validity
// gives no evidence.
func wrongSince(c checks.Result) (int64, bool) {
	if len(c.Evidence) == 0 {
		return 0, false
	}
	since := int64(0)
	for _, e := range c.Evidence {
		since = max(since, e.Time)
	}
	return since, true
}

// located is a check's result with its interval from when its violation
// began, for its cause: validity's wrong leader from when it became
// wrong (wrongSince), not the end at which validity judged it.
func located(name string, c checks.Result) checks.Result {
	if since, ok := wrongSince(c); ok && name == "validity" && c.Interval != nil {
		c.Interval = &checks.Interval{From: since, To: c.Interval.To}
	}
	return c
}

// violationStart is when a check's violation began: its interval's start,
// else its first evidence's time (math.MaxInt64 for neither).
func violationStart(c checks.Result) int64 {
	switch {
	case c.Interval != nil:
		return c.Interval.From
	case len(c.Evidence) > 0:
		return c.Evidence[0].Time
	}
	return math.MaxInt64
}

// cause is what the history shows of a violation's cause: its words, in
// a signature, and its detail, for the person who reads the finding (how
// long after which fault of which nodes it began), which differs from one
// run of the same failure to the next.
type cause struct {
	words, detail string
}

// causeOf says what the history shows of a violation's cause, as the
// explanations name it, and the faults in force when it began: "at
// start-up, before any fault" when no fault had begun by then; else the
// causes that hold for one of the nodes it involves (involved) (restarted under the
// same id: its process was one started again after it went down;
// paused: it was paused at some moment of the violation; cut off: a
// partition in force when it began cut it from others), then the kinds
// of fault in force that hit one of its nodes, or every node or link
// ("in force: partition, pause"), or, with none in force, the fault of
// its nodes that ended last, when it ended within the run's recovery
// bound (the termination bound) before the violation began ("a
// partition healed just before": the system was still recovering from
// it; not a crash, whose end is a restart, said as such), or "no fault
// in force". Kinds, not
// names or nodes: the same cause hits other nodes at other times from one
// run to the next; and not a fault of a node the violation is not about
// (a follower crashed while the leader was cut off), no part of its
// cause.
//
// Lost writes are lost by what came after they were acknowledged: for
// lost-writes, a fault that began within checks.LostWindowGap after the
// last of them was acknowledged (as the check's own windows say: a power
// failure that loses what was just acknowledged) moves the violation's
// beginning to that fault's start, the first such.
func causeOf(h *history.History, check string, c checks.Result) cause {
	from := violationStart(c)
	to := from
	if c.Interval != nil {
		to = max(to, c.Interval.To)
		if check == "lost-writes" {
			if at, ok := faultBegun(h, from, c.Interval.To+checks.LostWindowGap); ok {
				from, to = at, max(to, at)
			}
		}
	}
	if from == math.MaxInt64 {
		from, to = h.End(), h.End()
	}
	type fault struct {
		kind  string
		nodes []string
	}
	open := map[string]fault{}
	began := false
	nodes := involved(h, c, from)
	hits := func(f fault) bool {
		hit := len(nodes) == 0 || len(f.nodes) == 0 // a violation of no node, a fault of every node or link
		for _, n := range f.nodes {
			hit = hit || nodes[n]
		}
		return hit
	}
	var healed fault // the last fault of the violation's nodes that ended before it began
	healedAt := int64(-1)
	down := map[string]bool{}      // a node whose process went down by then
	again := map[string]bool{}     // a node started again after going down
	pausedNow := map[string]bool{} // a node paused when the violation began
	pausedLater := false           // a node paused during the violation
	for i := range h.Events {
		e := &h.Events[i]
		if e.Time > to {
			break
		}
		switch {
		case e.Kind == history.KindNemesis && e.Time <= from:
			id := e.Name
			if id == "" {
				id = e.What + " " + strings.Join(e.Nodes, ",")
			}
			if e.Phase == history.PhaseEnd {
				if f, ok := open[id]; ok && hits(f) && f.kind != "crash" {
					healed, healedAt = f, e.Time
				}
				delete(open, id)
				continue
			}
			began = true
			if lastsInForce(e) {
				open[id] = fault{kind: e.What, nodes: e.Nodes}
			}
		case e.Kind == history.KindProcess && e.Time <= from && (e.What == history.ProcStart || e.What == history.ProcResume):
			// A node up again is no longer crashed, one running no longer
			// paused: the fault is over for it, whatever ended it.
			for id, f := range open {
				if f.kind == "crash" || f.kind == "pause" {
					f.nodes = slices.DeleteFunc(slices.Clone(f.nodes), func(n string) bool { return n == e.Node })
					if len(f.nodes) == 0 {
						delete(open, id)
					} else {
						open[id] = f
					}
				}
			}
		}
		if e.Kind == history.KindProcess && nodes[e.Node] {
			n, before := e.Node, e.Time <= from
			switch e.What {
			case history.ProcPause:
				pausedNow[n] = pausedNow[n] || before
				pausedLater = pausedLater || !before
			case history.ProcResume:
				if before {
					pausedNow[n] = false
				}
			case history.ProcCrash, history.ProcExit, history.ProcStop:
				if before {
					down[n], pausedNow[n] = true, false
				}
			case history.ProcStart:
				if before {
					again[n] = again[n] || down[n]
					pausedNow[n] = false
				}
			}
		}
	}
	restarted, paused, cut := false, pausedLater, false
	for n := range nodes {
		restarted = restarted || again[n]
		paused = paused || pausedNow[n]
	}
	var kinds []string
	for _, f := range open {
		if hits(f) && !slices.Contains(kinds, f.kind) {
			kinds = append(kinds, f.kind)
		}
		if f.kind == "partition" {
			if len(f.nodes) == 0 {
				cut = cut || len(nodes) > 0 // halves, majorities: every node is cut from some
			}
			for _, n := range f.nodes {
				cut = cut || nodes[n]
			}
		}
	}
	if !began {
		return cause{words: "at start-up, before any fault"}
	}
	var causes []string
	for _, x := range []struct {
		ok   bool
		word string
	}{{restarted, "restarted under the same id"}, {paused, "paused"}, {cut, "cut off"}} {
		if x.ok {
			causes = append(causes, x.word)
		}
	}
	var out cause
	faults := "no fault in force"
	switch {
	case len(kinds) > 0:
		slices.Sort(kinds)
		faults = "in force: " + strings.Join(kinds, ", ")
	case healedAt >= 0 && from-healedAt <= recoveryBound(h):
		faults = article(healed.kind) + " " + endedVerb(healed.kind) + " just before"
		of := ""
		if len(healed.nodes) > 0 {
			of = " of " + strings.Join(healed.nodes, ", ")
		}
		out.detail = fmt.Sprintf("it began %s after %s%s %s", time.Duration(from-healedAt), article(healed.kind), of, endedVerb(healed.kind))
	}
	out.words = faults
	if len(causes) > 0 {
		out.words = strings.Join(causes, ", ") + "; " + faults
	}
	return out
}

// recoveryBound is how long after a fault ends the system may still be
// recovering from it: the run's termination bound (every live node
// believes in a leader within it after the last disruption; a scenario's
// recovery window unless it gives one), -1 when the history gives none
// (a hand-made one): then no fault is said to have just ended.
func recoveryBound(h *history.History) int64 {
	if h.Meta.Termination > 0 {
		return h.Meta.Termination
	}
	return -1
}

// endedVerb says that a fault of kind ended: a partition "healed", a
// pause "ended".
func endedVerb(kind string) string {
	if kind == "partition" {
		return "healed"
	}
	return "ended"
}

// article is a kind of fault with its article: "a partition".
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// faultBegun is the start of the first fault that began in (from, to].
func faultBegun(h *history.History, from, to int64) (int64, bool) {
	for i := range h.Events {
		e := &h.Events[i]
		if e.Time > to {
			break
		}
		if e.Kind == history.KindNemesis && e.Phase != history.PhaseEnd && e.Time > from {
			return e.Time, true
		}
	}
	return 0, false
}

// involved are the nodes a violation is about: those its check names, the
// nodes of its evidence, and the leaders believed in when it began (the
// coordinator that granted a lock twice, the leader a stale read went
// past): a check of clients names the nodes they went through, not the
// node whose amnesia or pause let it happen.
func involved(h *history.History, c checks.Result, from int64) map[string]bool {
	nodes := map[string]bool{}
	for _, n := range c.Nodes {
		nodes[n] = true
	}
	for _, e := range c.Evidence {
		if e.Node != "" {
			nodes[e.Node] = true
		}
	}
	belief := map[string]string{}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Time > from {
			break
		}
		if e.Kind == history.KindReport && e.What == history.ReportLeader {
			belief[e.Node] = e.Value
		}
	}
	for _, leader := range belief {
		if leader != "" {
			nodes[leader] = true
		}
	}
	return nodes
}

// lastsInForce reports whether a nemesis start stays in force until its
// end event: restarts, replacements, resumes and timely links act at an
// instant and have none.
func lastsInForce(e *history.Event) bool {
	switch e.What {
	case "restart", "replace", "resume", "timely":
		return false
	}
	return true
}

var (
	faultName = regexp.MustCompile(`\bfaults\[\d+\](?:#\d+)?`)
	nodeName  = regexp.MustCompile(`\bn\d+\b`)
	nodeList  = regexp.MustCompile(`N(?:, N)*(?:,? and N)?`)
	timeLike  = regexp.MustCompile(`[-+]?\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)\b`)
	number    = regexp.MustCompile(`[-+]?\d+(?:\.\d+)?%?`)
	timeWords = regexp.MustCompile(`\b(?:from|to|at|for|since|after|until|within|by|before)\s+T\b|\bT\b`)
	spaces    = regexp.MustCompile(`\s+`)
	someOf    = regexp.MustCompile(`# of (?:the )?# `)
	counted   = regexp.MustCompile(`# (\w+?)s?\b`)
	numbered  = regexp.MustCompile(`\b(\w+?)s? #`)
	// acknowledged is lost-writes' clause of when the lost writes were
	// acknowledged and while which faults: the cause's business.
	acknowledged = regexp.MustCompile(`, acknowledged\b.*$`)
	whileFault   = regexp.MustCompile(`,? (?:while|during) a fault\b.*$`)
	verbs        = strings.NewReplacer(" is ", " are ", " was ", " were ")
	// oneSubject undoes verbs after a subject that stays one: "n3 is
	// live" is "a node is live", not "a node are live".
	oneSubject = regexp.MustCompile(`\b(a node|a fault)\s+(are|were)\b`)
)

// Kind is the kind of violation an explanation describes, in words: its
// headline with node names, times, counts, fault names and asides taken
// out (see Signature). "n5 and n4 both believed they were the leader
// from 0.309s to 0.310s (819µs)" and "n4 and n3 both believed they were
// the leader at 0.120s, for 60µs" are both "nodes both believed they were
// the leader"; "the 16 operations are not linearizable against a lock"
// and "the 1 operation is not …" both "the operations are not
// linearizable against a lock".
func Kind(explanation string) string {
	s := explanation
	if i := strings.Index(s, ": "); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "; "); i >= 0 {
		s = s[:i]
	}
	s = dropParens(s)
	s = faultName.ReplaceAllString(s, "a fault")
	s = nodeName.ReplaceAllString(s, "N")
	s = nodeList.ReplaceAllStringFunc(s, func(m string) string {
		if m == "N" {
			return "a node"
		}
		return "nodes"
	})
	s = timeLike.ReplaceAllString(s, "T")
	s = number.ReplaceAllString(s, "#")
	s = timeWords.ReplaceAllString(s, "")
	s = acknowledged.ReplaceAllString(s, "")
	s = whileFault.ReplaceAllString(s, "")
	s = someOf.ReplaceAllString(s, "some of the ")
	s = counted.ReplaceAllString(s, "${1}s")
	s = numbered.ReplaceAllString(s, "${1}s")
	s = strings.ReplaceAll(s, "#", "")
	s = verbs.Replace(" " + s + " ")
	s = oneSubject.ReplaceAllStringFunc(s, func(m string) string {
		sub := oneSubject.FindStringSubmatch(m)
		subject, verb := sub[1], sub[2]
		if verb == "are" {
			return subject + " is"
		}
		return subject + " was"
	})
	s = spaces.ReplaceAllString(s, " ")
	s = strings.ReplaceAll(s, " ,", ",")
	s = strings.ReplaceAll(s, ",,", ",")
	return strings.Trim(s, " ,.")
}

// dropParens removes every parenthesised aside, nested ones included, and
// an aside left open at the end.
func dropParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
