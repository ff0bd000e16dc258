package servers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coupharness/coup/workloads"
)

// fakeNats is a NATS server of a few lines, for the client's tests: it
// speaks the protocol's text (INFO, CONNECT, PING, SUB, PUB, HPUB) and
// answers each publish to coup.set with the answer of ack(element):
// a JetStream acknowledgement or error as JSON, "no responders" for a
// 503 status (no stream heard it), or "" for none at all.
type fakeNats struct {
	ln  net.Listener
	ack func(element string) string

	mu    sync.Mutex
	conns []net.Conn
}

func newFakeNats(t *testing.T, ack func(element string) string) *fakeNats {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeNats{ln: ln, ack: ack}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			go f.serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.conns {
			c.Close()
		}
	})
	return f
}

func (f *fakeNats) serve(c net.Conn) {
	fmt.Fprintf(c, "INFO {\"server_id\":\"FAKE\",\"server_name\":\"n9\",\"version\":\"2.9.10\",\"proto\":1,\"headers\":true,\"max_payload\":1048576,\"jetstream\":true}\r\n")
	r := bufio.NewReader(c)
	sids := map[string]string{} // subject pattern → sid
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "PING":
			fmt.Fprint(c, "PONG\r\n")
		case "SUB":
			sids[fields[1]] = fields[len(fields)-1]
		case "PUB", "HPUB":
			subject, reply := fields[1], fields[2]
			size, _ := strconv.Atoi(fields[len(fields)-1])
			payload := make([]byte, size+2)
			if _, err := io.ReadFull(r, payload); err != nil {
				return
			}
			body := string(payload[:size])
			if fields[0] == "HPUB" {
				hdr, _ := strconv.Atoi(fields[3])
				body = body[hdr:]
			}
			if subject != "coup.set" {
				continue
			}
			sid := ""
			for pattern, s := range sids {
				if strings.HasSuffix(pattern, ".*") && strings.HasPrefix(reply, strings.TrimSuffix(pattern, "*")) {
					sid = s
				}
			}
			switch a := f.ack(body); {
			case a == "":
			case a == "no responders":
				h := "NATS/1.0 503\r\n\r\n"
				fmt.Fprintf(c, "HMSG %s %s %d %d\r\n%s\r\n", reply, sid, len(h), len(h), h)
			default:
				fmt.Fprintf(c, "MSG %s %s %d\r\n%s\r\n", reply, sid, len(a), a)
			}
		}
	}
}

// The client's adds against hand-made answers, through nats.go: a
// JetStream acknowledgement by the stream is add_ok, naming the server
// the client is connected to; an error answer of the stream (it did not
// store the message) and no responders (no stream heard it) fail
// definitely; no answer within the operation's time is unknown.
func TestNatsSetAdds(t *testing.T) {
	f := newFakeNats(t, func(element string) string {
		switch element {
		case "1":
			return `{"stream":"coup","seq":1}`
		case "2":
			return `{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"}}`
		case "3":
			return "no responders"
		case "4":
			return `{"stream":"elsewhere","seq":1}`
		}
		return ""
	})
	c := newNatsSet(map[string]string{"n1": f.ln.Addr().String()}, "")
	defer c.close()
	for _, tt := range []struct {
		element  int64
		want     string // the answer, or the error's start
		definite bool
	}{
		{1, `{"served_by":"n9","type":"add_ok"}`, false},
		{2, "definite: the stream refused the publish", true},
		{3, "definite: no stream heard the publish", true},
		{4, "an acknowledgement by another stream", false},
		{5, "context deadline exceeded", false},
	} {
		t.Run(strconv.FormatInt(tt.element, 10), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			op := workloads.Op{F: workloads.FAdd, Node: "n1", Process: "c1", Fields: map[string]any{"element": tt.element}}
			body, err := c.Do(ctx, "n1", op)
			switch {
			case err == nil && string(body) != tt.want:
				t.Errorf("answered %s, want %s", body, tt.want)
			case err != nil && !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %v, want %q", err, tt.want)
			case err != nil && errors.Is(err, errDefinite) != tt.definite:
				t.Errorf("error %v: definite %v, want %v", err, errors.Is(err, errDefinite), tt.definite)
			case err == nil && tt.want[0] != '{':
				t.Errorf("answered %s, want an error %q", body, tt.want)
			}
		})
	}
	// A member nobody listens at: the add surely did not happen.
	dead := newNatsSet(map[string]string{"n1": "127.0.0.1:1"}, "")
	if _, err := dead.Do(context.Background(), "n1", workloads.Op{F: workloads.FAdd, Process: "c1", Fields: map[string]any{"element": 1}}); !errors.Is(err, errDefinite) {
		t.Errorf("an add to a member that refuses connections: %v, want a definite failure", err)
	}
}
