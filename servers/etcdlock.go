package servers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// etcdLockName is the lock the lock workload's clients share.
const etcdLockName = "coup-lock"

// etcdLocks is what the etcd client keeps of each lock client (by the
// owner's name, which outlives a process retired after a timeout): its
// lease, kept alive while it holds or waits for the lock, and its lock
// key once granted.
type etcdLocks struct {
	mu  sync.Mutex
	ttl time.Duration
	by  map[string]*etcdHold
}

type etcdHold struct {
	lease string // the lease's id, as etcd writes it
	key   string // the lock key, base64, once granted
	stop  context.CancelFunc
}

// acquire grants a lease of the scenario's TTL, keeps it alive from then
// on, and asks etcd's lock service for the lock under it; etcd answers
// when the lock is granted, with the revision of the grant, which is the
// fencing token (etcdctl lock hands its command the same as
// ETCD_LOCK_REV). The lease lives as long as the client renews it: a
// client that cannot (its member paused or cut off) loses the lock when
// the lease expires, whether or not it knows.
func (c *etcdKV) acquire(ctx context.Context, node, owner string) ([]byte, error) {
	ttl := max(int64(c.locks.ttl/time.Second), 1)
	var grant struct {
		ID  string `json:"ID"`
		TTL string `json:"TTL"`
	}
	if err := c.call(ctx, node, "lease/grant", map[string]any{"TTL": ttl}, &grant); err != nil {
		return nil, leaseErr(err)
	}
	keep, stop := context.WithCancel(context.Background())
	hold := &etcdHold{lease: grant.ID, stop: stop}
	c.locks.mu.Lock()
	if c.locks.by == nil {
		c.locks.by = map[string]*etcdHold{}
	}
	if old := c.locks.by[owner]; old != nil {
		old.stop()
	}
	c.locks.by[owner] = hold
	c.locks.mu.Unlock()
	go c.keepAlive(keep, node, grant.ID, c.locks.ttl/3)
	var out struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
		Key string `json:"key"`
	}
	if err := c.call(ctx, node, "lock/lock", map[string]any{"name": b64(c.prefix + etcdLockName), "lease": grant.ID}, &out); err != nil {
		return nil, err // it may yet be granted: the lease stays, until a release
	}
	rev, err := strconv.ParseInt(out.Header.Revision, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("lock: a revision that is not a number: %q", out.Header.Revision)
	}
	c.locks.mu.Lock()
	hold.key = out.Key
	c.locks.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"type": "acquire_ok", "token": rev, "value": "lease " + leaseHex(grant.ID) + " ttl " + grant.TTL + "s"})
	return b, nil
}

// release unlocks and revokes the lease. A client that holds nothing (its
// acquire failed or timed out without a grant) has nothing to release:
// its lease, if any, is revoked, and the release fails, as the lock
// workload expects of one that did not hold.
func (c *etcdKV) release(ctx context.Context, node, owner string) ([]byte, error) {
	c.locks.mu.Lock()
	hold := c.locks.by[owner]
	delete(c.locks.by, owner)
	c.locks.mu.Unlock()
	if hold == nil {
		return answerError(14, "not holding the lock"), nil
	}
	hold.stop()
	if hold.key == "" {
		_ = c.call(ctx, node, "lease/revoke", map[string]any{"ID": hold.lease}, nil)
		return answerError(14, "not holding the lock"), nil
	}
	// Whether the lease outlived the hold: etcd answers a TTL of -1 for a
	// lease it no longer knows, which is one that expired (this client
	// revokes its leases only after their release).
	var live struct {
		TTL string `json:"TTL"`
	}
	expired := c.call(ctx, node, "lease/timetolive", map[string]any{"ID": hold.lease}, &live) == nil && live.TTL == "-1"
	if err := c.call(ctx, node, "lock/unlock", map[string]any{"key": hold.key}, nil); err != nil {
		return nil, err
	}
	_ = c.call(ctx, node, "lease/revoke", map[string]any{"ID": hold.lease}, nil)
	if expired {
		return answer("release_ok", json.RawMessage(strconv.Quote("lease "+leaseHex(hold.lease)+" had expired before the release: etcd no longer knew it"))), nil
	}
	return answer("release_ok", nil), nil
}

// keepAlive renews a lease every period until ctx ends. etcd's gateway
// serves the keep-alive stream one renewal per request.
func (c *etcdKV) keepAlive(ctx context.Context, node, lease string, every time.Duration) {
	t := time.NewTicker(max(every, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, every)
		c.renew(rctx, node, lease)
		cancel()
	}
}

// renew asks for one renewal and reads its answer (the first object of
// the stream), then hangs up.
func (c *etcdKV) renew(ctx context.Context, node, lease string) {
	addr, ok := c.addr[node]
	if !ok {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v3/lease/keepalive", strings.NewReader(`{"ID":"`+lease+`"}`))
	if err != nil {
		return
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	_, _ = io.CopyN(io.Discard, resp.Body, 512)
}

// close ends every keep-alive (the run is over).
func (c *etcdKV) close() {
	c.locks.mu.Lock()
	defer c.locks.mu.Unlock()
	for _, h := range c.locks.by {
		h.stop()
	}
	c.locks.by = nil
}

// leaseErr: a lease not granted is no lock asked for.
func leaseErr(err error) error {
	if errors.Is(err, errDefinite) {
		return err
	}
	return fmt.Errorf("%w: lease: %v", errDefinite, err)
}

// leaseHex writes a lease id (decimal in the gateway's JSON) in hex, as
// etcdctl and etcd's own logs do.
func leaseHex(id string) string {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return id
	}
	return strconv.FormatInt(n, 16)
}
