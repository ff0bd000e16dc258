package proxy

import (
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/nemesis"
)

var (
	n1n2 = nemesis.Link{From: "n1", To: "n2"}
	n2n1 = nemesis.Link{From: "n2", To: "n1"}
)

// policy is a hand-driven Policy: cuts set per link, fates from a
// function, and a channel told of every call, so that a test can wait for
// the proxy to have read a chunk.
type policy struct {
	mu    sync.Mutex
	cuts  map[nemesis.Link]nemesis.CutKind
	chunk func(l nemesis.Link, conn uint64, off int64, b []byte) nemesis.Fate
	calls chan call
}

// call is one call of the policy: Cut answering a cut, or Chunk (cut
// NoCut).
type call struct {
	link nemesis.Link
	cut  nemesis.CutKind
	off  int64
	n    int
	at   time.Time
}

var _ Policy = (*policy)(nil)

// lost is the fate of a chunk a loss holds.
var lost = nemesis.Fate{Drop: true, Reason: nemesis.DropLoss}

// delayed is the fate of a chunk written d after it was read.
func delayed(d time.Duration) nemesis.Fate { return nemesis.Fate{Copies: []nemesis.Copy{{Delay: d}}} }

func newPolicy() *policy {
	return &policy{cuts: map[nemesis.Link]nemesis.CutKind{}, calls: make(chan call, 1<<12)}
}

func (p *policy) set(l nemesis.Link, c nemesis.CutKind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cuts[l] = c
}

func (p *policy) Cut(l nemesis.Link) nemesis.CutKind {
	p.mu.Lock()
	c := p.cuts[l]
	p.mu.Unlock()
	if c != nemesis.NoCut {
		select {
		case p.calls <- call{link: l, cut: c, at: time.Now()}:
		default:
		}
	}
	return c
}

func (p *policy) Chunk(l nemesis.Link, conn uint64, off int64, b []byte) nemesis.Fate {
	p.mu.Lock()
	f := p.chunk
	p.mu.Unlock()
	var fate nemesis.Fate
	if f != nil {
		fate = f(l, conn, off, b)
	}
	select {
	case p.calls <- call{link: l, off: off, n: len(b), at: time.Now()}:
	default:
	}
	return fate
}

// events records a proxy's events and lets a test wait for one.
type events struct {
	mu   sync.Mutex
	all  []Event
	news chan struct{}
}

func newEvents() *events { return &events{news: make(chan struct{}, 1)} }

func (e *events) add(ev Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
	select {
	case e.news <- struct{}{}:
	default:
	}
}

func (e *events) list() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.all)
}

func (e *events) of(kind string) []Event {
	var out []Event
	for _, ev := range e.list() {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// await waits for an event of kind, for at most 10s, and returns the
// first.
func (e *events) await(t *testing.T, kind string) Event {
	t.Helper()
	return e.awaitN(t, kind, 1)
}

// awaitN waits for n events of kind, for at most 10s, and returns the
// n-th.
func (e *events) awaitN(t *testing.T, kind string, n int) Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if evs := e.of(kind); len(evs) >= n {
			return evs[n-1]
		}
		select {
		case <-e.news:
		case <-deadline:
			t.Fatalf("no %s event; events: %+v", kind, e.list())
		}
	}
}

// target is a listener standing for the node forwarded to: it hands each
// connection it accepts to the test.
type target struct {
	ln    net.Listener
	conns chan net.Conn
}

func newTarget(t *testing.T) *target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tg := &target{ln: ln, conns: make(chan net.Conn, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tg.conns <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		close(tg.conns)
		for c := range tg.conns {
			c.Close()
		}
	})
	return tg
}

// accept returns the next connection the target accepted.
func (tg *target) accept(t *testing.T) net.Conn {
	t.Helper()
	select {
	case c := <-tg.conns:
		t.Cleanup(func() { c.Close() })
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("the target accepted no connection")
		return nil
	}
}

// start runs a proxy from n1 to n2 in front of a new target.
func start(t *testing.T, pol *policy, ev *events, change func(*Config)) (*Proxy, *target) {
	t.Helper()
	tg := newTarget(t)
	cfg := Config{Listen: "127.0.0.1:0", To: "n2", Target: tg.ln.Addr().String(), From: "n1", Policy: pol, Events: ev.add}
	if change != nil {
		change(&cfg)
	}
	p, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, tg
}

// dial connects to the proxy and returns both ends: the dialler's and the
// target's.
func dial(t *testing.T, p *Proxy, tg *target) (net.Conn, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, tg.accept(t)
}

// readN reads exactly n bytes, within 10s.
func readN(t *testing.T, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	return b
}

// write writes b or fails the test.
func write(t *testing.T, c net.Conn, b string) {
	t.Helper()
	if _, err := c.Write([]byte(b)); err != nil {
		t.Fatal(err)
	}
}

// awaitCall waits until the policy is asked about link l and answers cut
// (NoCut: a call of Chunk).
func (p *policy) awaitCall(t *testing.T, l nemesis.Link, cut nemesis.CutKind) call {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case c := <-p.calls:
			if c.link == l && c.cut == cut {
				return c
			}
		case <-deadline:
			t.Fatalf("the proxy read no chunk on %v", l)
		}
	}
}

// readFails reads until an error, which must come within 10s, with no
// byte before it; it returns the error.
func readFails(t *testing.T, c net.Conn) error {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, 1024)
	n, err := c.Read(b)
	if n > 0 {
		t.Errorf("read %q, want nothing", b[:n])
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection was neither reset nor closed within 10s")
	}
	return err
}

// dialReset dials the proxy, writes msg, and fails the test unless the
// connection is reset (the reset may come so soon that the dial itself
// sees it).
func dialReset(t *testing.T, p *Proxy, msg string) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("dial: %v, want success or a reset", err)
		}
		return
	}
	defer c.Close()
	c.Write([]byte(msg))
	if err := readFails(t, c); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("read: %v, want a reset", err)
	}
}

// awaitStats asks the proxy for its counters until ok holds, for at most
// 10s: a counter is added to just after the write that a test's reader
// may already have seen.
func awaitStats(t *testing.T, p *Proxy, ok func(Stats) bool) Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := p.Stats()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v: not as wanted within 10s", s)
		}
		time.Sleep(time.Millisecond) // a counter, which nothing announces
	}
}
