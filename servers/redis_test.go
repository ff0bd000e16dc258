package servers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coupharness/coup/workloads"
)

// fakeRedis is a Redis server or a Sentinel in a few lines, over RESP: it
// answers each command with answer(args), and counts the commands.
type fakeRedis struct {
	ln     net.Listener
	answer func(args []string) string
	mu     sync.Mutex
	seen   []string
}

func newFakeRedis(t *testing.T, answer func(args []string) string) *fakeRedis {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRedis{ln: ln, answer: answer}
	go f.serve()
	t.Cleanup(func() { ln.Close() })
	return f
}

func (f *fakeRedis) addr() string { return f.ln.Addr().String() }

func (f *fakeRedis) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func (f *fakeRedis) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			r := bufio.NewReader(c)
			for {
				cmd, err := readReply(r)
				if err != nil {
					return
				}
				var args []string
				for _, a := range cmd.Arr {
					args = append(args, a.Str)
				}
				f.mu.Lock()
				f.seen = append(f.seen, strings.Join(args, " "))
				f.mu.Unlock()
				reply := f.answer(args)
				if reply == "" {
					return // hang up
				}
				if _, err := c.Write([]byte(reply)); err != nil {
					return
				}
			}
		}()
	}
}

func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

// sentinelNaming is a Sentinel that names the server at addr master.
func sentinelNaming(addr string) func([]string) string {
	host, port, _ := net.SplitHostPort(addr)
	return func(args []string) string {
		if len(args) == 3 && args[0] == "SENTINEL" && args[1] == "get-master-addr-by-name" && args[2] == redisMasterName {
			return "*2\r\n" + bulk(host) + bulk(port)
		}
		return "-ERR unknown\r\n"
	}
}

// store is a Redis server's keys, its one set and its role, for a fake
// server.
type store struct {
	mu   sync.Mutex
	role string
	kv   map[string]string
	set  []string
}

func (s *store) answer(args []string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch args[0] {
	case "ROLE":
		return "*1\r\n" + bulk(s.role)
	case "GET":
		v, ok := s.kv[args[1]]
		if !ok {
			return "$-1\r\n"
		}
		return bulk(v)
	case "SET":
		if s.role != "master" {
			return "-READONLY You can't write against a read only replica.\r\n"
		}
		s.kv[args[1]] = args[2]
		return "+OK\r\n"
	case "SADD":
		for _, e := range s.set {
			if e == args[2] {
				return ":0\r\n"
			}
		}
		s.set = append(s.set, args[2])
		return ":1\r\n"
	case "SMEMBERS":
		out := fmt.Sprintf("*%d\r\n", len(s.set))
		for _, e := range s.set {
			out += bulk(e)
		}
		return out
	case "EVAL":
		v, ok := s.kv[args[3]]
		switch {
		case !ok:
			return ":-1\r\n"
		case v != args[4]:
			return ":0\r\n"
		}
		s.kv[args[3]] = args[5]
		return ":1\r\n"
	}
	return "-ERR unknown command\r\n"
}

func redisOp(process, f string, fields map[string]any) workloads.Op {
	return workloads.Op{Process: process, F: f, Fields: fields}
}

// answerOf reads an answer body: its type and, for an error, its code.
// Every answer names the master that served it.
func answerOf(t *testing.T, body []byte) (string, int) {
	t.Helper()
	var a struct {
		Type     string `json:"type"`
		Code     int    `json:"code"`
		ServedBy string `json:"served_by"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	if a.ServedBy == "" {
		t.Errorf("answer %s names no member that served it", body)
	}
	return a.Type, a.Code
}

// The Redis client asks its own member's Sentinel first for the master,
// goes on to the next when one does not answer, checks the master's ROLE,
// keeps its connection for the process's later operations, reads, writes
// and compare-and-sets there, and asks the Sentinels again when the
// server answers READONLY.
func TestRedisClientFollowsSentinel(t *testing.T) {
	m1 := &store{role: "master", kv: map[string]string{}}
	m2 := &store{role: "slave", kv: map[string]string{}}
	r1 := newFakeRedis(t, m1.answer)
	r2 := newFakeRedis(t, m2.answer)
	named := r1.addr()
	var namedMu sync.Mutex
	sentinel := func(args []string) string {
		namedMu.Lock()
		defer namedMu.Unlock()
		return sentinelNaming(named)(args)
	}
	s2 := newFakeRedis(t, sentinel)
	s3 := newFakeRedis(t, sentinel)
	// n1's Sentinel listens nowhere: a refused connection.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	addrs := map[string]map[string]string{
		"n1": {"client": r1.addr(), "sentinel": deadAddr},
		"n2": {"client": r2.addr(), "sentinel": s2.addr()},
		"n3": {"client": "127.0.0.1:1", "sentinel": s3.addr()},
	}
	names := map[string]string{r1.addr(): "n1", r2.addr(): "n2"}
	c := newRedisKV(addrs, names)
	defer c.close()
	ctx := context.Background()

	body, err := c.Do(ctx, "n1", redisOp("c1", workloads.FWrite, map[string]any{"key": 3, "value": 7}))
	if err != nil {
		t.Fatal(err)
	}
	if typ, _ := answerOf(t, body); typ != "write_ok" {
		t.Errorf("write: %s", body)
	}
	if got := s2.commands(); len(got) != 1 || len(s3.commands()) != 0 {
		t.Errorf("n1's Sentinel refused, so n2's was asked next (and n3's not): n2's saw %q, n3's %q", got, s3.commands())
	}
	body, _ = c.Do(ctx, "n1", redisOp("c1", workloads.FRead, map[string]any{"key": 3}))
	if string(body) != `{"served_by":"n1","type":"read_ok","value":7}` {
		t.Errorf("read: %s", body)
	}
	body, _ = c.Do(ctx, "n1", redisOp("c1", workloads.FCas, map[string]any{"key": 3, "from": 7, "to": 8}))
	if typ, _ := answerOf(t, body); typ != "cas_ok" {
		t.Errorf("cas: %s", body)
	}
	body, _ = c.Do(ctx, "n1", redisOp("c1", workloads.FCas, map[string]any{"key": 3, "from": 7, "to": 9}))
	if typ, code := answerOf(t, body); typ != "error" || code != 22 {
		t.Errorf("a cas from the wrong value: %s", body)
	}
	body, _ = c.Do(ctx, "n1", redisOp("c1", workloads.FRead, map[string]any{"key": 4}))
	if typ, code := answerOf(t, body); typ != "error" || code != 20 {
		t.Errorf("a read of a missing key: %s", body)
	}
	// The set workload: an add is SADD (one whose element is there
	// already, its first answer lost, is acknowledged again), a read
	// SMEMBERS.
	for _, e := range []int{5, 2, 5} {
		body, _ = c.Do(ctx, "n1", redisOp("c1", workloads.FAdd, map[string]any{"element": e}))
		if typ, _ := answerOf(t, body); typ != "add_ok" {
			t.Errorf("add %d: %s", e, body)
		}
	}
	body, _ = c.Do(ctx, "n1", redisOp("c1", workloads.FRead, map[string]any{}))
	if string(body) != `{"served_by":"n1","type":"read_ok","value":[2,5]}` {
		t.Errorf("the set's read: %s", body)
	}
	if n := len(s2.commands()); n != 1 {
		t.Errorf("the Sentinels were asked %d times for nine operations of one process, want once", n)
	}
	if got := r1.commands(); got[0] != "ROLE" {
		t.Errorf("the master was not asked its ROLE first: %q", got)
	}

	// The master becomes a replica: a write is refused (READONLY,
	// definite), the connection dropped, and the next operation asks
	// the Sentinels again, which name n2; n2 says it is a replica too:
	// the operation fails, definitely, and sends nothing there but ROLE.
	m1.mu.Lock()
	m1.role = "slave"
	m1.mu.Unlock()
	body, err = c.Do(ctx, "n1", redisOp("c1", workloads.FWrite, map[string]any{"key": 3, "value": 1}))
	if typ, code := answerOf(t, body); err != nil || typ != "error" || code != 11 || !strings.Contains(string(body), "READONLY") {
		t.Errorf("a write to a replica: %s, %v", body, err)
	}
	namedMu.Lock()
	named = r2.addr()
	namedMu.Unlock()
	_, err = c.Do(ctx, "n1", redisOp("c1", workloads.FRead, map[string]any{"key": 3}))
	if !errors.Is(err, errDefinite) || !strings.Contains(err.Error(), "n2, which Sentinel named master, says it is slave") {
		t.Errorf("an operation whose master is a replica: %v", err)
	}
	if got := r2.commands(); len(got) != 1 || got[0] != "ROLE" {
		t.Errorf("n2 saw %q, want ROLE alone", got)
	}
	// n2 is promoted: the next operation goes there.
	m2.mu.Lock()
	m2.role = "master"
	m2.mu.Unlock()
	body, err = c.Do(ctx, "n1", redisOp("c1", workloads.FWrite, map[string]any{"key": 3, "value": 5}))
	if typ, _ := answerOf(t, body); err != nil || typ != "write_ok" || m2.kv["coup-kv/3"] != "5" {
		t.Errorf("after the promotion: %s, %v; n2 holds %q", body, err, m2.kv)
	}
}

// A master that breaks the connection after a write was sent leaves it
// unknown; one that no Sentinel names fails it, definitely.
func TestRedisClientOutcomes(t *testing.T) {
	m := &store{role: "master", kv: map[string]string{}}
	var hang sync.Once
	r := newFakeRedis(t, func(args []string) string {
		if args[0] == "SET" {
			reply := ""
			hang.Do(func() { reply = "x" })
			if reply != "" {
				return "" // hang up with the write unanswered
			}
		}
		return m.answer(args)
	})
	s := newFakeRedis(t, sentinelNaming(r.addr()))
	c := newRedisKV(map[string]map[string]string{"n1": {"client": r.addr(), "sentinel": s.addr()}}, map[string]string{r.addr(): "n1"})
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Do(ctx, "n1", redisOp("c1", workloads.FWrite, map[string]any{"key": 1, "value": 2}))
	if err == nil || errors.Is(err, errDefinite) {
		t.Errorf("a write whose connection broke before its answer: %v, want an unknown outcome", err)
	}
	if body, err := c.Do(ctx, "n1", redisOp("c1", workloads.FWrite, map[string]any{"key": 1, "value": 2})); err != nil || !strings.Contains(string(body), "write_ok") {
		t.Errorf("the next write, on a new connection: %s, %v", body, err)
	}

	lost := newFakeRedis(t, sentinelNaming("127.0.0.9:6379"))
	c2 := newRedisKV(map[string]map[string]string{"n1": {"client": r.addr(), "sentinel": lost.addr()}}, map[string]string{r.addr(): "n1"})
	defer c2.close()
	_, err = c2.Do(ctx, "n1", redisOp("c1", workloads.FRead, map[string]any{"key": 1}))
	if !errors.Is(err, errDefinite) || !strings.Contains(err.Error(), "the address of no node") {
		t.Errorf("a master no node has: %v", err)
	}
}

// RESP replies are read within bounds: a reply that breaks them is an
// error, never a hang or a huge allocation.
func TestRESPBounds(t *testing.T) {
	tests := []struct{ in, want string }{
		{"+OK\r\n", ""},
		{":-3\r\n", ""},
		{"$3\r\nabc\r\n", ""},
		{"$-1\r\n", ""},
		{"*2\r\n$1\r\na\r\n:1\r\n", ""},
		{"$99999999\r\n", "more than"},
		{"*999999\r\n", "more than"},
		{"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", "nested deeper"},
		{"$3\r\nabcd\r\n", "not ended by CRLF"},
		{"?x\r\n", "type"},
		{"+OK\n", "CRLF"},
	}
	for _, tt := range tests {
		_, err := readReply(bufio.NewReader(strings.NewReader(tt.in)))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: %v, want an error saying %q", tt.in, err, tt.want)
		}
	}
}

// A reply of many large strings, each within the bounds, is cut off once
// the whole passes respMaxReply: a server cannot make the client hold
// more, whatever it sends.
func TestRESPReplyBudget(t *testing.T) {
	bulk := "$1000000\r\n" + strings.Repeat("x", 1000000) + "\r\n"
	r := io.MultiReader(strings.NewReader("*100000\r\n"), &repeatReader{s: bulk})
	_, err := readReply(bufio.NewReaderSize(r, 1<<16))
	if err == nil || !strings.Contains(err.Error(), "a reply of more than") {
		t.Errorf("%v, want the reply cut off at its bound", err)
	}
}

// repeatReader reads s again and again, without end.
type repeatReader struct {
	s   string
	off int
}

func (r *repeatReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		c := copy(b[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	return n, nil
}

// FuzzRESP reads any bytes as a reply: it ends, with a value or an
// error, and never panics.
func FuzzRESP(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n$1\r\na\r\n:1\r\n", "$-1\r\n", "-ERR x\r\n", "*1\r\n*1\r\n$0\r\n\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = readReply(bufio.NewReader(strings.NewReader(string(b))))
	})
}
