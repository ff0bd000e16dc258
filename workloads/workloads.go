// Package workloads generates client operations: election triggers and
// mutual-exclusion clients. A workload is driven through the Clients
// interface, which the real harness and the simulator both implement, and
// is told of each operation's completion. Workloads do no I/O and read no
// clock: time passes through Clients.After.
//
// Callbacks into a workload (Start, the functions given to After, and
// Complete) are serialised by the driver.
package workloads

import (
	"fmt"
	"time"
)

// Clients is what a workload acts through.
type Clients interface {
	// Invoke records the invocation of f(value) by client process and
	// sends the request to node. Its completion comes back via Complete.
	Invoke(process, node, f, value string)
	// After calls fn once d has passed on the run's clock.
	After(d time.Duration, fn func())
}

// Completion is the end of an operation: ok, fail or info (timed out: it
// may or may not have taken effect).
type Completion struct {
	Process string
	Node    string
	F       string
	Type    string
	Value   string
	// At is when the operation ended, on the run's clock (the clock of
	// Clients.After).
	At time.Duration
}

// Workload generates operations.
type Workload interface {
	// Start schedules the first operations.
	Start(c Clients)
	// Complete is told that an operation ended.
	Complete(c Clients, done Completion)
}

// None is a workload that asks nothing: the algorithm starts by itself.
type None struct{}

func (None) Start(Clients)                {}
func (None) Complete(Clients, Completion) {}

// Election asks each initiator, at a time, to start an election: one
// operation f "elect" per initiator, each from its own client.
type Election struct {
	Initiators []string
	At         time.Duration
}

var (
	_ Workload = None{}
	_ Workload = (*Election)(nil)
)

// Start schedules the election triggers.
func (e *Election) Start(c Clients) {
	c.After(e.At, func() {
		for i, n := range e.Initiators {
			c.Invoke(fmt.Sprintf("c%d", i+1), n, "elect", "")
		}
	})
}

// Complete does nothing: an election is asked for once.
func (e *Election) Complete(Clients, Completion) {}
