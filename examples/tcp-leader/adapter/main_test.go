package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const waitLimit = 10 * time.Second

// Answers of a fake member that are not lines.
const (
	hangUp = "\x00hang up"   // close the connection, after what comes before
	silent = "\x00no answer" // answer nothing, until the client hangs up
)

// fake is a member of the store on a loopback port: it answers every
// request line by its handler, and records the lines it read.
type fake struct {
	addr string
	mu   sync.Mutex
	got  []string
}

func newFake(t *testing.T, handle func(line string) string) *fake {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					line = strings.TrimSuffix(line, "\n")
					f.mu.Lock()
					f.got = append(f.got, line)
					f.mu.Unlock()
					ans := handle(line)
					if ans == silent {
						io.Copy(io.Discard, c)
						return
					}
					ans, hang := strings.CutSuffix(ans, hangUp)
					io.WriteString(c, ans)
					if hang {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return f
}

// lines is what the fake has read so far.
func (f *fake) lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// answering is a handler that answers every line with ans and a newline.
func answering(ans string) func(string) string {
	return func(string) string { return ans + "\n" }
}

// table is a handler that serves GET, PUT and CAS as the leader does.
func table() func(string) string {
	var mu sync.Mutex
	kv := map[int64]int64{}
	return func(line string) string {
		mu.Lock()
		defer mu.Unlock()
		f := strings.Fields(line)
		var a []int64
		for _, s := range f[1:] {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return "ERR not an int64\n"
			}
			a = append(a, v)
		}
		switch {
		case f[0] == "GET" && len(a) == 1:
			if v, ok := kv[a[0]]; ok {
				return fmt.Sprintf("OK %d\n", v)
			}
			return "NOTFOUND\n"
		case f[0] == "PUT" && len(a) == 2:
			kv[a[0]] = a[1]
			return "OK\n"
		case f[0] == "CAS" && len(a) == 3:
			v, ok := kv[a[0]]
			switch {
			case !ok:
				return "NOTFOUND\n"
			case v != a[1]:
				return fmt.Sprintf("MISMATCH %d\n", v)
			}
			kv[a[0]] = a[2]
			return "OK\n"
		}
		return "ERR malformed\n"
	}
}

// syncBuffer is the adapter's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// session runs serve on pipes, as coup runs the adapter.
type session struct {
	t     *testing.T
	in    *io.PipeWriter
	out   chan string
	done  chan error
	log   *syncBuffer
	msgID int64
}

func newSession(t *testing.T, opts options) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, out: make(chan string, 1000), done: make(chan error, 1), log: &syncBuffer{}}
	go func() {
		err := serve(inR, outW, s.log, opts)
		outW.Close()
		s.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			s.out <- sc.Text()
		}
		close(s.out)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(waitLimit):
			t.Errorf("serve did not return when stdin closed")
		}
		if t.Failed() {
			t.Logf("stderr of the adapter:\n%s", s.log)
		}
	})
	return s
}

func defaults() options { return options{port: "client", timeout: 5 * time.Second} }

// send writes one line to the adapter's stdin.
func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("stdin: %v", err)
	}
}

// answer is a message on the adapter's stdout.
type answer struct {
	Src  string `json:"src"`
	Dest string `json:"dest"`
	Body struct {
		Type      string `json:"type"`
		InReplyTo *int64 `json:"in_reply_to"`
		Value     *int64 `json:"value"`
		Code      *int   `json:"code"`
		Text      string `json:"text"`
	} `json:"body"`
}

// recvLine reads the next line of the adapter's stdout.
func (s *session) recvLine() string {
	s.t.Helper()
	select {
	case line, ok := <-s.out:
		if !ok {
			s.t.Fatal("stdout ended")
		}
		return line
	case <-time.After(waitLimit):
		s.t.Fatal("no answer")
	}
	return ""
}

func (s *session) recv() answer {
	s.t.Helper()
	line := s.recvLine()
	var a answer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		s.t.Fatalf("stdout line %q: %v", line, err)
	}
	if a.Body.InReplyTo == nil {
		s.t.Fatalf("stdout line %q has no in_reply_to", line)
	}
	return a
}

// init sends the init, with each member's client port at its fake, and
// checks its answer.
func (s *session) init(members map[string]*fake) {
	s.t.Helper()
	addrs := map[string]map[string]string{}
	var ids []string
	for id, f := range members {
		addrs[id] = map[string]string{"client": f.addr, "peer": "127.0.0.1:1"}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	body, _ := json.Marshal(map[string]any{"type": "init", "msg_id": 0, "node_id": "c1", "node_ids": ids, "addrs": addrs})
	s.send(`{"src":"coup","dest":"c1","body":` + string(body) + `}`)
	want := `{"src":"c1","dest":"coup","body":{"type":"init_ok","in_reply_to":0}}`
	if got := s.recvLine(); got != want {
		s.t.Fatalf("init answered %s, want %s", got, want)
	}
}

// request sends a request to member with the next msg_id, which it
// returns; fields is the body's JSON past type and msg_id.
func (s *session) request(member, typ, fields string) int64 {
	s.t.Helper()
	s.msgID++
	if fields != "" {
		fields = "," + fields
	}
	s.send(fmt.Sprintf(`{"src":"c1","dest":%q,"body":{"type":%q,"msg_id":%d%s}}`, member, typ, s.msgID, fields))
	return s.msgID
}

// ask sends a request and returns its answer, checking the envelope.
func (s *session) ask(member, typ, fields string) answer {
	s.t.Helper()
	id := s.request(member, typ, fields)
	a := s.recv()
	if *a.Body.InReplyTo != id || a.Src != member || a.Dest != "c1" {
		s.t.Fatalf("%s %s answered %+v, want in_reply_to %d from %s to c1", typ, fields, a, id, member)
	}
	return a
}

// expectOK checks an answer's type, and its value when want is not nil.
func expectOK(t *testing.T, what string, a answer, typ string, want *int64) {
	t.Helper()
	switch {
	case a.Body.Type != typ:
		t.Errorf("%s: got %s (code %v, %q), want %s", what, a.Body.Type, fmtCode(a.Body.Code), a.Body.Text, typ)
	case want != nil && (a.Body.Value == nil || *a.Body.Value != *want):
		t.Errorf("%s: value %v, want %d", what, a.Body.Value, *want)
	case want == nil && a.Body.Value != nil:
		t.Errorf("%s: value %d, want none", what, *a.Body.Value)
	}
}

// expectError checks that an answer is an error of one of the codes.
func expectError(t *testing.T, what string, a answer, codes ...int) {
	t.Helper()
	if a.Body.Type != "error" || a.Body.Code == nil || !slices.Contains(codes, *a.Body.Code) {
		t.Errorf("%s: got %s (code %v, %q), want an error of code %v", what, a.Body.Type, fmtCode(a.Body.Code), a.Body.Text, codes)
	}
}

func fmtCode(c *int) string {
	if c == nil {
		return "none"
	}
	return strconv.Itoa(*c)
}

func ptr(v int64) *int64 { return &v }

func TestInit(t *testing.T) {
	t.Parallel()
	n1 := newFake(t, table())
	s := newSession(t, defaults())
	expectError(t, "a read before the init", s.ask("n1", "read", `"key":1`), codeUnavailable)
	s.init(map[string]*fake{"n1": n1})
	expectError(t, "a read of a missing key", s.ask("n1", "read", `"key":1`), codeNoKey)
	s.init(map[string]*fake{"n1": n1}) // a second init is answered too
	if got := n1.lines(); !slices.Equal(got, []string{"GET 1"}) {
		t.Errorf("n1 read %q, want only the request after the init", got)
	}
}

func TestReadWriteCas(t *testing.T) {
	t.Parallel()
	n1, n2 := newFake(t, table()), newFake(t, table())
	s := newSession(t, defaults())
	s.init(map[string]*fake{"n1": n1, "n2": n2})

	expectOK(t, "write", s.ask("n2", "write", `"key":3,"value":4`), "write_ok", nil)
	expectOK(t, "read", s.ask("n2", "read", `"key":3`), "read_ok", ptr(4))
	expectOK(t, "cas", s.ask("n2", "cas", `"key":3,"from":4,"to":1`), "cas_ok", nil)
	expectOK(t, "read after cas", s.ask("n2", "read", `"key":3`), "read_ok", ptr(1))
	a := s.ask("n2", "cas", `"key":3,"from":4,"to":2`)
	expectError(t, "cas from the wrong value", a, codePrecondFail)
	if a.Body.Text != "expected 4, found 1" {
		t.Errorf("cas from the wrong value: text %q", a.Body.Text)
	}
	expectError(t, "read of a missing key", s.ask("n2", "read", `"key":9`), codeNoKey)
	expectError(t, "cas of a missing key", s.ask("n2", "cas", `"key":9,"from":1,"to":2`), codeNoKey)
	expectOK(t, "write of extremes", s.ask("n2", "write", `"key":-9223372036854775808,"value":9223372036854775807`), "write_ok", nil)
	expectOK(t, "read of extremes", s.ask("n2", "read", `"key":-9223372036854775808`), "read_ok", ptr(9223372036854775807))
	expectError(t, "read at n1, whose table is empty", s.ask("n1", "read", `"key":3`), codeNoKey)

	want := []string{"PUT 3 4", "GET 3", "CAS 3 4 1", "GET 3", "CAS 3 4 2", "GET 9", "CAS 9 1 2",
		"PUT -9223372036854775808 9223372036854775807", "GET -9223372036854775808"}
	if got := n2.lines(); !slices.Equal(got, want) {
		t.Errorf("n2 read %q, want %q", got, want)
	}
	if got := n1.lines(); !slices.Equal(got, []string{"GET 3"}) {
		t.Errorf("n1 read %q, want the one request sent to it", got)
	}
}

func TestReadZero(t *testing.T) {
	t.Parallel()
	n1 := newFake(t, answering("OK 0"))
	s := newSession(t, defaults())
	s.init(map[string]*fake{"n1": n1})
	a := s.ask("n1", "read", `"key":1`)
	expectOK(t, "read of 0", a, "read_ok", ptr(0))
}

func TestRedirect(t *testing.T) {
	t.Parallel()
	n1 := newFake(t, answering("NOTLEADER n2"))
	n2 := newFake(t, table())
	n3 := newFake(t, answering("NOTLEADER n4"))
	n4 := newFake(t, answering("NOTLEADER n3"))
	n5 := newFake(t, answering("NOTLEADER n9")) // a member not in the init
	s := newSession(t, defaults())
	s.init(map[string]*fake{"n1": n1, "n2": n2, "n3": n3, "n4": n4, "n5": n5})

	expectOK(t, "write through a follower", s.ask("n1", "write", `"key":1,"value":2`), "write_ok", nil)
	expectOK(t, "read through a follower", s.ask("n1", "read", `"key":1`), "read_ok", ptr(2))
	if got, want := n1.lines(), []string{"PUT 1 2", "GET 1"}; !slices.Equal(got, want) {
		t.Errorf("n1 read %q, want %q", got, want)
	}
	if got, want := n2.lines(), []string{"PUT 1 2", "GET 1"}; !slices.Equal(got, want) {
		t.Errorf("n2 read %q, want %q", got, want)
	}

	// Two members that name each other: a few redirects, then definite.
	expectError(t, "redirects in a loop", s.ask("n3", "cas", `"key":1,"from":2,"to":3`), codeUnavailable)
	if got := len(n3.lines()) + len(n4.lines()); got != maxHops+1 {
		t.Errorf("a loop of redirects asked %d times, want %d", got, maxHops+1)
	}
	expectError(t, "a redirect to no known member", s.ask("n5", "read", `"key":1`), codeUnavailable)
}

func TestNoLeader(t *testing.T) {
	t.Parallel()
	n1 := newFake(t, answering("NOTLEADER"))
	s := newSession(t, defaults())
	s.init(map[string]*fake{"n1": n1})
	expectError(t, "a member that knows no leader", s.ask("n1", "write", `"key":1,"value":2`), codeUnavailable)
	if got := n1.lines(); len(got) != 1 {
		t.Errorf("n1 was asked %d times, want once", len(got))
	}
}

func TestRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := &fake{addr: ln.Addr().String()}
	ln.Close() // nothing listens there now
	s := newSession(t, defaults())
	s.init(map[string]*fake{"n1": gone})
	expectError(t, "a refused connection", s.ask("n1", "write", `"key":1,"value":2`), codeUnavailable)
	expectError(t, "a member with no address", s.ask("n7", "read", `"key":1`), codeUnavailable)

	o := defaults()
	o.port = "admin" // no member has a port of that name
	s = newSession(t, o)
	s.init(map[string]*fake{"n1": newFake(t, table())})
	expectError(t, "a port no member has", s.ask("n1", "read", `"key":1`), codeUnavailable)
}

// TestIndefinite: once the request is written, an error may follow a
// request that was carried out, and must be indefinite.
func TestIndefinite(t *testing.T) {
	t.Parallel()
	members := map[string]*fake{
		"closes":   newFake(t, func(string) string { return hangUp }),
		"silent":   newFake(t, func(string) string { return silent }),
		"cut":      newFake(t, func(string) string { return "OK 1" + hangUp }),
		"garbage":  newFake(t, answering("WHAT")),
		"notfound": newFake(t, answering("NOTFOUND")),
		"bare":     newFake(t, answering("OK")),
		"nan":      newFake(t, answering("OK x")),
		"mismatch": newFake(t, answering("MISMATCH")),
		"long":     newFake(t, answering("OK "+strings.Repeat("1", 2*maxAnswer))),
		"refuses":  newFake(t, answering("ERR not today")),
	}
	o := defaults()
	o.timeout = 300 * time.Millisecond
	s := newSession(t, o)
	s.init(members)

	expectError(t, "closed after the request", s.ask("closes", "write", `"key":1,"value":2`), codeCrash)
	expectError(t, "no answer in time", s.ask("silent", "cas", `"key":1,"from":2,"to":3`), codeTimeout)
	expectError(t, "an answer cut short", s.ask("cut", "read", `"key":1`), codeCrash)
	expectError(t, "an answer of no known form", s.ask("garbage", "write", `"key":1,"value":2`), codeCrash)
	expectError(t, "a read answered OK with no value", s.ask("bare", "read", `"key":1`), codeCrash)
	expectError(t, "a read answered OK with no number", s.ask("nan", "read", `"key":1`), codeCrash)
	expectError(t, "a write answered with a value", s.ask("nan", "write", `"key":1,"value":2`), codeCrash)
	expectError(t, "a write answered NOTFOUND", s.ask("notfound", "write", `"key":1,"value":2`), codeCrash)
	expectError(t, "a cas answered MISMATCH with no value", s.ask("mismatch", "cas", `"key":1,"from":2,"to":3`), codeCrash)
	expectError(t, "an answer too long", s.ask("long", "read", `"key":1`), codeCrash)
	// ERR is the store's refusal: definite.
	expectError(t, "an ERR", s.ask("refuses", "write", `"key":1,"value":2`), codeMalformed)
}

func TestHostileStdin(t *testing.T) {
	t.Parallel()
	n1 := newFake(t, table())
	s := newSession(t, defaults())
	s.init(map[string]*fake{"n1": n1})
	for _, line := range []string{
		"not json",
		"{}",
		"null",
		"[1,2]",
		"\x00\xff\xfe",
		`{"src":"c1","dest":"n1","body":"read"}`,
		`{"src":"c1","dest":"n1","body":{"type":"read","key":1}}`,                 // no msg_id
		`{"src":"c1","dest":"n1","body":{"type":"read","msg_id":"7","key":1}}`,    // not a number
		`{"src":"c1","dest":"n1","body":{"type":"read","msg_id":null,"key":1}}`,   // null
		`{"src":"c1","dest":"n1","body":{"type":"read","msg_id":7.5,"key":1}}`,    // not an integer
		`{"src":"c1","dest":"n1","body":{"type":"read","msg_id":7,"key":1}`,       // cut short
		`{"src":"c1","dest":"n1","body":{"type":"read","msg_id":1e400,"key":1}}`,  // no int64
		`{"src":"c1","dest":"n1","body":{"type":"read","in_reply_to":3,"key":1}}`, // an answer
		`{"src":"c1","dest":"n1","body":{"type":"read","msg_id":7,"key":1},"pad":"` + strings.Repeat("x", 2*maxLine) + `"}`,
		"   ",
	} {
		s.send(line)
	}
	// Requests with an id but malformed are answered, as malformed.
	expectError(t, "a key that is a string", s.ask("n1", "read", `"key":"1"`), codeMalformed)
	expectError(t, "a key that is no integer", s.ask("n1", "read", `"key":1.5`), codeMalformed)
	expectError(t, "a key past int64", s.ask("n1", "read", `"key":9223372036854775808`), codeMalformed)
	expectError(t, "a read with no key", s.ask("n1", "read", ``), codeMalformed)
	expectError(t, "a write with no value", s.ask("n1", "write", `"key":1`), codeMalformed)
	expectError(t, "a cas with no to", s.ask("n1", "cas", `"key":1,"from":1`), codeMalformed)
	expectError(t, "a request of an unknown type", s.ask("n1", "txn", `"txn":[]`), codeUnsupported)
	// And the adapter goes on.
	expectOK(t, "a write after the garbage", s.ask("n1", "write", `"key":1,"value":5`), "write_ok", nil)
	expectOK(t, "a read after the garbage", s.ask("n1", "read", `"key":1`), "read_ok", ptr(5))
	if got, want := n1.lines(), []string{"PUT 1 5", "GET 1"}; !slices.Equal(got, want) {
		t.Errorf("n1 read %q, want %q: nothing of the garbage", got, want)
	}
	log := s.log.String()
	for _, want := range []string{"skipped a line that is not a message", "skipped a message with no msg_id", "skipped a line longer than"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q", want)
		}
	}
}

// TestOverlap: requests are carried at once, and answered as they finish.
func TestOverlap(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	n1 := newFake(t, func(line string) string {
		if line == "GET 1" {
			<-release
		}
		return "OK 7\n"
	})
	s := newSession(t, defaults())
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // first, should the test fail
	s.init(map[string]*fake{"n1": n1})
	slow := s.request("n1", "read", `"key":1`)
	fast := s.request("n1", "read", `"key":2`)
	if a := s.recv(); *a.Body.InReplyTo != fast {
		t.Errorf("first answer is to %d, want %d, the request not held up", *a.Body.InReplyTo, fast)
	}
	once.Do(func() { close(release) })
	if a := s.recv(); *a.Body.InReplyTo != slow {
		t.Errorf("second answer is to %d, want %d", *a.Body.InReplyTo, slow)
	}
}

// TestEndOfInput: when stdin ends, the requests in flight are answered,
// and serve returns nil.
func TestEndOfInput(t *testing.T) {
	t.Parallel()
	n1 := newFake(t, func(string) string {
		time.Sleep(200 * time.Millisecond)
		return "OK\n"
	})
	var out bytes.Buffer
	in := `{"src":"coup","dest":"c1","body":{"type":"init","msg_id":0,"node_id":"c1","node_ids":["n1"],"addrs":{"n1":{"client":"` + n1.addr + `"}}}}
{"src":"c1","dest":"n1","body":{"type":"write","msg_id":1,"key":1,"value":2}}
{"src":"c1","dest":"n1","body":{"type":"cas","msg_id":2,"key":1,"from":2,"to":3}}` // no final newline
	if err := serve(strings.NewReader(in), &out, io.Discard, defaults()); err != nil {
		t.Fatalf("serve: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []string{
		`{"src":"c1","dest":"coup","body":{"type":"init_ok","in_reply_to":0}}`,
		`{"src":"n1","dest":"c1","body":{"type":"write_ok","in_reply_to":1}}`,
		`{"src":"n1","dest":"c1","body":{"type":"cas_ok","in_reply_to":2}}`,
	}
	if len(lines) != 3 || lines[0] != want[0] || !slices.Contains(lines, want[1]) || !slices.Contains(lines, want[2]) {
		t.Errorf("stdout:\n%s\nwant, in any order after the first:\n%s", out.String(), strings.Join(want, "\n"))
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	o, err := parseFlags(nil)
	if err != nil || o.port != "client" || o.timeout != 5*time.Second {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	o, err = parseFlags([]string{"--port", "kv", "--timeout", "2s"})
	if err != nil || o.port != "kv" || o.timeout != 2*time.Second {
		t.Errorf("--port kv --timeout 2s: %+v, %v", o, err)
	}
	for _, args := range [][]string{
		{"--port", ""},
		{"--timeout", "0s"},
		{"--timeout", "soon"},
		{"--hops", "3"},
		{"extra"},
	} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
