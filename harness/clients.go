package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes/wire"
	"github.com/coupharness/coup/workloads"
)

// clients drives the workload against real nodes (workloads.Clients). All
// workload callbacks run under mu.
type clients struct {
	r *run
	w workloads.Workload
	// timeout is how long a client waits for an answer before it records
	// the operation as info (indeterminate): the scenario's
	// workload.timeout.
	timeout time.Duration

	mu      sync.Mutex
	nextID  int
	pending map[int]*pendingOp
	// known are the clients that have sent a request: a message to
	// anything else is to nobody.
	known map[string]bool
	// ended are the operations already completed, so that an answer that
	// comes too late is told from a stray one.
	ended   map[int]*pendingOp
	stopped bool
	timers  []*time.Timer
}

type pendingOp struct {
	process, node, f string
	result           func(body []byte) string
	absent           string
	// long: the ok value may be as long as a line (workloads.Op.Long).
	long  bool
	timer *time.Timer
}

var _ workloads.Clients = (*clients)(nil)

// start starts the workload (at the run's time zero).
func (c *clients) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.Start(c)
}

// After calls fn at d after the run's time zero (now, if that has passed).
func (c *clients) After(d time.Duration, fn func()) {
	wait := time.Until(c.r.zero.Add(d))
	t := time.AfterFunc(wait, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.stopped {
			fn()
		}
	})
	c.timers = append(c.timers, t)
}

// Invoke records an invocation and sends the request (called under mu).
func (c *clients) Invoke(op workloads.Op) {
	c.nextID++
	id := c.nextID
	body := workloads.RequestBody(op, id)
	c.r.rec.Record(history.Event{Kind: history.KindOp, Process: op.Process, Type: history.OpInvoke, F: op.F, Node: op.Node, Value: op.Value})
	c.r.router.count("ops." + history.OpInvoke)
	p := &pendingOp{process: op.Process, node: op.Node, f: op.F, result: op.Result, absent: op.Absent, long: op.Long}
	p.timer = time.AfterFunc(c.timeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.complete(id, history.OpInfo, "timed out", nil)
	})
	c.pending[id] = p
	c.known[op.Process] = true
	line := (&wire.Envelope{Src: op.Process, Dest: op.Node, Body: body}).Append(nil)
	if m := c.r.members[op.Node]; m != nil {
		c.r.enqueue(m, delivery{line: line})
	}
}

// reply handles a message from a node to anything but a node or the
// harness: an answer to a client. It completes an operation only when it
// answers a pending request of that client that went to that node, with
// the request's type (f + "_ok") or an error; anything else is refused, so
// that no node can answer for another.
func (c *clients) reply(from string, env wire.Envelope) {
	var rb wire.ReplyHead
	err := json.Unmarshal(env.Body, &rb)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known[env.Dest] {
		c.r.refuse(from, RefusedDest, fmt.Sprintf("a message to %s, which is neither a node nor a client: %s", quote([]byte(env.Dest)), quote(env.Body)))
		return
	}
	if err != nil {
		c.r.refuse(from, RefusedReply, fmt.Sprintf("an answer to %s that does not parse (%v): %s", env.Dest, err, quote(env.Body)))
		return
	}
	op, ok := c.pending[rb.InReplyTo]
	if late := c.ended[rb.InReplyTo]; !ok && late != nil && late.process == env.Dest && late.node == from {
		// An answer that came after the operation was recorded as info
		// (timed out, or the run ended): the node's, but too late.
		c.r.router.count(history.CountLateReplies)
		if c.r.refused.note(from, "late") > RefusalsRecorded {
			return
		}
		c.r.logf("%s: a late answer to %s's request %d (%s), after it was recorded as info", from, env.Dest, rb.InReplyTo, quote(env.Body))
		return
	}
	var why string
	switch {
	case !ok:
		why = "which no request of it awaits at that node"
	case op.process != env.Dest:
		why = fmt.Sprintf("which %s sent, not %s", op.process, env.Dest)
	case op.node != from:
		why = fmt.Sprintf("which went to %s, not %s", op.node, from)
	case rb.Type != op.f+"_ok" && rb.Type != "error":
		why = fmt.Sprintf("which was a %s request: its answer is %s_ok or error", quote([]byte(op.f)), op.f)
	}
	if why != "" {
		c.r.refuse(from, RefusedReply, fmt.Sprintf("a %s to %s in reply to request %d, %s", quote([]byte(rb.Type)), env.Dest, rb.InReplyTo, why))
		return
	}
	typ, value := workloads.Outcome(rb, env.Body, op.result, op.absent)
	bound := MaxField
	if op.long && typ == history.OpOK {
		bound = MaxLine // a read of a whole set: as long as the line it came in
	}
	// The body is cloned: the workload may read it after the line it came
	// in is reused.
	c.complete(rb.InReplyTo, typ, Clip(value, bound), bytes.Clone(env.Body))
}

// complete records the end of an operation (called under mu); body is
// the answer's, nil when there was none.
func (c *clients) complete(id int, typ, value string, body []byte) {
	op, ok := c.pending[id]
	if !ok {
		return // already timed out, or an answer to nobody
	}
	delete(c.pending, id)
	c.ended[id] = op
	op.timer.Stop()
	c.r.rec.Record(history.Event{Kind: history.KindOp, Process: op.process, Type: typ, F: op.f, Node: op.node, Value: value})
	c.r.router.count("ops." + typ)
	if !c.stopped {
		c.w.Complete(c, workloads.Completion{Process: op.process, Node: op.node, F: op.f, Type: typ, Value: value, Body: body, At: time.Since(c.r.zero)})
	}
}

// stop ends the workload: no more callbacks; every pending operation is
// recorded as info.
func (c *clients) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	for _, t := range c.timers {
		t.Stop()
	}
	for _, id := range slices.Sorted(maps.Keys(c.pending)) {
		c.complete(id, history.OpInfo, "run ended", nil)
	}
}
