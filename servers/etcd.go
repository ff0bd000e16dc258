package servers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"syscall"

	"github.com/coupharness/coup/workloads"
)

// etcdKV is the lin-kv client of etcd, over its JSON gateway (the v3 API
// as JSON over HTTP, keys and values in base64): no dependency, and what
// the official Go client does over gRPC. Each client process talks to the
// member its operation names, at the address its host reaches it by
// (placement.go: through the proxy, unless the member is on its host).
type etcdKV struct {
	addr         map[string]string // node → host:port of its client port
	serializable bool
	// prefix comes before every key the client writes or reads (a
	// session's episode keeps its keys apart from the episodes before
	// it); "" in a run of its own.
	prefix string
	http   *http.Client
	locks  etcdLocks
}

// setDial has the client dial with dial: from its host.
func (c *etcdKV) setDial(dial dialFunc) {
	c.http = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: dial}}
}

var _ opClient = (*etcdKV)(nil)

func newEtcdKV(addr map[string]string, serializable bool) *etcdKV {
	// No keep-alive: each operation is one connection, so that a server
	// that was killed and restarted is reached anew.
	return &etcdKV{addr: addr, serializable: serializable, http: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func etcdKey(prefix string, k int) string { return prefix + "coup-kv/" + strconv.Itoa(k) }

// Do carries out the operation against the node's member; its answer
// names the member that served it (served_by: its raft id in hexadecimal,
// as etcd's log names it, from the last response header).
func (c *etcdKV) Do(ctx context.Context, node string, op workloads.Op) ([]byte, error) {
	var served string
	body, err := c.do(context.WithValue(ctx, servedSink{}, &served), node, op)
	return withServedBy(body, served), err
}

func (c *etcdKV) do(ctx context.Context, node string, op workloads.Op) ([]byte, error) {
	if sf, e, ok := setOpOf(op); ok {
		return c.set(ctx, node, sf, e)
	}
	f, err := fieldsOf(op)
	if err != nil {
		return nil, err
	}
	switch op.F {
	case workloads.FAcquire:
		return c.acquire(ctx, node, op.Value)
	case workloads.FRelease:
		return c.release(ctx, node, op.Value)
	}
	key := b64(etcdKey(c.prefix, f.Key))
	switch op.F {
	case workloads.FRead:
		var out struct {
			Kvs []struct {
				Value string `json:"value"`
			} `json:"kvs"`
		}
		if err := c.call(ctx, node, "kv/range", map[string]any{"key": key, "serializable": c.serializable}, &out); err != nil {
			return nil, err
		}
		if len(out.Kvs) == 0 {
			return answerError(20, "key does not exist"), nil
		}
		v, err := base64.StdEncoding.DecodeString(out.Kvs[0].Value)
		if err != nil {
			return nil, fmt.Errorf("read: a value that is not base64: %w", err)
		}
		return answer("read_ok", json.RawMessage(readValue(v))), nil
	case workloads.FWrite:
		if err := c.call(ctx, node, "kv/put", map[string]any{"key": key, "value": b64(strconv.Itoa(f.Value))}, nil); err != nil {
			return nil, err
		}
		return answer("write_ok", nil), nil
	case workloads.FCas:
		// One transaction: if the key's value is from, put to; else read
		// the key, to tell a missing key (20) from another value (22).
		var out struct {
			Succeeded bool `json:"succeeded"`
			Responses []struct {
				ResponseRange struct {
					Kvs []json.RawMessage `json:"kvs"`
				} `json:"response_range"`
			} `json:"responses"`
		}
		txn := map[string]any{
			"compare": []map[string]any{{"key": key, "target": "VALUE", "result": "EQUAL", "value": b64(strconv.Itoa(f.From))}},
			"success": []map[string]any{{"request_put": map[string]any{"key": key, "value": b64(strconv.Itoa(f.To))}}},
			"failure": []map[string]any{{"request_range": map[string]any{"key": key}}},
		}
		if err := c.call(ctx, node, "kv/txn", txn, &out); err != nil {
			return nil, err
		}
		switch {
		case out.Succeeded:
			return answer("cas_ok", nil), nil
		case len(out.Responses) > 0 && len(out.Responses[0].ResponseRange.Kvs) == 0:
			return answerError(20, "key does not exist"), nil
		}
		return answerError(22, "the value is not "+strconv.Itoa(f.From)), nil
	}
	return nil, fmt.Errorf("%w: the etcd client does not do %q", errDefinite, op.F)
}

// readValue is a stored value as the read's JSON: the integer a write
// wrote, or, if something else is there, its text as a JSON string.
func readValue(v []byte) []byte {
	if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return v
	}
	b, _ := json.Marshal(string(v))
	return b
}

// call posts a request to the member's gateway and reads its answer into
// out (when not nil). A refused connection is definite; anything else
// that is not a 200 with a JSON body is an unknown outcome.
func (c *etcdKV) call(ctx context.Context, node, path string, in, out any) error {
	addr, ok := c.addr[node]
	if !ok {
		return fmt.Errorf("%w: no node %q", errDefinite, node)
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v3/"+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("%w: %v", errDefinite, err)
		}
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return err
	}
	var head struct {
		Header struct {
			MemberID string `json:"member_id"`
		} `json:"header"`
	}
	if json.Unmarshal(b, &head) == nil {
		if id, err := strconv.ParseUint(head.Header.MemberID, 10, 64); err == nil {
			setServed(ctx, strconv.FormatUint(id, 16))
		}
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Message string `json:"message"`
			Error   string `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		msg := e.Message
		if msg == "" {
			msg = e.Error
		}
		return fmt.Errorf("%s: %s", resp.Status, msg)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
