package servers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"
)

// zkLockDir is the parent of the lock nodes the lock workload's clients
// share.
const zkLockDir = "/coup-lock"

// zkLocks is what the ZooKeeper client keeps of each lock client, by the
// owner's name (which outlives a process retired after a timeout): its
// lock node once created, and whether it was granted.
type zkLocks struct {
	mu sync.Mutex
	by map[string]*zkHold
}

type zkHold struct {
	path    string // the lock node, under zkLockDir
	session int64  // the session that created it
	granted bool
}

// zkSeq is the sequence number ZooKeeper appended to a lock node's name
// (ten digits), -1 when it has none.
func zkSeq(name string) int64 {
	if len(name) < 10 {
		return -1
	}
	n, err := strconv.ParseInt(name[len(name)-10:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// acquire is ZooKeeper's lock recipe: an ephemeral sequential node under
// the lock's parent (created with a GUID in its name, so that a create
// whose answer was lost is found again); the client whose node has the
// lowest sequence number holds the lock, and each other waits for the
// node just below its own to go. The node's sequence number is the
// fencing token: ZooKeeper numbers a parent's children in the order it
// creates them. The node lives as long as the session that created it: a
// client that cannot keep its session alive (paused past its timeout, or
// cut off) loses the lock when the session expires, whether or not it
// knows.
func (c *zkKV) acquire(ctx context.Context, conn *zk.Conn, owner string) ([]byte, error) {
	if _, err := conn.Create(c.node0(zkLockDir), nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return nil, zkErr(err, true)
	}
	session := conn.SessionID()
	path, err := conn.CreateProtectedEphemeralSequential(c.node0(zkLockDir)+"/lock-", []byte(owner), zk.WorldACL(zk.PermAll))
	if err != nil {
		return nil, zkErr(err, false) // it may exist, and be granted
	}
	if ctx.Err() != nil { // abandoned while it was created: withdraw it
		_ = conn.Delete(path, -1)
		return nil, ctx.Err()
	}
	name := path[strings.LastIndexByte(path, '/')+1:]
	hold := &zkHold{path: path, session: session}
	c.locks.mu.Lock()
	if c.locks.by == nil {
		c.locks.by = map[string]*zkHold{}
	}
	c.locks.by[owner] = hold
	c.locks.mu.Unlock()
	for {
		children, _, err := conn.Children(c.node0(zkLockDir))
		if err != nil {
			return nil, zkErr(err, false)
		}
		slices.SortFunc(children, func(a, b string) int { return int(zkSeq(a) - zkSeq(b)) })
		i := slices.Index(children, name)
		if i < 0 {
			return answerError(14, fmt.Sprintf("the lock node %s is gone: session 0x%x expired while it waited", name, session)), nil
		}
		if i == 0 {
			c.locks.mu.Lock()
			hold.granted = true
			c.locks.mu.Unlock()
			b, _ := json.Marshal(map[string]any{"type": "acquire_ok", "token": zkSeq(name),
				"value": fmt.Sprintf("session 0x%x timeout %s node %s", session, c.sessionTimeout, zkShort(name))})
			return b, nil
		}
		ok, _, ch, err := conn.ExistsW(c.node0(zkLockDir) + "/" + children[i-1])
		if err != nil {
			return nil, zkErr(err, false)
		}
		if !ok {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err() // it may yet be granted: the node stays, until a release
		}
	}
}

// zkShort is a lock node's name without the GUID of its create.
func zkShort(name string) string {
	if i := strings.LastIndexByte(name, '-'); i >= 0 && strings.HasPrefix(name, "_c_") {
		if j := strings.Index(name, "-"); j >= 0 && j < i {
			return name[j+1:]
		}
	}
	return name
}

// release deletes the owner's lock node. A client that holds nothing (its
// acquire failed or timed out before it was granted) withdraws its node,
// if any, and the release fails, as the lock workload expects of one that
// did not hold. A holder whose node is already gone had its session
// expire: the lock was no longer its own, though it believed so until
// now; the release says so.
func (c *zkKV) release(conn *zk.Conn, owner string) ([]byte, error) {
	c.locks.mu.Lock()
	hold := c.locks.by[owner]
	delete(c.locks.by, owner)
	c.locks.mu.Unlock()
	if hold == nil {
		return answerError(14, "not holding the lock"), nil
	}
	err := conn.Delete(hold.path, -1)
	gone := errors.Is(err, zk.ErrNoNode)
	if err != nil && !gone {
		// Kept, so that the release the workload asks for next, under a
		// new process, deletes the node; else it would block the lock for
		// as long as this session lives.
		c.locks.mu.Lock()
		if c.locks.by[owner] == nil {
			c.locks.by[owner] = hold
		}
		c.locks.mu.Unlock()
		return nil, zkErr(err, false)
	}
	if !hold.granted {
		return answerError(14, "not holding the lock"), nil
	}
	if gone {
		return answer("release_ok", json.RawMessage(strconv.Quote(fmt.Sprintf("session 0x%x had expired before the release: its lock node %s was gone", hold.session, zkShort(hold.path[strings.LastIndexByte(hold.path, '/')+1:]))))), nil
	}
	return answer("release_ok", nil), nil
}
