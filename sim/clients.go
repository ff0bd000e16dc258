package sim

import (
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/wire"
	"github.com/coupharness/coup/workloads"
)

// clients drives the workload on the virtual clock (workloads.Clients), as
// the real harness's clients do on the real one: an invocation is recorded
// and its request handed to the node at once; the answer, or the timeout,
// completes it.
type clients struct {
	s       *Sim
	w       workloads.Workload
	timeout time.Duration
	nextID  int
	pending map[int]pendingOp // by value: an operation costs no allocation of its own
	stopped bool
}

type pendingOp struct {
	process, node, f string
	result           func(body []byte) string
	absent           string
}

var _ workloads.Clients = (*clients)(nil)

// After calls fn at d after the run's zero (now, if that has passed).
func (c *clients) After(d time.Duration, fn func()) {
	x := c.s.extra()
	x.fn = fn
	c.s.push(item{at: max(d, c.s.now), kind: kAfter, x: x})
}

// Invoke records an invocation and sends the request.
func (c *clients) Invoke(op workloads.Op) {
	s := c.s
	c.nextID++
	id := c.nextID
	s.record(history.Event{Kind: history.KindOp, Process: op.Process, Type: history.OpInvoke, F: op.F, Node: op.Node, Value: op.Value})
	s.cnt.ops.add(history.OpInvoke, 1)
	c.pending[id] = pendingOp{process: op.Process, node: op.Node, f: op.F, result: op.Result, absent: op.Absent}
	s.push(item{at: s.now + c.timeout, kind: kOpTimeout, id: int64(id)})
	if n := s.byName[op.Node]; n != nil {
		req := nodes.Request{Client: op.Process, ID: id, Op: op.F, Value: op.Value, Body: workloads.RequestBody(op, id)}
		if op.Fields != nil {
			req.Value = "" // the request carries no value of its own
		}
		x := s.extra()
		x.req = req
		s.push(item{at: s.now, kind: kRequest, to: n.index, x: x})
	}
}

// answer completes an operation with a node's answer, as the real
// harness records it.
func (c *clients) answer(id int, head wire.ReplyHead, body []byte) {
	op, ok := c.pending[id]
	if !ok {
		return
	}
	typ, value := workloads.Outcome(head, body, op.result, op.absent)
	c.complete(id, typ, value, body)
}

// answerString completes an operation with a node's answer of one string
// value (Env.Reply): when the workload reads answers the default way, the
// value is the one it would parse back out of body (a string that is
// valid UTF-8 comes through JSON whole), taken without parsing body twice.
func (c *clients) answerString(id int, head wire.ReplyHead, body []byte, value string) {
	op, ok := c.pending[id]
	if !ok {
		return
	}
	if op.result != nil || !utf8.ValidString(value) {
		c.answer(id, head, body)
		return
	}
	c.complete(id, history.OpOK, value, body)
}

// complete records the end of an operation, once; body is the answer's,
// nil when there was none.
func (c *clients) complete(id int, typ, value string, body []byte) {
	op, ok := c.pending[id]
	if !ok {
		return // already timed out, or an answer to nobody
	}
	delete(c.pending, id)
	s := c.s
	s.record(history.Event{Kind: history.KindOp, Process: op.process, Type: typ, F: op.f, Node: op.node, Value: value})
	s.cnt.ops.add(typ, 1)
	if !c.stopped {
		c.w.Complete(c, workloads.Completion{Process: op.process, Node: op.node, F: op.f, Type: typ, Value: value, Body: body, At: s.now})
	}
}

// stop ends the workload: no more callbacks; every pending operation is
// recorded as info, in the order they were invoked.
func (c *clients) stop() {
	c.stopped = true
	for _, id := range slices.Sorted(maps.Keys(c.pending)) {
		c.complete(id, history.OpInfo, "run ended", nil)
	}
}
