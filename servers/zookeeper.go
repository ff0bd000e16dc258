package servers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/coupharness/coup/workloads"
)

// zkKV is the lin-kv client of ZooKeeper, over its own protocol (the
// go-zookeeper client): each client process has a session of its own with
// the member its operations name. A key is a znode; a write sets it
// (creating it the first time), a compare-and-set reads it and sets it on
// the version read, so that ZooKeeper refuses the set if anything wrote
// in between. ZooKeeper promises linearizable writes but only
// sequentially consistent reads: a plain read is served by the member
// from its own copy; with sync, the member first catches up with the
// leader.
type zkKV struct {
	addr map[string]string // node → host:port of its client port
	sync bool
	// prefix comes before the name of every znode the client makes or
	// reads (a session's episode keeps its znodes apart from the
	// episodes before it); "" in a run of its own.
	prefix string

	// sessionTimeout is the sessions' timeout: a lock is held as long as
	// the session that holds it lives.
	sessionTimeout time.Duration
	locks          zkLocks

	mu    sync.Mutex
	conns map[string]*zk.Conn // by client process
	// dial is how the client's host dials (nil: the library's own).
	dial dialFunc
}

var _ opClient = (*zkKV)(nil)

// zkSessionTimeout is the clients' session timeout: ZooKeeper grants
// between 2 and 20 ticks (1s to 10s with the preset's 500ms tick).
const zkSessionTimeout = 4 * time.Second

func newZKKV(addr map[string]string, sync bool) *zkKV {
	return &zkKV{addr: addr, sync: sync, sessionTimeout: zkSessionTimeout, conns: map[string]*zk.Conn{}}
}

// silent drops the client library's own log lines.
type silent struct{}

func (silent) Printf(string, ...any) {}

// conn is the session of a client process with its member.
func (c *zkKV) conn(process, node string) (*zk.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if conn, ok := c.conns[process]; ok {
		return conn, nil
	}
	addr, ok := c.addr[node]
	if !ok {
		return nil, fmt.Errorf("%w: no node %q", errDefinite, node)
	}
	dial := c.dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	conn, _, err := zk.Connect([]string{addr}, c.sessionTimeout, zk.WithLogger(silent{}), zk.WithLogInfo(false),
		zk.WithDialer(func(network, address string, timeout time.Duration) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			return dial(ctx, network, address)
		}))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errDefinite, err)
	}
	c.conns[process] = conn
	return conn, nil
}

// node is the member at addr, of those the client was given; "" for
// none.
func (c *zkKV) node(addr string) string {
	for id, a := range c.addr {
		if a == addr {
			return id
		}
	}
	return ""
}

// close ends every session.
func (c *zkKV) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = map[string]*zk.Conn{}
}

func zkPath(prefix string, k int) string { return "/" + prefix + "coup-kv-" + strconv.Itoa(k) }

// node0 is a top-level znode's path ("/coup-set") with the client's
// prefix ("/e3-coup-set").
func (c *zkKV) node0(path string) string { return "/" + c.prefix + path[1:] }

// Do carries out the operation through the client's session. The library
// takes no context: an operation still running when ctx ends is
// abandoned, its outcome unknown.
func (c *zkKV) Do(ctx context.Context, node string, op workloads.Op) ([]byte, error) {
	f, err := fieldsOf(op)
	if err != nil {
		return nil, err
	}
	conn, err := c.conn(op.Process, node)
	if err != nil {
		return nil, err
	}
	type result struct {
		body []byte
		err  error
	}
	done := make(chan result, 1)
	sf, element, isSet := setOpOf(op)
	go func() {
		var body []byte
		var err error
		switch {
		case isSet:
			body, err = c.set(conn, sf, element)
		case op.F == workloads.FAcquire:
			body, err = c.acquire(ctx, conn, op.Value)
		case op.F == workloads.FRelease:
			body, err = c.release(conn, op.Value)
		default:
			body, err = c.do(conn, op.F, f)
		}
		done <- result{body, err}
	}()
	var body []byte
	select {
	case r := <-done:
		body, err = withServedBy(r.body, c.node(conn.Server())), r.err
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil && !errors.Is(err, errDefinite) && op.F != workloads.FAcquire && op.F != workloads.FRelease {
		c.retire(op.Process, conn)
	}
	return body, err
}

// retire ends the session of a process whose operation's outcome is
// unknown: the workload retires the process (its next operation is
// another process's), and the library would go on reconnecting it for
// the rest of the run. Every "could not connect" while a server was down
// left one such session behind, and once the servers were back their
// reconnections came past ZooKeeper's 60 connections from one address
// (maxClientCnxns), which turned the final reads away. A lock's session
// stays: what happens to a lock its holder's process left is the
// workload's question (its session expires, or not).
func (c *zkKV) retire(process string, conn *zk.Conn) {
	c.mu.Lock()
	if c.conns[process] == conn {
		delete(c.conns, process)
	}
	c.mu.Unlock()
	go conn.Close() // it waits for the server's answer to the close
}

func (c *zkKV) do(conn *zk.Conn, f string, kv kvFields) ([]byte, error) {
	path := zkPath(c.prefix, kv.Key)
	switch f {
	case workloads.FRead:
		if c.sync {
			if _, err := conn.Sync(path); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return nil, zkErr(err, true)
			}
		}
		data, _, err := conn.Get(path)
		if errors.Is(err, zk.ErrNoNode) {
			return answerError(20, "key does not exist"), nil
		}
		if err != nil {
			return nil, zkErr(err, true)
		}
		return answer("read_ok", json.RawMessage(readValue(data))), nil
	case workloads.FWrite:
		data := []byte(strconv.Itoa(kv.Value))
		_, err := conn.Set(path, data, -1)
		if errors.Is(err, zk.ErrNoNode) {
			_, err = conn.Create(path, data, 0, zk.WorldACL(zk.PermAll))
			if errors.Is(err, zk.ErrNodeExists) {
				_, err = conn.Set(path, data, -1)
			}
		}
		if err != nil {
			return nil, zkErr(err, false)
		}
		return answer("write_ok", nil), nil
	case workloads.FCas:
		data, stat, err := conn.Get(path)
		if errors.Is(err, zk.ErrNoNode) {
			return answerError(20, "key does not exist"), nil
		}
		if err != nil {
			return nil, zkErr(err, true) // nothing was written yet
		}
		if string(data) != strconv.Itoa(kv.From) {
			return answerError(22, "the value is not "+strconv.Itoa(kv.From)), nil
		}
		_, err = conn.Set(path, []byte(strconv.Itoa(kv.To)), stat.Version)
		if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
			return answerError(22, "the value changed since it was read"), nil
		}
		if err != nil {
			return nil, zkErr(err, false)
		}
		return answer("cas_ok", nil), nil
	}
	return nil, fmt.Errorf("%w: the ZooKeeper client does not do %q", errDefinite, f)
}

// zkErr is an error of the library: definite when nothing was asked to
// change (a read, or before the write), otherwise the outcome is unknown.
func zkErr(err error, definite bool) error {
	if definite {
		return fmt.Errorf("%w: %v", errDefinite, err)
	}
	return err
}
