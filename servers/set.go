package servers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/coupharness/coup/workloads"
)

// The set workload (workloads.Set) on the built-in clients: an add is a
// write of a key of its own under a prefix, a read of the whole set a
// listing of the prefix, so that the store's own replication is what
// keeps each element or loses it.
//
//	etcd        add: put coup-set/<element>      read: range over the prefix coup-set/ (keys only)
//	ZooKeeper   add: create /coup-set/e-<element>  read: the children of /coup-set (after a sync, with reads = "sync")
//
// An add whose key exists already was carried out before (its answer was
// lost): it is acknowledged again. The read answers read_ok with the
// elements in increasing order, and any key under the prefix that is not
// one as its text, which no add could have written.

// setOp is an operation of the set workload, read back from an
// operation's fields: an add, with its element, or a read of the whole
// set (a read with no key). ok is false for any other operation.
func setOpOf(op workloads.Op) (f string, element int64, ok bool) {
	if op.F != workloads.FAdd && op.F != workloads.FRead {
		return "", 0, false
	}
	raw, err := json.Marshal(op.Fields)
	if err != nil {
		return "", 0, false
	}
	var fields struct {
		Key     *json.RawMessage `json:"key"`
		Element *int64           `json:"element"`
	}
	if json.Unmarshal(raw, &fields) != nil {
		return "", 0, false
	}
	switch {
	case op.F == workloads.FRead && fields.Key == nil:
		return workloads.FRead, 0, true
	case op.F == workloads.FAdd && fields.Element != nil:
		return workloads.FAdd, *fields.Element, true
	}
	return "", 0, false
}

// setAnswer is the read_ok of a set's elements (and the keys under its
// prefix that are not elements, as text).
func setAnswer(elems []int64, others []string) []byte {
	slices.Sort(elems)
	value := make([]any, 0, len(elems)+len(others))
	for _, e := range elems {
		value = append(value, e)
	}
	for _, o := range others {
		value = append(value, o)
	}
	b, _ := json.Marshal(map[string]any{"type": "read_ok", "value": value})
	return b
}

// etcdSetPrefix is where the set's keys are.
const etcdSetPrefix = "coup-set/"

// set carries out an add or a read of the set on etcd.
func (c *etcdKV) set(ctx context.Context, node, f string, element int64) ([]byte, error) {
	prefix := c.prefix + etcdSetPrefix
	if f == workloads.FAdd {
		v := strconv.FormatInt(element, 10)
		if err := c.call(ctx, node, "kv/put", map[string]any{"key": b64(prefix + v), "value": b64(v)}, nil); err != nil {
			return nil, err
		}
		return answer("add_ok", nil), nil
	}
	var out struct {
		Kvs []struct {
			Key string `json:"key"`
		} `json:"kvs"`
		More bool `json:"more"`
	}
	// The range's end is the prefix with its last byte one higher: every
	// key that starts with the prefix.
	end := prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1)
	req := map[string]any{"key": b64(prefix), "range_end": b64(end), "keys_only": true, "serializable": c.serializable}
	if err := c.call(ctx, node, "kv/range", req, &out); err != nil {
		return nil, err
	}
	if out.More {
		return nil, fmt.Errorf("%w: etcd answered the set's range in part", errDefinite)
	}
	var elems []int64
	var others []string
	for _, kv := range out.Kvs {
		k, err := base64.StdEncoding.DecodeString(kv.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: a key that is not base64: %v", errDefinite, err)
		}
		text := strings.TrimPrefix(string(k), prefix)
		if e, err := strconv.ParseInt(text, 10, 64); err == nil {
			elems = append(elems, e)
		} else {
			others = append(others, text)
		}
	}
	return setAnswer(elems, others), nil
}

// zkSetPath is the parent of the set's znodes.
const zkSetPath = "/coup-set"

// set carries out an add or a read of the set on ZooKeeper.
func (c *zkKV) set(conn *zk.Conn, f string, element int64) ([]byte, error) {
	acl := zk.WorldACL(zk.PermAll)
	parent := c.node0(zkSetPath)
	if f == workloads.FAdd {
		path := fmt.Sprintf("%s/e-%d", parent, element)
		data := []byte(strconv.FormatInt(element, 10))
		_, err := conn.Create(path, data, 0, acl)
		if errors.Is(err, zk.ErrNoNode) { // the first add: make the parent, then add
			if _, perr := conn.Create(parent, nil, 0, acl); perr != nil && !errors.Is(perr, zk.ErrNodeExists) {
				return nil, zkErr(perr, true) // the element was not added
			}
			_, err = conn.Create(path, data, 0, acl)
		}
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return nil, zkErr(err, false)
		}
		return answer("add_ok", nil), nil
	}
	if c.sync {
		if _, err := conn.Sync(parent); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, zkErr(err, true)
		}
	}
	children, _, err := conn.Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		return setAnswer(nil, nil), nil // nothing was ever added
	}
	if err != nil {
		return nil, zkErr(err, true)
	}
	var elems []int64
	var others []string
	for _, name := range children {
		if e, err := strconv.ParseInt(strings.TrimPrefix(name, "e-"), 10, 64); err == nil && strings.HasPrefix(name, "e-") {
			elems = append(elems, e)
		} else {
			others = append(others, name)
		}
	}
	return setAnswer(elems, others), nil
}
