package checks

import (
	"fmt"
	"strings"
	"sync"

	"github.com/coupharness/coup/history"
)

// Check is one named check.
type Check struct {
	// Name is how scenarios and the command line name the check.
	Name string
	// Doc is one sentence saying what the check requires.
	Doc string
	// Run judges a history. It is pure: see the package documentation.
	Run func(h *history.History) Result
}

// ElectionDefaults are the checks a leader-election scenario runs when it
// names none.
var ElectionDefaults = []string{"two-leaders", "agreement", "validity", "termination"}

// Defaults returns a copy of the checks a scenario runs when it names
// none, by the kind of problem its nodes solve: "mutex" (mutual
// exclusion), "lin-kv" (a linearizable key-value store), "set" (a set
// that grows), "echo", or anything else (leader election).
func Defaults(kind string) []string {
	switch kind {
	case "mutex":
		return append([]string(nil), MutexDefaults...)
	case "lin-kv":
		return append([]string(nil), KVDefaults...)
	case "echo":
		return append([]string(nil), EchoDefaults...)
	case "set":
		return append([]string(nil), SetDefaults...)
	}
	return append([]string(nil), ElectionDefaults...)
}

// registry holds every check, in the order All returns them.
var registry = []Check{
	newCheck("two-leaders", "At no instant do two live nodes each believe they are the leader.", twoLeaders),
	newCheck("agreement", "At the end of the history, no two live nodes believe in different leaders.", agreement),
	newCheck("validity", "At the end of the history, every leader a live node believes in is live and, for max-id (min-id) algorithms, has the highest (smallest) id among live nodes.", validity),
	newCheck("termination", "Within the termination bound after the last disruption, every live node believes in some leader.", termination),
	newCheck("one-leader-per-term", "No two distinct nodes ever claim leadership in the same term (unknown when no leader report carries a term).", oneLeaderPerTerm),
	newCheck("stale-leader", "How long a leader's claim overlapped another live node's claim in a higher term (a figure); false only past the scenario's bound.", staleLeader),
	newCheck("eventual-leadership", "Within the stabilisation bound after GST (or the start), every correct node comes to trust the same correct node and keeps trusting it until the end of the run.", eventualLeadership),
	newCheck("complexity", "No election costs more messages than the algorithm's bound for one election.", complexity),
	newCheck("integrity", "Every message the nemesis corrupted was rejected by its receiver or never delivered.", integrity),
	newCheck("fencing", "Every lock grant that began after another had been granted carries a higher fencing token, so that a resource that refuses a token lower than one it has seen refuses a stale holder (unknown when no grant carries a token).", fencing),
	newCheck("mutex-linearizable", "The clients' acquire and release operations are linearizable against a lock (porcupine); a timed-out operation may or may not have taken effect.", mutexLinearizable),
	newCheck("mutex-cs", "At no instant are two live nodes in the critical section, by their own reports.", mutexCS),
	newCheck("mutex-progress", "Every acquire invoked at a live node after the last nemesis event is granted within the progress bound.", mutexProgress),
	newCheck("mutex-fairness", "How often a later request for the critical section was granted before an earlier one (a figure).", mutexFairness),
	newCheck("mutex-measures", "Messages per entry into the critical section, client delay and synchronisation delay (figures).", mutexMeasures),
	newCheck("kv-linearizable", "The clients' reads, writes and compare-and-sets are linearizable against a key-value store, key by key (porcupine); a timed-out operation may or may not have taken effect.", kvLinearizable),
	newCheck("echo", "Every echo that returned ok came back with the payload it was sent with.", echo),
	newCheck("lost-writes", "Every acknowledged add (set) or write (lin-kv) that the final reads after the heal could see is there: none is lost (a count of lost, recovered and present writes, with the windows in which the lost ones were acknowledged).", lostWrites),
}

// All returns every check, in a fixed order.
func All() []Check {
	return append([]Check(nil), registry...)
}

// Lookup returns the check with the given name.
func Lookup(name string) (Check, bool) {
	for _, c := range registry {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// Run runs the named checks on h, in the order given, and returns each
// result and their composed verdict. An unknown name is an error, reported
// before any check runs.
func Run(h *history.History, names []string) ([]Result, Validity, error) {
	cs := make([]Check, 0, len(names))
	for _, name := range names {
		c, ok := Lookup(name)
		if !ok {
			return nil, Unknown, fmt.Errorf("unknown check %q (known: %s)", name, strings.Join(checkNames(), ", "))
		}
		cs = append(cs, c)
	}
	results := make([]Result, 0, len(cs))
	vs := make([]Validity, 0, len(cs))
	for _, c := range cs {
		r := c.Run(h)
		results = append(results, r)
		vs = append(vs, r.Valid)
	}
	return results, Compose(vs...), nil
}

func checkNames() []string {
	names := make([]string, len(registry))
	for i, c := range registry {
		names[i] = c.Name
	}
	return names
}

// newCheck wraps a check function with what every check does alike: it
// refuses a history whose time runs backwards, names the result and says
// how many unparsable lines were skipped.
func newCheck(name, doc string, fn func(h *history.History) Result) Check {
	run := func(h *history.History) Result {
		var r Result
		if prev, e, ok := backwardsOnce(h); ok {
			r = Result{
				Valid: Unknown,
				Explanation: fmt.Sprintf("the history's time runs backwards at event %d (%s after %s), so it cannot be judged; it was not written by a coup recorder or was edited",
					e.Index, fmtTime(e.Time), fmtTime(prev.Time)),
				Evidence: []history.Event{prev, e},
			}
		} else if e := unstarted(h); e != nil {
			r = Result{
				Valid: Unknown,
				Explanation: fmt.Sprintf("%s reported a leader at %s but the history has no process start event, so no node is known to be live; record process events",
					e.Node, fmtTime(e.Time)),
				Evidence: []history.Event{*e},
			}
		} else {
			r = fn(h)
		}
		r.Name = name
		if n := len(h.Bad); n > 0 {
			r.figure("skipped_lines", n)
			where := fmt.Sprintf("line %d", h.Bad[0].Line)
			if n > 1 {
				where = "the first at " + where
			}
			r.Explanation = strings.TrimSuffix(r.Explanation, ".") +
				fmt.Sprintf("; %s of the history could not be parsed and %s skipped (%s)",
					plural(n, "line"), isAre(n, "was", "were"), where)
		}
		return r
	}
	return Check{Name: name, Doc: doc, Run: run}
}

// backwardsOnce is backwards, remembered for the last history asked about,
// so that the checks of one run do not each scan its events again.
func backwardsOnce(h *history.History) (prev, e history.Event, ok bool) {
	lastScan.mu.Lock()
	defer lastScan.mu.Unlock()
	if s := &lastScan; s.h != h || s.n != h.Len() {
		s.h, s.n = h, h.Len()
		s.prev, s.e, s.ok = backwards(h)
	}
	return lastScan.prev, lastScan.e, lastScan.ok
}

var lastScan struct {
	mu      sync.Mutex
	h       *history.History
	n       int
	prev, e history.Event
	ok      bool
}

// backwards returns the first event whose time is before its
// predecessor's, with that predecessor, if time ever runs backwards.
func backwards(h *history.History) (prev, e history.Event, ok bool) {
	k, last := 0, int64(0)
	for x := range h.All() {
		if k > 0 && x.Time < last {
			ok = true
			break
		}
		last = x.Time
		k++
	}
	if !ok {
		return prev, e, false
	}
	i := 0
	for x := range h.All() {
		switch i {
		case k - 1:
			prev = *x
		case k:
			return prev, *x, true
		}
		i++
	}
	return prev, e, false
}

// unstarted returns the first leader report of a history that has no
// process start event at all, or nil. Such a history was not written by a
// coup recorder, and every node in it would count as dead.
func unstarted(h *history.History) *history.Event {
	var first *history.Event
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindProcess && e.What == history.ProcStart:
			return nil
		case first == nil && e.Kind == history.KindReport && e.What == history.ReportLeader:
			first = e
		}
	}
	return first
}
