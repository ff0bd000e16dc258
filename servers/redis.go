package servers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/workloads"
)

// redisKV is the lin-kv client of Redis with Sentinel, written as Redis's
// guidelines for Sentinel clients say a client library works, over RESP
// with the standard library alone:
//
//  1. ask the Sentinels, in order, for the master's address (SENTINEL
//     get-master-addr-by-name), the client's own member's Sentinel first;
//     the first that answers is believed;
//  2. connect to that address and ask the server its ROLE: a server that
//     is not a master is left, and the operation fails (it was sent to no
//     master);
//  3. keep the connection for the client process's later operations, and
//     drop it (so that the next operation asks the Sentinels again) when
//     it breaks, times out, or the server answers READONLY (it became a
//     replica).
//
// A key is a string (coup-kv/K); a read is GET, a write SET, and a
// compare-and-set a script (EVAL) that reads and sets in one step. The
// set workload's set is a Redis set (coup-set): an add is SADD, a read
// SMEMBERS. Every answer names the master that served it (served_by).
type redisKV struct {
	// dial is how the client's host dials (nil: net.Dialer's).
	dial dialFunc
	// prefix comes before every key (a session's episode keeps its keys
	// apart from the episodes before it); "" in a run of its own.
	prefix string
	addrs  map[string]map[string]string // node → port name → where the client dials it
	names  map[string]string            // an address a server gives for a node → the node
	order  []string                     // the nodes, in order

	mu       sync.Mutex
	sessions map[string]*redisSession // by client process
	closed   bool
}

var _ opClient = (*redisKV)(nil)

// redisSession is a client process's connection to the master it found.
type redisSession struct {
	conn   *respConn
	master string // the node it is connected to
}

// The Sentinel's name of the master set the preset monitors, and how
// long the client gives one Sentinel to answer before it asks the next.
const (
	redisMasterName  = "coup"
	redisSentinelAsk = 300 * time.Millisecond
)

// redisCAS sets KEYS[1] to ARGV[2] if it holds ARGV[1]: 1 if it did, 0 if
// it holds another value, -1 if it holds none. A script runs whole, with
// nothing else between its GET and its SET.
const redisCAS = `local v = redis.call('GET', KEYS[1])
if not v then return -1 end
if v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end
return 0`

// newRedisKV is the client of the nodes whose ports the client dials at
// addrs (by node, by port name: "client" for Redis, "sentinel" for its
// Sentinel), and which servers name by the addresses in names.
func newRedisKV(addrs map[string]map[string]string, names map[string]string) *redisKV {
	var order []string
	for n := range addrs {
		order = append(order, n)
	}
	slices.SortFunc(order, func(a, b string) int { // n2 before n10
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	})
	return &redisKV{addrs: addrs, names: names, order: order, sessions: map[string]*redisSession{}}
}

// redisNames maps every address a server may give for a node (where it
// listens, and where each node reaches it: what Sentinel announces) to
// the node.
func redisNames(nodes []*scenario.ServerNode) map[string]string {
	out := map[string]string{}
	for _, n := range nodes {
		for _, e := range n.Nodes {
			for _, a := range e.Addr {
				out[a] = e.ID
			}
		}
		for _, e := range n.Reach {
			for _, a := range e.Addr {
				out[a] = e.ID
			}
		}
	}
	return out
}

// redisSetKey is the set workload's set.
const redisSetKey = "coup-set"

// Do carries out the operation on the master, found through the
// Sentinels the first time and after each dropped connection.
func (c *redisKV) Do(ctx context.Context, node string, op workloads.Op) ([]byte, error) {
	var args []string
	var f kvFields
	sf, element, isSet := setOpOf(op)
	switch {
	case isSet && sf == workloads.FAdd:
		args = []string{"SADD", c.prefix + redisSetKey, strconv.FormatInt(element, 10)}
	case isSet:
		args = []string{"SMEMBERS", c.prefix + redisSetKey}
	default:
		var err error
		if f, err = fieldsOf(op); err != nil {
			return nil, err
		}
		key := c.prefix + "coup-kv/" + strconv.Itoa(f.Key)
		switch op.F {
		case workloads.FRead:
			args = []string{"GET", key}
		case workloads.FWrite:
			args = []string{"SET", key, strconv.Itoa(f.Value)}
		case workloads.FCas:
			args = []string{"EVAL", redisCAS, "1", key, strconv.Itoa(f.From), strconv.Itoa(f.To)}
		default:
			return nil, fmt.Errorf("%w: the redis client does not do %q", errDefinite, op.F)
		}
	}
	s, err := c.session(ctx, op.Process, node)
	if err != nil {
		return nil, err
	}
	v, err := s.conn.do(ctx, args...)
	if err != nil {
		c.drop(op.Process, s)
		return nil, fmt.Errorf("%s at %s: %w", args[0], s.master, err)
	}
	body, err := c.answer(op, f, isSet, s, v)
	if err != nil {
		c.drop(op.Process, s)
		return nil, fmt.Errorf("%s at %s: %w", args[0], s.master, err)
	}
	return withServedBy(body, s.master), nil
}

// answer reads the server's reply to an operation as a Maelstrom answer.
// An error means a reply that fits no answer: its outcome is unknown.
func (c *redisKV) answer(op workloads.Op, f kvFields, isSet bool, s *redisSession, v respValue) ([]byte, error) {
	switch {
	case v.Kind == '-':
		return c.refused(op.Process, s, v.Str)
	case isSet && v.Kind == ':':
		return answer("add_ok", nil), nil // 1 added, 0 there already: an add whose answer was lost
	case isSet && v.Kind == '*':
		var elems []int64
		var others []string
		for _, m := range v.Arr {
			if e, err := strconv.ParseInt(m.Str, 10, 64); err == nil {
				elems = append(elems, e)
			} else {
				others = append(others, m.Str)
			}
		}
		return setAnswer(elems, others), nil
	}
	switch op.F {
	case workloads.FRead:
		switch {
		case v.Kind == '$' && v.Null:
			return answerError(20, "key does not exist"), nil
		case v.Kind == '$':
			return answer("read_ok", json.RawMessage(readValue([]byte(v.Str)))), nil
		}
	case workloads.FWrite:
		if v.Kind == '+' && v.Str == "OK" {
			return answer("write_ok", nil), nil
		}
	case workloads.FCas:
		if v.Kind == ':' {
			switch v.Int {
			case 1:
				return answer("cas_ok", nil), nil
			case 0:
				return answerError(22, "the value is not "+strconv.Itoa(f.From)), nil
			case -1:
				return answerError(20, "key does not exist"), nil
			}
		}
	}
	return nil, fmt.Errorf("an answer of type %q that means nothing here", v.Kind)
}

// refused reads an error reply. Those that say the server did nothing
// (it is a replica now, it lacks the replicas it must write to, it is
// loading) are definite, and a READONLY one drops the connection, as a
// client library does, so that the next operation asks the Sentinels
// again; any other leaves the outcome unknown.
func (c *redisKV) refused(process string, s *redisSession, text string) ([]byte, error) {
	code, _, _ := strings.Cut(text, " ")
	switch code {
	case "READONLY":
		c.drop(process, s)
		return answerError(11, text), nil
	case "NOREPLICAS", "MASTERDOWN", "LOADING", "TRYAGAIN", "CLUSTERDOWN":
		return answerError(11, text), nil
	}
	return nil, errors.New(text)
}

// session is the client process's connection to the master: kept, or
// found anew through the Sentinels. An error here is definite: nothing
// was sent to a master.
func (c *redisKV) session(ctx context.Context, process, node string) (*redisSession, error) {
	c.mu.Lock()
	s, ok := c.sessions[process]
	closed := c.closed
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	if closed {
		return nil, fmt.Errorf("%w: the client is closed", errDefinite)
	}
	master, err := c.askSentinels(ctx, node)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errDefinite, err)
	}
	conn, err := dialRESP(ctx, c.dial, c.addrs[master]["client"])
	if err != nil {
		return nil, fmt.Errorf("%w: the master Sentinel named, %s: %v", errDefinite, master, err)
	}
	role, err := conn.do(ctx, "ROLE")
	if err != nil {
		conn.close()
		return nil, fmt.Errorf("%w: ROLE at %s: %v", errDefinite, master, err)
	}
	if len(role.Arr) == 0 || role.Arr[0].Str != "master" {
		conn.close()
		what := "no role"
		if len(role.Arr) > 0 {
			what = role.Arr[0].Str
		}
		return nil, fmt.Errorf("%w: %s, which Sentinel named master, says it is %s", errDefinite, master, what)
	}
	s = &redisSession{conn: conn, master: master}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		conn.close()
		return nil, fmt.Errorf("%w: the client is closed", errDefinite)
	}
	c.sessions[process] = s
	return s, nil
}

// askSentinels asks each Sentinel in turn, node's first, for the
// master's address, and returns the node it names.
func (c *redisKV) askSentinels(ctx context.Context, node string) (string, error) {
	order := []string{node}
	for _, n := range c.order {
		if n != node {
			order = append(order, n)
		}
	}
	var why []string
	for _, n := range order {
		addr, ok := c.addrs[n]["sentinel"]
		if !ok {
			continue
		}
		master, err := c.askSentinel(ctx, addr)
		if err == nil {
			return master, nil
		}
		why = append(why, n+"'s: "+err.Error())
		if ctx.Err() != nil {
			break
		}
	}
	return "", fmt.Errorf("no Sentinel named a master (%s)", strings.Join(why, "; "))
}

// askSentinel asks one Sentinel for the master's address.
func (c *redisKV) askSentinel(ctx context.Context, addr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, redisSentinelAsk)
	defer cancel()
	conn, err := dialRESP(ctx, c.dial, addr)
	if err != nil {
		return "", err
	}
	defer conn.close()
	v, err := conn.do(ctx, "SENTINEL", "get-master-addr-by-name", redisMasterName)
	switch {
	case err != nil:
		return "", err
	case v.Kind == '-':
		return "", errors.New(v.Str)
	case len(v.Arr) != 2:
		return "", errors.New("no master known")
	}
	at := net.JoinHostPort(v.Arr[0].Str, v.Arr[1].Str)
	master, ok := c.names[at]
	if !ok {
		return "", fmt.Errorf("it named %s, the address of no node", at)
	}
	return master, nil
}

// drop closes a process's connection, if it is still the one it uses.
func (c *redisKV) drop(process string, s *redisSession) {
	c.mu.Lock()
	if c.sessions[process] == s {
		delete(c.sessions, process)
	}
	c.mu.Unlock()
	s.conn.close()
}

// close closes every connection: the run has ended.
func (c *redisKV) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for p, s := range c.sessions {
		s.conn.close()
		delete(c.sessions, p)
	}
}
