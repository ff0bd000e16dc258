package servers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes/wire"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/workloads"
)

// ClientOptions configure a built-in client served as a process of its
// own (ServeClient).
type ClientOptions struct {
	// Reads is how the client reads (scenario.Server.Reads; "" for the
	// client's default).
	Reads string
	// LockTTL is the lease (etcd) or session timeout (ZooKeeper) under
	// which a lock is held.
	LockTTL time.Duration
	// Timeout bounds each operation; past it the answer is unknown.
	Timeout time.Duration
}

// ServeClient is a client adapter for a built-in client ("etcd" or
// "zookeeper"): it speaks coup's client protocol on in and out
// (docs/servers.md) and the servers' own protocol to the members, as
// the client does inside coup. It reads the init, answers init_ok, then
// carries out each request on a goroutine of its own and answers it, in
// the order answers come; lines that are not requests are logged to logw
// and skipped. It returns when in ends, or with ctx.
func ServeClient(ctx context.Context, name string, opts ClientOptions, in io.Reader, out, logw io.Writer) error {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	lines := history.NewLineReader(in, MaxAdapterLine)
	var wmu sync.Mutex
	send := func(src, dest string, body []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		_, err := out.Write(envelope(src, dest, body))
		return err
	}
	logf := func(format string, args ...any) {
		wmu.Lock()
		defer wmu.Unlock()
		fmt.Fprintf(logw, format+"\n", args...)
	}
	var kv opClient
	self := ""
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ops sync.WaitGroup
	defer ops.Wait()
	for {
		line, n, long, err := lines.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if long {
			logf("ignoring a line of %d bytes, longer than %d", n, MaxAdapterLine)
			continue
		}
		env, err := wire.Parse(line)
		var head wire.Head
		if err == nil {
			head, err = wire.ParseHead(env.Body)
		}
		if err != nil {
			logf("ignoring a line that is not a message (%v): %s", err, quoteLine(line))
			continue
		}
		if head.Type == "init" {
			var init struct {
				NodeID string                       `json:"node_id"`
				Addrs  map[string]map[string]string `json:"addrs"`
			}
			if err := json.Unmarshal(env.Body, &init); err != nil {
				logf("ignoring an init that cannot be read: %v", err)
				continue
			}
			if kv != nil {
				logf("ignoring a second init")
				continue
			}
			if kv, err = newBuiltinClient(name, opts, init.Addrs); err != nil {
				return err
			}
			self = init.NodeID
			reply, _ := wire.Reply("init_ok", head.MsgID, nil)
			if err := send(self, env.Src, reply); err != nil {
				return err
			}
			logf("%s: the %s client, for %d members", self, name, len(init.Addrs))
			continue
		}
		if kv == nil {
			logf("ignoring a request before init: %s", quoteLine(line))
			continue
		}
		op, err := requestOp(env)
		if err != nil {
			logf("ignoring a request that cannot be read (%v): %s", err, quoteLine(line))
			continue
		}
		ops.Add(1)
		go func() {
			defer ops.Done()
			octx, ocancel := context.WithTimeout(ctx, opts.Timeout)
			defer ocancel()
			body, err := kv.Do(octx, env.Dest, op)
			if err != nil {
				body = errorAnswer(err, octx.Err() != nil)
			}
			if err := setInReplyTo(&body, head.MsgID); err != nil {
				logf("%s: %v", op.F, err)
				return
			}
			if err := send(env.Dest, env.Src, body); err != nil {
				logf("write an answer: %v", err)
			}
		}()
	}
}

// newBuiltinClient is a built-in client over the members' client ports.
func newBuiltinClient(name string, opts ClientOptions, addrs map[string]map[string]string) (opClient, error) {
	client := clientPorts(addrs)
	switch name {
	case scenario.ClientEtcd:
		e := newEtcdKV(client, opts.Reads == scenario.ReadsSerializable)
		e.locks.ttl = opts.LockTTL
		return e, nil
	case scenario.ClientZooKeeper:
		z := newZKKV(client, opts.Reads == scenario.ReadsSync)
		if opts.LockTTL > 0 {
			z.sessionTimeout = opts.LockTTL
		}
		return z, nil
	}
	return nil, fmt.Errorf("no built-in client %q (known: etcd, zookeeper)", name)
}

// requestOp reads a request back into the operation the in-process
// client would have been given: its process (the envelope's src), its
// member (dest), its type, its value (a lock's owner) and its fields.
func requestOp(env wire.Envelope) (workloads.Op, error) {
	var b struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(env.Body, &b); err != nil {
		return workloads.Op{}, err
	}
	op := workloads.Op{Process: env.Src, Node: env.Dest, F: b.Type, Fields: env.Body}
	if b.Type == workloads.FAcquire || b.Type == workloads.FRelease {
		if err := json.Unmarshal(b.Value, &op.Value); err != nil {
			return op, fmt.Errorf("a lock request's value is its owner's name: %w", err)
		}
		op.Fields = nil
	}
	return op, nil
}

// errorAnswer is the answer for an operation that ended in err: definite
// (11, temporarily unavailable) when it surely did not happen, else
// indefinite (0 when it timed out, 13 otherwise).
func errorAnswer(err error, timedOut bool) []byte {
	code := 13
	switch {
	case errors.Is(err, errDefinite):
		code = 11
	case timedOut:
		code = 0
	}
	return answerError(code, err.Error())
}

// setInReplyTo adds in_reply_to to an answer body.
func setInReplyTo(body *[]byte, id int) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(*body, &m); err != nil {
		return fmt.Errorf("an answer that is not an object: %w", err)
	}
	m["in_reply_to"] = json.RawMessage(fmt.Sprint(id))
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	*body = b
	return nil
}
