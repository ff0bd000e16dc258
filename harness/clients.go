package harness

import (
	"encoding/json"
	"sort"
	"sync"
	"time"

	"coup/harness/history"
	"coup/nodes/wire"
	"coup/workloads"
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
	stopped bool
	timers  []*time.Timer
}

type pendingOp struct {
	process, node, f string
	timer            *time.Timer
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
func (c *clients) Invoke(process, node, f, value string) {
	c.nextID++
	id := c.nextID
	c.r.rec.Record(history.Event{Kind: history.KindOp, Process: process, Type: history.OpInvoke, F: f, Node: node, Value: value})
	c.r.router.count("ops." + history.OpInvoke)
	op := &pendingOp{process: process, node: node, f: f}
	op.timer = time.AfterFunc(c.timeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.complete(id, history.OpInfo, "timed out")
	})
	c.pending[id] = op
	body, _ := json.Marshal(wire.RequestBody{Type: f, MsgID: id, Value: value})
	line := (&wire.Envelope{Src: process, Dest: node, Body: body}).Append(nil)
	if m := c.r.members[node]; m != nil {
		c.r.enqueue(m, delivery{line: line})
	}
}

// reply handles a node's answer to a client.
func (c *clients) reply(from string, env wire.Envelope) {
	var rb wire.ReplyBody
	if err := json.Unmarshal(env.Body, &rb); err != nil {
		c.r.logf("%s: bad reply to %s: %.200s", from, env.Dest, env.Body)
		return
	}
	typ, value := history.OpOK, rb.Value
	if rb.Type == "error" {
		typ, value = history.OpInfo, rb.Text
		if rb.Definite || (rb.Code != nil && DefiniteCode(*rb.Code)) {
			typ = history.OpFail
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.complete(rb.InReplyTo, typ, value)
}

// DefiniteCode reports whether a Maelstrom error code means the operation
// surely did not happen.
func DefiniteCode(code int) bool {
	switch code {
	case 1, 10, 11, 12, 14, 20, 21, 22, 30:
		return true
	}
	return false
}

// complete records the end of an operation (called under mu).
func (c *clients) complete(id int, typ, value string) {
	op, ok := c.pending[id]
	if !ok {
		return // already timed out, or an answer to nobody
	}
	delete(c.pending, id)
	op.timer.Stop()
	c.r.rec.Record(history.Event{Kind: history.KindOp, Process: op.process, Type: typ, F: op.f, Node: op.node, Value: value})
	c.r.router.count("ops." + typ)
	if !c.stopped {
		c.w.Complete(c, workloads.Completion{Process: op.process, Node: op.node, F: op.f, Type: typ, Value: value, At: time.Since(c.r.zero)})
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
	ids := make([]int, 0, len(c.pending))
	for id := range c.pending {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		c.complete(id, history.OpInfo, "run ended")
	}
}
