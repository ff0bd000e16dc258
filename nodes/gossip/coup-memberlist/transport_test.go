package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// wire connects transports in memory. hold keeps the messages for the test
// to deliver in any order; otherwise they are delivered at once.
type wires struct {
	mu    sync.Mutex
	ts    map[string]*transport
	hold  bool
	held  []heldMsg
	drops func(b body) bool
}

type heldMsg struct {
	from, to string
	b        body
}

func newWires(names ...string) *wires {
	w := &wires{ts: map[string]*transport{}}
	for _, n := range names {
		from := n
		w.ts[n] = newTransport(n, names, "e1", func(to string, b body) { w.send(from, to, b) })
	}
	return w
}

func (w *wires) send(from, to string, b body) {
	w.mu.Lock()
	if w.drops != nil && w.drops(b) {
		w.mu.Unlock()
		return
	}
	if w.hold {
		w.held = append(w.held, heldMsg{from, to, b})
		w.mu.Unlock()
		return
	}
	t := w.ts[to]
	w.mu.Unlock()
	go t.receive(from, b) // as the process's input loop would, not on the sender's stack
}

func (w *wires) take() []heldMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.held
	w.held = nil
	return out
}

func TestPackets(t *testing.T) {
	w := newWires("n1", "n2")
	if _, err := w.ts["n1"].WriteTo([]byte("ping"), Address(1)); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-w.ts["n2"].PacketCh():
		if string(p.Buf) != "ping" || p.From.String() != Address(0) {
			t.Errorf("packet %q from %s, want ping from %s", p.Buf, p.From, Address(0))
		}
	case <-time.After(time.Second):
		t.Fatal("no packet")
	}
	if _, err := w.ts["n1"].WriteTo([]byte("x"), "10.0.0.1:1"); err == nil {
		t.Error("a packet to an address of no node was sent")
	}
}

// A stream's pieces are read in order however they arrive, duplicates
// included, and the reader sees EOF only once every piece is in.
func TestStreamReordered(t *testing.T) {
	w := newWires("n1", "n2")
	w.hold = true
	c, err := w.ts["n1"].DialTimeout(Address(1), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	payload := bytes.Repeat([]byte("0123456789abcdef"), 3*maxPiece/16+5) // four pieces
	if _, err := c.Write(payload); err != nil {
		t.Fatal(err)
	}
	c.Close()
	msgs := w.take() // open, four pieces, close
	if len(msgs) != 6 {
		t.Fatalf("%d messages, want 6", len(msgs))
	}
	slices.Reverse(msgs)
	msgs = append(msgs, msgs[1], msgs[3]) // two duplicates
	for _, m := range msgs {
		w.ts[m.to].receive(m.from, m.b)
	}
	var s net.Conn
	select {
	case s = <-w.ts["n2"].StreamCh():
	default:
		t.Fatal("no stream accepted")
	}
	s.SetReadDeadline(time.Now().Add(time.Second))
	got, err := io.ReadAll(s)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("read %d bytes (%v), want the %d written, in order", len(got), err, len(payload))
	}
	if s.RemoteAddr().String() != Address(0) {
		t.Errorf("remote %s, want %s", s.RemoteAddr(), Address(0))
	}
	s.Close()
	// The close reaches the dialer; a late duplicate makes no new stream.
	for _, m := range w.take() {
		w.ts[m.to].receive(m.from, m.b)
	}
	w.ts["n2"].receive("n1", msgs[2].b)
	select {
	case <-w.ts["n2"].StreamCh():
		t.Error("a late piece of a closed stream opened a new one")
	default:
	}
}

// A missing piece stalls the stream until the read deadline, as a broken
// TCP connection would; the error is a timeout.
func TestStreamLostPieceTimesOut(t *testing.T) {
	w := newWires("n1", "n2")
	w.drops = func(b body) bool { return b.Type == typeData && b.Seq == 1 }
	c, _ := w.ts["n1"].DialTimeout(Address(1), time.Second)
	c.Write(bytes.Repeat([]byte("x"), maxPiece+1)) // pieces 1 (lost) and 2
	var s net.Conn
	select {
	case s = <-w.ts["n2"].StreamCh():
	case <-time.After(time.Second):
		t.Fatal("no stream accepted")
	}
	s.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := s.Read(make([]byte, 10))
	var ne net.Error
	if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("read %d bytes, %v; want a timeout and nothing", n, err)
	}
}

// Two memberlist instances find each other through the transport alone.
func TestMemberlistOverTransport(t *testing.T) {
	names := []string{"n1", "n2", "n3"}
	w := newWires(names...)
	var lists []*memberlist.Memberlist
	for _, n := range names {
		c := memberlist.DefaultLocalConfig()
		c.Name, c.Transport = n, w.ts[n]
		c.ProbeInterval, c.ProbeTimeout, c.GossipInterval = 50*time.Millisecond, 20*time.Millisecond, 10*time.Millisecond
		c.LogOutput = io.Discard
		ml, err := memberlist.Create(c)
		if err != nil {
			t.Fatal(err)
		}
		defer ml.Shutdown()
		lists = append(lists, ml)
	}
	if joined, err := lists[0].Join([]string{Address(1), Address(2)}); joined != 2 || err != nil {
		t.Fatalf("joined %d (%v), want 2", joined, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, ml := range lists {
		for ml.NumMembers() != 3 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if ml.NumMembers() != 3 {
			t.Errorf("%s sees %d members, want 3", ml.LocalNode().Name, ml.NumMembers())
		}
	}
}
