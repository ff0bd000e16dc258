package process

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes/bully"
	"github.com/coupharness/coup/nodes/changroberts"
	"github.com/coupharness/coup/nodes/wire"
)

// pipeNode runs a Chang–Roberts node on pipes and returns a writer to its
// input, a reader of its output lines, and a function that closes its input
// and waits for it to end.
func pipeNode(t *testing.T) (io.Writer, *bufio.Scanner, func()) {
	in, out, wait := startNode(t)
	return in, out, func() {
		if err := wait(); err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

// startNode is pipeNode with the error of Run returned by the stop function.
func startNode(t *testing.T) (io.Writer, *bufio.Scanner, func() error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(Options{In: inR, Out: outW, Log: io.Discard, Spec: changroberts.Spec})
		outW.Close()
	}()
	stop := func() error {
		inW.Close()
		go io.Copy(io.Discard, outR)
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Error("node did not exit when its input closed")
			return nil
		}
	}
	return inW, bufio.NewScanner(outR), stop
}

func send(t *testing.T, w io.Writer, line string) {
	t.Helper()
	if _, err := io.WriteString(w, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func next(t *testing.T, sc *bufio.Scanner) wire.Envelope {
	t.Helper()
	lines := make(chan []byte, 1)
	go func() {
		if sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatal("output ended")
		}
		env, err := wire.Parse(line)
		if err != nil {
			t.Fatalf("node wrote %q: %v", line, err)
		}
		return env
	case <-time.After(5 * time.Second):
		t.Fatal("no output")
	}
	return wire.Envelope{}
}

func body(t *testing.T, env wire.Envelope) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(env.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const initLine = `{"src":"coup","dest":"n2","body":{"type":"init","msg_id":1,"node_id":"n2","node_ids":["n1","n2","n3"],"ids":[5,1,2],"checksums":true}}`

func TestInitHandshake(t *testing.T) {
	in, out, stop := pipeNode(t)
	defer stop()
	send(t, in, initLine)
	env := next(t, out)
	b := body(t, env)
	if env.Src != "n2" || env.Dest != "coup" || b["type"] != "init_ok" || b["in_reply_to"] != 1.0 {
		t.Errorf("got %s %s %v, want init_ok from n2 to coup in reply to 1", env.Src, env.Dest, b)
	}
}

// A message whose sum does not match its body, or a line that does not
// parse, is reported and never acted on; a good message is acted on.
func TestRejectsCorruptMessages(t *testing.T) {
	in, out, stop := pipeNode(t)
	defer stop()
	send(t, in, initLine)
	next(t, out) // init_ok

	// Valid JSON, mutated after the sum was taken: id 9 would make n2
	// forward it, so acting on it would show.
	good := []byte(`{"type":"election","id":7}`)
	bad := wire.Envelope{ID: 41, Src: "n1", Dest: "n2", Body: []byte(`{"type":"election","id":9}`), Sum: wire.Sum(good)}
	in.Write(bad.Append(nil))
	rep := next(t, out)
	if b := body(t, rep); rep.Dest != "coup" || b["what"] != "rejected" || b["value"] != "checksum" || b["msg"] != 41.0 {
		t.Errorf("after a bad sum got %s %v, want a rejected/checksum report for message 41", rep.Dest, b)
	}

	// A line broken by a bit flip: only the leading id survives.
	send(t, in, `{"id":42,"src":"n1","dest":"n2","body":{"type":"elec}tion","id":7},"sum":"00000000"`)
	rep = next(t, out)
	if b := body(t, rep); b["what"] != "rejected" || b["value"] != "unparsable" || b["msg"] != 42.0 {
		t.Errorf("after an unparsable line got %v, want rejected/unparsable for message 42", b)
	}

	// A message without a sum, when sums are on.
	send(t, in, `{"id":43,"src":"n1","dest":"n2","body":{"type":"election","id":7}}`)
	rep = next(t, out)
	if b := body(t, rep); b["what"] != "rejected" || b["msg"] != 43.0 {
		t.Errorf("after a message without a sum got %v, want rejected for message 43", b)
	}

	// The good message is acted on: n2 (id 1) becomes a participant and
	// forwards election(7) to n3 with a correct sum.
	ok := wire.Envelope{ID: 44, Src: "n1", Dest: "n2", Body: good, Sum: wire.Sum(good)}
	in.Write(ok.Append(nil))
	rep = next(t, out)
	if b := body(t, rep); b["what"] != "participant" || b["value"] != "true" {
		t.Errorf("got %v, want the participant report first", b)
	}
	fwd := next(t, out)
	if fwd.Dest != "n3" || !fwd.Verify() || !strings.Contains(string(fwd.Body), `"id":7`) {
		t.Errorf("got %s to %s (sum ok %v), want election(7) to n3 with a good sum", fwd.Body, fwd.Dest, fwd.Verify())
	}
}

func TestClientRequestIsAnswered(t *testing.T) {
	in, out, stop := pipeNode(t)
	defer stop()
	send(t, in, initLine)
	next(t, out)
	send(t, in, `{"src":"c1","dest":"n2","body":{"type":"elect","msg_id":5}}`)
	// participant report, election to n3, then the answer.
	var reply wire.Envelope
	for i := 0; i < 3; i++ {
		if env := next(t, out); env.Dest == "c1" {
			reply = env
		}
	}
	if b := body(t, reply); b["type"] != "elect_ok" || b["in_reply_to"] != 5.0 {
		t.Errorf("reply %v, want elect_ok in reply to 5", b)
	}
}

// A bad init is answered with an error, and the node ends with it.
func TestBadInitIsAnError(t *testing.T) {
	in, out, stop := startNode(t)
	send(t, in, `{"src":"coup","dest":"n2","body":{"type":"init","msg_id":1,"node_id":"n2","node_ids":["n1","n2"],"ids":[1]}}`)
	env := next(t, out)
	if b := body(t, env); b["type"] != "error" || !strings.Contains(b["text"].(string), "1 ids for 2 nodes") {
		t.Errorf("got %v, want an error reply naming the problem", b)
	}
	if err := stop(); err == nil || !strings.Contains(err.Error(), "ids") {
		t.Errorf("Run returned %v, want the init error", err)
	}
}

func TestDefaultID(t *testing.T) {
	for in, want := range map[string]int{"n3": 3, "n12": 12, "node": 0, "x7y": 0, "": 0} {
		if got := DefaultID(in); got != want {
			t.Errorf("DefaultID(%q) = %d, want %d", in, got, want)
		}
	}
}

// syncBuffer is a log that a test reads while the node writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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

// With defer_start, a node starts its machine on the harness's start
// message, not at init: bully, which begins with an election the moment it
// starts, sends nothing until then.
func TestDeferredStart(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var log syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(Options{In: inR, Out: outW, Log: &log, Spec: bully.Spec})
		outW.Close()
	}()
	defer func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	out := bufio.NewScanner(outR)
	send(t, inW, `{"src":"coup","dest":"n1","body":{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1","n2"],"defer_start":true}}`)
	if h, _ := wire.ParseHead(next(t, out).Body); h.Type != "init_ok" {
		t.Fatalf("first line %s, want init_ok", h.Type)
	}
	// init_ok is written after the init is handled in full.
	if l := log.String(); !strings.Contains(l, "initialised") || strings.Contains(l, `"started"`) {
		t.Fatalf("after init the log says:\n%s\nwant initialised and not started", l)
	}
	send(t, inW, `{"src":"coup","dest":"n1","body":{"type":"start"}}`)
	env := next(t, out)
	if h, _ := wire.ParseHead(env.Body); env.Dest != "n2" && h.Type != "report" { // neither
		t.Errorf("after start: %s to %s, want bully's first election or report", h.Type, env.Dest)
	}
	if l := log.String(); !strings.Contains(l, `"why":"on the harness's start"`) {
		t.Errorf("the log does not say the node started on the harness's start:\n%s", l)
	}
}
