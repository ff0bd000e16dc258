package mutex

import (
	"fmt"

	"github.com/coupharness/coup/nodes"
)

// The operations of the client protocol.
const (
	OpAcquire = "acquire"
	OpRelease = "release"
)

// The critical-section reports.
var (
	ReportEnter = nodes.Report{What: "cs", Value: "enter"}
	ReportExit  = nodes.Report{What: "cs", Value: "exit"}
)

// Action is what a client request asks of the algorithm.
type Action int

const (
	// None: nothing for the algorithm to do.
	None Action = iota
	// Want: a client now waits for the critical section and none did
	// before; the node should ask for it.
	Want
	// Leave: the owner inside has left; the node should pass the critical
	// section on.
	Leave
)

func (a Action) String() string {
	switch a {
	case None:
		return "none"
	case Want:
		return "want"
	case Leave:
		return "leave"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// waiter is an acquire request and the owner it is for.
type waiter struct {
	owner string
	req   nodes.Request
}

// Front is the client side of one mutual-exclusion node.
type Front struct {
	env     nodes.Env
	waiting []waiter
	holder  *waiter
}

// NewFront returns the client side of a node that acts through env.
func NewFront(env nodes.Env) *Front { return &Front{env: env} }

// Owner is whom a request acts for: its value, or else its client.
func Owner(r nodes.Request) string {
	if r.Value != "" {
		return r.Value
	}
	return r.Client
}

// Inside reports whether an owner is in the critical section at this node.
func (f *Front) Inside() bool { return f.holder != nil }

// Waiting reports whether an acquire waits at this node.
func (f *Front) Waiting() bool { return len(f.waiting) > 0 }

// Holder is the owner inside, or "".
func (f *Front) Holder() string {
	if f.holder == nil {
		return ""
	}
	return f.holder.owner
}

// Handle takes a client request, answers it when it can, and says what the
// algorithm must do.
func (f *Front) Handle(r nodes.Request) Action {
	switch r.Op {
	case OpAcquire:
		f.waiting = append(f.waiting, waiter{owner: Owner(r), req: r})
		if f.holder == nil && len(f.waiting) == 1 {
			return Want
		}
		return None
	case OpRelease:
		return f.release(r)
	}
	f.env.Fail(r, nodes.Error{Code: nodes.CodeNotSupported, Text: fmt.Sprintf("a mutual-exclusion node knows %s and %s, not %q", OpAcquire, OpRelease, r.Op), Definite: true})
	return None
}

func (f *Front) release(r nodes.Request) Action {
	owner := Owner(r)
	if f.holder != nil && f.holder.owner == owner {
		f.holder = nil
		f.env.Report(ReportExit)
		f.env.Reply(r, "")
		return Leave
	}
	for i, w := range f.waiting {
		if w.owner != owner {
			continue
		}
		f.waiting = append(f.waiting[:i:i], f.waiting[i+1:]...)
		f.env.Fail(w.req, nodes.Error{Code: nodes.CodeAbort, Text: fmt.Sprintf("%s's acquire was withdrawn by its release before it was granted", owner), Definite: true})
		f.env.Fail(r, nodes.Error{Code: nodes.CodePreconditionFailed, Text: fmt.Sprintf("%s was not in the critical section; its waiting acquire was withdrawn", owner), Definite: true})
		return None
	}
	f.env.Fail(r, nodes.Error{Code: nodes.CodePreconditionFailed, Text: fmt.Sprintf("%s is not in the critical section", owner), Definite: true})
	return None
}

// Enter lets the first waiting owner into the critical section: it reports
// the entry and answers the acquire. It returns false when no acquire
// waits. Calling it while an owner is inside is a bug.
func (f *Front) Enter() bool {
	if f.holder != nil {
		panic(fmt.Sprintf("mutex: %s: Enter while %s is inside", f.env.Self(), f.holder.owner))
	}
	if len(f.waiting) == 0 {
		return false
	}
	w := f.waiting[0]
	f.waiting = f.waiting[1:]
	f.holder = &w
	f.env.Report(ReportEnter)
	f.env.Reply(w.req, "")
	return true
}
