package main

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes/wire"
)

// node runs the program on pipes and returns a way to write lines to it
// and a channel of the lines it writes.
func runNode(t *testing.T) (func(string), <-chan string) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(inR, outW, io.Discard); outW.Close() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("the node did not exit when its input closed")
		}
	})
	return func(s string) { io.WriteString(inW, s+"\n") }, lines
}

// next returns the next line whose body has the given type.
func next(t *testing.T, lines <-chan string, typ string) wire.Envelope {
	t.Helper()
	timeout := time.After(3 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended before a %s", typ)
			}
			env, err := wire.Parse([]byte(l))
			if err != nil {
				t.Fatalf("bad output line %q: %v", l, err)
			}
			if h, _ := wire.ParseHead(env.Body); h.Type == typ {
				return env
			}
		case <-timeout:
			t.Fatalf("no %s", typ)
		}
	}
}

// A node alone answers init, joins nobody, trusts itself, answers elect
// with itself, and rejects a message whose checksum is wrong.
func TestProgram(t *testing.T) {
	write, lines := runNode(t)
	write(`{"src":"coup","dest":"n1","body":{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1","n2"],"checksums":true,"params":{"rejoin_every":"0s"}}}`)
	next(t, lines, "init_ok")
	var r wire.ReportBody
	for r.What != "leader" {
		env := next(t, lines, "report")
		json.Unmarshal(env.Body, &r)
	}
	if r.Value != "n1" {
		t.Errorf("leader %q, want n1 (n2 never answered)", r.Value)
	}
	write(`{"src":"c1","dest":"n1","body":{"type":"elect","msg_id":7}}`)
	var reply wire.ReplyBody
	json.Unmarshal(next(t, lines, "elect_ok").Body, &reply)
	if reply.InReplyTo != 7 || reply.Value != "n1" {
		t.Errorf("reply %+v, want n1 in reply to 7", reply)
	}
	write(`{"id":42,"src":"n2","dest":"n1","sum":"00000000","body":{"type":"packet","data":"AAAA"}}`)
	for {
		json.Unmarshal(next(t, lines, "report").Body, &r)
		if r.What == "rejected" {
			break
		}
	}
	if r.Value != "checksum" || r.Msg != 42 {
		t.Errorf("rejection %+v, want checksum of message 42", r)
	}
}

// A bad init is refused with an error and ends the program.
func TestProgramBadInit(t *testing.T) {
	inR, inW := io.Pipe()
	var out strings.Builder
	go io.WriteString(inW, `{"src":"coup","dest":"n1","body":{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1"],"params":{"suspicion_mult":0}}}`+"\n")
	err := Run(inR, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "suspicion_mult") || !strings.Contains(out.String(), `"code":22`) {
		t.Errorf("Run: %v, output %s; want an error naming suspicion_mult, answered with code 22", err, out.String())
	}
}
