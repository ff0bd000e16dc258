package workloads

import (
	"fmt"
	"time"
)

// Clients is what a workload acts through.
type Clients interface {
	// Invoke records the invocation of op and sends its request to
	// op.Node. Its completion comes back via Workload.Complete.
	Invoke(op Op)
	// After calls fn once d has passed on the run's clock.
	After(d time.Duration, fn func())
}

// Op is one client operation, as a workload invokes it.
type Op struct {
	// Process is the client process that invokes it ("c1"); Node the node
	// its request goes to.
	Process, Node string
	// Client is the client that invokes it, which outlives its processes:
	// a workload retires a process whose operation timed out and goes on
	// under a new one ("c4"), but the client, and what it holds, stays
	// "c1". A driver that gives each client a process of its own (the
	// server driver's client adapters) sends every operation of a client
	// to the same one. Empty means the process.
	Client string
	// F is the operation, and its request's type ("elect", "acquire",
	// "read"); the answer's type is F+"_ok", or "error".
	F string
	// Value is the operation's value as the history records it on the
	// invocation. When Fields is nil, the request carries it as its
	// "value" field (left out when empty): the election and lock
	// workloads' form.
	Value string
	// Fields, when not nil, are the request body's fields beside type and
	// msg_id: a value that marshals to a JSON object, such as a struct
	// (lin-kv's {"key": 3}, echo's {"echo": "..."}). The request then
	// carries no "value" of its own.
	Fields any
	// Result, when not nil, gives the value the history records when the
	// operation returns ok, from the answer's body. Nil records the
	// answer's "value" field: a string as it is, any other JSON value as
	// its text.
	Result func(body []byte) string
	// Absent, when not empty, is the value the history records, as ok,
	// when the answer is error 20 (key-does-not-exist): a final read's,
	// for which "the key has no value" is the answer it wants, whether a
	// node says it with read_ok and a null value or with error 20, as
	// Maelstrom allows both. Empty records error 20 as a failure.
	Absent string
	// Long says that Result's value may be long (a read of a whole set):
	// a driver that cuts what a node puts into one field of an event
	// (the pipe driver's harness.MaxField) keeps it whole, up to a line.
	Long bool
}

// Completion is the end of an operation: ok, fail or info (timed out: it
// may or may not have taken effect).
type Completion struct {
	Process string
	Node    string
	F       string
	Type    string
	// Value is what the history recorded on the completion: Op.Result's
	// value for ok, the error's text for an error, why for a timeout.
	Value string
	// Body is the answer's body exactly as the node wrote it; nil when
	// there was no answer (the operation timed out, or the run ended).
	Body []byte
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
			c.Invoke(Op{Process: fmt.Sprintf("c%d", i+1), Node: n, F: "elect"})
		}
	})
}

// Complete does nothing: an election is asked for once.
func (e *Election) Complete(Clients, Completion) {}

// ClientOf is the client that invokes op: op.Client, or its process when
// the workload names none.
func ClientOf(op Op) string {
	if op.Client != "" {
		return op.Client
	}
	return op.Process
}
