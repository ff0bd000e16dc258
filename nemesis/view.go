package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/coupharness/coup/history"
)

// procState is what the nemesis believes of a node's process.
type procState int

const (
	live procState = iota
	paused
	down
)

func (s procState) String() string {
	return [...]string{"live", "paused", "down"}[s]
}

// view is the nemesis's picture of the cluster: the history's process
// events and leader reports, and its own process actions (applied at once,
// so that two actions in a row see each other before the history records
// them). Every node is live at the run's zero.
type view struct {
	ring  []string
	state map[string]procState
	// claim holds, for each live node whose latest leader report names
	// itself, the sequence number of that report.
	claim map[string]int64
	seq   int64
	// fresh marks the nodes the nemesis has restarted whose new start the
	// history has not shown yet: their reports still in the queue come
	// from the old process and are ignored.
	fresh map[string]bool
	// grant holds, for each client process whose latest lock operation
	// is an acquire that returned ok, the sequence number of that ok.
	grant map[string]int64
}

func newView(ring []string) *view {
	v := &view{ring: ring, state: map[string]procState{}, claim: map[string]int64{}, fresh: map[string]bool{}, grant: map[string]int64{}}
	for _, n := range ring {
		v.state[n] = live
	}
	return v
}

// observe updates the view with a history event.
func (v *view) observe(e *history.Event) {
	if e.Kind == history.KindOp {
		v.observeLock(e)
		return
	}
	if e.Node == "" {
		return
	}
	switch e.Kind {
	case history.KindProcess:
		switch e.What {
		case history.ProcStart:
			v.state[e.Node] = live
			delete(v.claim, e.Node)
			delete(v.fresh, e.Node)
		case history.ProcCrash, history.ProcExit, history.ProcStop:
			if !v.fresh[e.Node] { // the end of the old process, restarted since
				v.state[e.Node] = down
			}
			delete(v.claim, e.Node)
		case history.ProcPause:
			if v.state[e.Node] == live {
				v.state[e.Node] = paused
			}
		case history.ProcResume:
			if v.state[e.Node] == paused {
				v.state[e.Node] = live
			}
		}
	case history.KindReport:
		if e.What != history.ReportLeader || v.state[e.Node] == down || v.fresh[e.Node] {
			return
		}
		if e.Value == e.Node {
			v.seq++
			v.claim[e.Node] = v.seq
		} else {
			delete(v.claim, e.Node)
		}
	}
}

// leader is the live node that most recently reported itself leader and
// has not reported another since; "" when there is none.
func (v *view) leader() string {
	best, at := "", int64(0)
	for _, n := range v.ring {
		if s, ok := v.claim[n]; ok && v.state[n] != down && s > at {
			best, at = n, s
		}
	}
	return best
}

// candidates are the nodes a fault of kind k may hit now, in ring order.
func (v *view) candidates(k Kind) []string {
	var want func(procState) bool
	switch k {
	case Crash, Replace:
		want = func(s procState) bool { return s != down }
	case Pause:
		want = func(s procState) bool { return s == live }
	case Restart:
		want = func(s procState) bool { return s == down }
	case Resume:
		want = func(s procState) bool { return s == paused }
	default:
		return v.ring
	}
	var out []string
	for _, n := range v.ring {
		if want(v.state[n]) {
			out = append(out, n)
		}
	}
	return out
}

// resolve chooses the nodes a fault of kind k with target t hits now. It
// returns no nodes and a reason when there is none to hit.
func (v *view) resolve(t Target, k Kind, rng *rand.Rand) ([]string, string) {
	cands := v.candidates(k)
	n := len(v.ring)
	pickRandom := func(size int) []string {
		if size > len(cands) {
			size = len(cands)
		}
		return inRing(v.ring, shuffle(cands, rng)[:size])
	}
	var out []string
	switch t.Pick {
	case "":
		for _, x := range t.Nodes {
			if slices.Contains(cands, x) {
				out = append(out, x)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Sprintf("no target: %v %s", t.Nodes, v.describe(t.Nodes))
		}
		return out, ""
	case Leader:
		l := v.leader()
		if l == "" {
			return nil, "no target: no live node believes it is the leader"
		}
		if !slices.Contains(cands, l) {
			return nil, fmt.Sprintf("no target: the leader %s is %s", l, v.state[l])
		}
		return []string{l}, ""
	case Follower:
		l := v.leader()
		if l == "" {
			return nil, "no target: no live node believes it is the leader, so none follows"
		}
		cands = slices.DeleteFunc(slices.Clone(cands), func(x string) bool { return x == l })
		out = pickRandom(1)
	case Holder:
		h := v.holder()
		if h == "" {
			return nil, "no target: no client holds the lock"
		}
		if v.state[h] != live {
			return nil, fmt.Sprintf("no target: the holder %s is %s", h, v.state[h])
		}
		return []string{h}, ""
	case All:
		out = append(out, cands...)
	case One:
		out = pickRandom(1)
	case Minority:
		out = pickRandom((n - 1) / 2)
	case Majority:
		out = pickRandom(n/2 + 1)
	case Random:
		if len(cands) > 0 {
			out = pickRandom(1 + rng.IntN(len(cands)))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("no target: no %s node to pick %s from", candidateWord(k), t.Pick)
	}
	return out, ""
}

func (v *view) describe(nodes []string) string {
	var s []string
	for _, n := range nodes {
		s = append(s, n+" is "+v.state[n].String())
	}
	return fmt.Sprint(s)
}

func candidateWord(k Kind) string {
	switch k {
	case Crash, Replace:
		return "live"
	case Pause:
		return "running"
	case Restart:
		return "down"
	case Resume:
		return "paused"
	}
	return ""
}

// act updates the view with a process action the nemesis issues, before
// the history records its effect.
func (v *view) act(a *Action) {
	for _, n := range a.Nodes {
		switch {
		case a.Kind == Crash && a.Phase == history.PhaseStart:
			v.state[n] = down
			delete(v.claim, n)
		case a.Kind == Crash && a.Phase == history.PhaseEnd, a.Kind == Restart, a.Kind == Replace:
			v.state[n] = live
			delete(v.claim, n)
			v.fresh[n] = true
		case a.Kind == Pause && a.Phase == history.PhaseStart:
			if v.state[n] == live {
				v.state[n] = paused
			}
		case a.Kind == Pause && a.Phase == history.PhaseEnd, a.Kind == Resume:
			if v.state[n] == paused {
				v.state[n] = live
			}
		}
	}
}

// The lock workload's operations, as the history names them.
const (
	fAcquire = "acquire"
	fRelease = "release"
)

// observeLock follows who holds the lock: a process holds it from its
// acquire's ok until its release ends, however it ends (a release that
// failed or timed out leaves a holder that no longer believes it holds).
func (v *view) observeLock(e *history.Event) {
	switch {
	case e.F == fAcquire && e.Type == history.OpOK:
		v.seq++
		v.grant[e.Process] = v.seq
	case e.F == fRelease && e.Type != history.OpInvoke:
		delete(v.grant, e.Process)
	}
}

// holder is the client process of the latest grant still held; "" when
// none is.
func (v *view) holder() string {
	best, at := "", int64(0)
	for p, s := range v.grant {
		if s > at {
			best, at = p, s
		}
	}
	return best
}
