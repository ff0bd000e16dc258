package servers

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes/wire"
	"github.com/coupharness/coup/workloads"
)

// adapterPipes runs ServeClient for the etcd client on pipes, and returns
// a writer to its stdin, a reader of its answers, and its log.
func adapterPipes(t *testing.T) (io.WriteCloser, *bufio.Scanner, *syncBuilder) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	log := &syncBuilder{}
	done := make(chan error, 1)
	go func() {
		done <- ServeClient(context.Background(), "etcd", ClientOptions{Timeout: 2 * time.Second}, inR, outW, log)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeClient: %v", err)
		}
	})
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 64<<10), 2<<20)
	return inW, sc, log
}

// syncBuilder is a strings.Builder safe for the adapter's goroutines.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuilder) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuilder) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// answerLine reads the next line of the adapter and its envelope and
// head.
func answerLine(t *testing.T, sc *bufio.Scanner) (wire.Envelope, wire.ReplyHead, []byte) {
	t.Helper()
	lines := make(chan bool, 1)
	go func() { lines <- sc.Scan() }()
	select {
	case ok := <-lines:
		if !ok {
			t.Fatalf("the adapter's output ended: %v", sc.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer from the adapter within 5s")
	}
	env, err := wire.Parse(sc.Bytes())
	if err != nil {
		t.Fatalf("an answer that is not a message: %q: %v", sc.Text(), err)
	}
	var head wire.ReplyHead
	if err := json.Unmarshal(env.Body, &head); err != nil {
		t.Fatal(err)
	}
	return env, head, env.Body
}

// The built-in client as a process speaks coup's client protocol: it
// answers the init, then each request in the envelope addressed back to
// its sender, with in_reply_to, as the in-process client would answer; it
// skips lines it cannot read and requests before the init, and tells a
// definite error (a refused connection: code 11) from an unknown one (an
// error from etcd: code 13), so that coup records fail and info as it
// would in process.
func TestServeClientSpeaksTheClientProtocol(t *testing.T) {
	g := &gateway{kv: map[string]string{}}
	srv := httptest.NewServer(g)
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	in, out, log := adapterPipes(t)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"src":"c1","dest":"n1","body":{"type":"read","msg_id":1,"key":0}}`) // before the init: skipped
	send(`this is not json`)
	addrs, _ := json.Marshal(map[string]map[string]string{
		"n1": {"client": strings.TrimPrefix(srv.URL, "http://"), "peer": "127.0.0.1:1"},
		"n2": {"client": refused},
	})
	send(`{"src":"coup","dest":"c1","body":{"type":"init","msg_id":0,"node_id":"c1","node_ids":["n1","n2"],"addrs":` + string(addrs) + `}}`)
	env, head, _ := answerLine(t, out)
	if head.Type != "init_ok" || env.Src != "c1" || env.Dest != "coup" {
		t.Fatalf("init answered %+v %+v, want init_ok from c1 to coup", env, head)
	}
	steps := []struct {
		req        string
		typ        string
		code       int
		value, src string
		outcome    string
	}{
		{`{"src":"c4","dest":"n1","body":{"type":"write","msg_id":7,"key":0,"value":3}}`, "write_ok", 0, "", "n1", history.OpOK},
		{`{"src":"c4","dest":"n1","body":{"type":"read","msg_id":8,"key":0}}`, "read_ok", 0, "3", "n1", history.OpOK},
		{`{"src":"c4","dest":"n1","body":{"type":"cas","msg_id":9,"key":0,"from":1,"to":2}}`, "error", 22, "", "n1", history.OpFail},
		{`{"src":"c4","dest":"n2","body":{"type":"write","msg_id":10,"key":0,"value":4}}`, "error", 11, "", "n2", history.OpFail},
		// The set workload's add and read, Maelstrom's g-set bodies.
		{`{"src":"c4","dest":"n1","body":{"type":"add","msg_id":12,"element":9}}`, "add_ok", 0, "", "n1", history.OpOK},
		{`{"src":"c4","dest":"n1","body":{"type":"add","msg_id":13,"element":1}}`, "add_ok", 0, "", "n1", history.OpOK},
		{`{"src":"c4","dest":"n1","body":{"type":"read","msg_id":14}}`, "read_ok", 0, "[1,9]", "n1", history.OpOK},
	}
	for _, s := range steps {
		send(s.req)
		env, head, body := answerLine(t, out)
		var v struct {
			Value json.RawMessage `json:"value"`
		}
		json.Unmarshal(body, &v)
		var req wire.Envelope
		json.Unmarshal([]byte(s.req), &req)
		want, _ := wire.ParseHead(req.Body)
		if head.Type != s.typ || head.InReplyTo != want.MsgID || string(v.Value) != s.value || (s.code != 0 && (head.Code == nil || *head.Code != s.code)) {
			t.Errorf("%s: got %s, want %s code %d value %q in reply to %d", s.req, body, s.typ, s.code, s.value, want.MsgID)
		}
		if env.Src != s.src || env.Dest != "c4" {
			t.Errorf("%s: answered from %s to %s, want from %s to c4", s.req, env.Src, env.Dest, s.src)
		}
		if typ, _ := workloads.Outcome(head, body, nil, ""); typ != s.outcome {
			t.Errorf("%s: recorded as %s, want %s", s.req, typ, s.outcome)
		}
	}
	g.mu.Lock()
	g.status = http.StatusServiceUnavailable
	g.mu.Unlock()
	send(`{"src":"c4","dest":"n1","body":{"type":"write","msg_id":11,"key":0,"value":5}}`)
	_, head, body := answerLine(t, out)
	if typ, _ := workloads.Outcome(head, body, nil, ""); head.InReplyTo != 11 || typ != history.OpInfo {
		t.Errorf("an error from etcd: %s recorded as %s, want info (unknown) in reply to 11", body, typ)
	}
	for _, want := range []string{"ignoring a request before init", "ignoring a line that is not a message"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the adapter's log lacks %q:\n%s", want, log.String())
		}
	}
}
