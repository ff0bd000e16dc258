package servers

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes/wire"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/workloads"
)

// clients drives the workload against real servers through their own
// protocol (workloads.Clients): each operation goes, on a goroutine of its
// own, to the member it names, through the scenario's client (opClient),
// from the host its client sits on (placement.go),
// and ends ok, fail, or info when its answer is unknown (an error that
// may have come after the operation took effect, or no answer within the
// workload's timeout). Workload callbacks run under mu.
type clients struct {
	r       *run
	w       workloads.Workload
	kv      opClient
	timeout time.Duration

	mu      sync.Mutex
	nextID  int
	pending map[int]*pendingOp
	stopped bool
	timers  []*time.Timer
	ops     sync.WaitGroup
	cancel  context.CancelFunc
	ctx     context.Context
}

type pendingOp struct {
	process, node, f string
	host             string // the client's
	result           func(body []byte) string
}

var _ workloads.Clients = (*clients)(nil)

// newClients builds the clients of a scenario whose servers have one; nil
// when the workload asks nothing of them.
func newClients(r *run) *clients {
	if (r.sv.Client == "" && len(r.sv.Adapter) == 0) || r.sc.Workload.Kind == scenario.WorkloadNone {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &clients{r: r, w: r.parts.Workload, timeout: r.parts.OpTimeout, pending: map[int]*pendingOp{}, ctx: ctx, cancel: cancel}
	// Each client reaches the members from its host (placement.go).
	switch r.sv.Client {
	case scenario.ClientEtcd:
		c.kv = &byClient{r: r, by: map[string]opClient{}, make: func(host string) opClient {
			e := newEtcdKV(clientPorts(r.reachFrom(host)), r.sv.Reads == scenario.ReadsSerializable)
			e.locks.ttl = r.sv.LockTTL.D
			e.prefix = r.prefix
			if r.net != nil {
				e.setDial(r.dialer(host))
			}
			return e
		}}
	case scenario.ClientZooKeeper:
		c.kv = &byClient{r: r, by: map[string]opClient{}, make: func(host string) opClient {
			z := newZKKV(clientPorts(r.reachFrom(host)), r.sv.Reads == scenario.ReadsSync)
			if r.sc.Workload.Kind == scenario.WorkloadMutex {
				z.sessionTimeout = r.sv.LockTTL.D
			}
			z.prefix = r.prefix
			if r.net != nil {
				z.dial = r.dialer(host)
			}
			return z
		}}
	case scenario.ClientNats:
		c.kv = &byClient{r: r, by: map[string]opClient{}, make: func(host string) opClient {
			n := newNatsSet(clientPorts(r.reachFrom(host)), r.prefix)
			if r.net != nil {
				n.dial = r.dialer(host)
			}
			return n
		}}
	case scenario.ClientPostgres:
		c.kv = &byClient{r: r, by: map[string]opClient{}, make: func(host string) opClient {
			p := newPgKV(pgPorts(r.reachFrom(host)), r.prefix)
			if r.net != nil {
				p.dial = r.dialer(host)
			}
			return p
		}}
	case scenario.ClientRedis:
		names := redisNames(r.layout.nodes)
		c.kv = &byClient{r: r, by: map[string]opClient{}, make: func(host string) opClient {
			k := newRedisKV(r.reachFrom(host), names)
			k.prefix = r.prefix
			if r.net != nil {
				k.dial = r.dialer(host)
			}
			return k
		}}
	}
	return c
}

// setUp makes what the scenario's client needs on the cluster once the
// servers accept connections, before the cluster is watched for its
// leader: the nats client's stream (natsSetUp), whose leader is the
// leader observed; the postgres client's tables, when a workload uses
// them (pgSetUp). Other clients need nothing.
func (r *run) setUp(ctx context.Context) error {
	switch {
	case r.sv.Client == scenario.ClientNats:
		return natsSetUp(ctx, r)
	case r.sv.Client == scenario.ClientPostgres && r.sc.Workload.Kind != scenario.WorkloadNone:
		return pgSetUp(ctx, r)
	}
	return nil
}

// start starts the workload (at the run's time zero).
func (c *clients) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.Start(c)
}

// After calls fn at d after the run's zero (now, if that has passed).
func (c *clients) After(d time.Duration, fn func()) {
	t := time.AfterFunc(d-c.r.Now(), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.stopped {
			fn()
		}
	})
	c.timers = append(c.timers, t)
}

// Invoke records an invocation and carries it out on a goroutine of its
// own (called under mu).
func (c *clients) Invoke(op workloads.Op) {
	c.nextID++
	id := c.nextID
	host := c.r.hostOf(workloads.ClientOf(op))
	c.r.Record(history.Event{Kind: history.KindOp, Process: op.Process, Type: history.OpInvoke, F: op.F, Node: op.Node, Value: op.Value, Host: host})
	c.r.stats.add("ops." + history.OpInvoke)
	c.pending[id] = &pendingOp{process: op.Process, node: op.Node, f: op.F, host: host, result: op.Result}
	c.ops.Add(1)
	go func() {
		defer c.ops.Done()
		ctx, cancel := context.WithTimeout(c.ctx, c.timeout)
		defer cancel()
		body, err := c.kv.Do(ctx, op.Node, op)
		typ, value := history.OpInfo, ""
		switch {
		case err == nil:
			var head wire.ReplyHead
			_ = json.Unmarshal(body, &head)
			typ, value = workloads.Outcome(head, body, op.Result, op.Absent)
		case errors.Is(err, errDefinite):
			typ, value = history.OpFail, err.Error()
		case ctx.Err() != nil && c.ctx.Err() == nil:
			value = "timed out"
		default:
			value = err.Error()
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.complete(id, typ, value, body)
	}()
}

// complete records the end of an operation (called under mu).
func (c *clients) complete(id int, typ, value string, body []byte) {
	op, ok := c.pending[id]
	if !ok {
		return // the run ended first, and recorded it
	}
	delete(c.pending, id)
	c.r.Record(history.Event{Kind: history.KindOp, Process: op.process, Type: typ, F: op.f, Node: op.node, Value: value, Token: tokenOf(typ, body),
		Host: op.host, Served: c.r.servedBy(body)})
	c.r.stats.add("ops." + typ)
	if !c.stopped {
		c.w.Complete(c, workloads.Completion{Process: op.process, Node: op.node, F: op.f, Type: typ, Value: value, Body: body, At: c.r.Now()})
	}
}

// tokenOf is the fencing token of a lock grant's answer ("token"), nil
// for anything else.
func tokenOf(typ string, body []byte) *int64 {
	if typ != history.OpOK || body == nil {
		return nil
	}
	var a struct {
		Token *int64 `json:"token"`
	}
	if json.Unmarshal(body, &a) != nil {
		return nil
	}
	return a.Token
}

// stop ends the workload: no more callbacks; every pending operation is
// recorded as info, and its request abandoned.
func (c *clients) stop() {
	c.mu.Lock()
	c.stopped = true
	for _, t := range c.timers {
		t.Stop()
	}
	for _, id := range slices.Sorted(maps.Keys(c.pending)) {
		c.complete(id, history.OpInfo, "run ended", nil)
	}
	c.mu.Unlock()
	c.cancel()
	// The clients' sessions, keep-alives and processes end first: an
	// operation still under way may be blocked on them (a client process
	// that reads nothing).
	if cl, ok := c.kv.(interface{ close() }); ok {
		cl.close()
	}
	c.ops.Wait()
}
