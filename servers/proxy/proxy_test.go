package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/nemesis"
)

func TestListenRefusesNonLoopback(t *testing.T) {
	pol := newPolicy()
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.1.2.3:0", "[::]:0", "localhost:0", "192.168.0.1:2380"} {
		_, err := Listen(Config{Listen: addr, To: "n2", Target: "127.0.0.1:1", From: "n1", Policy: pol})
		if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
			t.Errorf("Listen(%q): %v, want an error that it is not a loopback address", addr, err)
		}
	}
	p, err := Listen(Config{Listen: "127.0.0.3:0", To: "n2", Target: "127.0.0.1:1", From: "n1", Policy: pol})
	if err != nil {
		t.Fatalf("Listen on 127.0.0.3: %v", err)
	}
	p.Close()
}

func TestConfigErrorsNameTheField(t *testing.T) {
	pol := newPolicy()
	ok := Config{Listen: "127.0.0.1:0", To: "n2", Target: "127.0.0.1:1", From: "n1", Policy: pol}
	for _, c := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.To = "" }, "To"},
		{func(c *Config) { c.Target = "" }, "Target"},
		{func(c *Config) { c.From = "" }, "Attribute"},
		{func(c *Config) { c.Policy = nil }, "Policy"},
		{func(c *Config) { c.AttributeRetry = -time.Second }, "AttributeRetry"},
	} {
		cfg := ok
		c.change(&cfg)
		if _, err := Listen(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Listen(%+v): %v, want an error naming %s", cfg, err, c.want)
		}
	}
}

// A stall of n1→n2 holds exactly that direction: n2→n1 flows, and the
// held bytes arrive in order once the link heals.
func TestOneWayStall(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	p, tg := start(t, pol, ev, nil)
	a, b := dial(t, p, tg)
	write(t, a, "before")
	if got := readN(t, b, 6); string(got) != "before" {
		t.Fatalf("before the cut: %q", got)
	}
	pol.set(n1n2, nemesis.Stall)
	write(t, a, "abc")
	ev.awaitN(t, EventHold, 1)
	write(t, b, "xyz")
	if got := readN(t, a, 3); string(got) != "xyz" {
		t.Fatalf("n2→n1 during the cut: %q, want xyz", got)
	}
	write(t, a, "def")
	ev.awaitN(t, EventHold, 2)
	// The reader may see "xyz" before the proxy counts what it wrote.
	if s := awaitStats(t, p, func(s Stats) bool { return s.FromTarget == 3 }); s.ToTarget != 6 {
		t.Fatalf("during the stall: %d bytes to the target, %d back; want 6 (before the cut) and 3", s.ToTarget, s.FromTarget)
	}
	pol.set(n1n2, nemesis.NoCut)
	p.Changed()
	if got := readN(t, b, 6); string(got) != "abcdef" {
		t.Fatalf("after the heal: %q, want abcdef", got)
	}
	write(t, a, "after")
	if got := readN(t, b, 5); string(got) != "after" {
		t.Fatalf("after the heal: %q", got)
	}
	rel := ev.of(EventRelease)
	if len(rel) != 2 || rel[0].Off != 6 || rel[1].Off != 9 || rel[0].Link != n1n2 {
		t.Errorf("release events %+v, want two on n1→n2 at offsets 6 and 9", rel)
	}
	if s := p.Stats(); s.Released != 2 || s.Resets != 0 {
		t.Errorf("stats %+v", s)
	}
}

// A stalled end of stream is passed on after the held bytes, on heal.
func TestStallHoldsHalfClose(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	p, tg := start(t, pol, ev, nil)
	a, b := dial(t, p, tg)
	pol.set(n1n2, nemesis.Stall)
	write(t, a, "last words")
	ev.awaitN(t, EventHold, 1)
	a.(*net.TCPConn).CloseWrite()
	if h := ev.awaitN(t, EventHold, 2); h.Off != 10 || !strings.Contains(h.Detail, "end of stream") {
		t.Errorf("hold event %+v, want the end of stream at 10", h)
	}
	write(t, b, "still open")
	if got := readN(t, a, 10); string(got) != "still open" {
		t.Fatalf("the other way: %q", got)
	}
	pol.set(n1n2, nemesis.NoCut)
	p.Changed()
	b.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got bytes.Buffer
	if _, err := got.ReadFrom(b); err != nil || got.String() != "last words" {
		t.Fatalf("after heal: %q, %v; want the bytes, then the end of stream", got.String(), err)
	}
	b.Close()
	ev.await(t, EventClose)
}

// Refuse resets open connections on Changed and refuses new ones; heal
// lets new connections through.
func TestRefuse(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	p, tg := start(t, pol, ev, nil)
	a, b := dial(t, p, tg)
	write(t, a, "hi")
	readN(t, b, 2)
	pol.set(n2n1, nemesis.Refuse) // either direction resets the connection
	p.Changed()
	for _, c := range []net.Conn{a, b} {
		if err := readFails(t, c); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("after nemesis.Refuse: %v, want a reset", err)
		}
	}
	r := ev.await(t, EventReset)
	if r.Link != n2n1 {
		t.Errorf("reset event %+v, want it on n2→n1", r)
	}

	dialReset(t, p, "let me in")
	ev.await(t, EventRefuse)
	if s := p.Stats(); s.Refused != 1 || s.Resets != 1 || s.Opened != 1 {
		t.Errorf("stats %+v, want 1 refused, 1 reset, 1 opened", s)
	}

	pol.set(n2n1, nemesis.NoCut)
	p.Changed()
	a, b = dial(t, p, tg)
	write(t, a, "back")
	if got := readN(t, b, 4); string(got) != "back" {
		t.Errorf("after heal: %q", got)
	}
}

// A chunk read on a refused link resets its connection even before
// Changed is called.
func TestChunkOnRefusedLinkResets(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	p, tg := start(t, pol, ev, nil)
	a, b := dial(t, p, tg)
	pol.set(n1n2, nemesis.Refuse)
	write(t, a, "x")
	if err := readFails(t, b); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the target: %v, want a reset", err)
	}
	if r := ev.await(t, EventReset); r.Link != n1n2 || r.Off != 0 {
		t.Errorf("reset %+v", r)
	}
}

// Delays hold chunks, never reorder them, and hold each at least its
// delay.
func TestDelayKeepsOrder(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	pol.chunk = func(l nemesis.Link, conn uint64, off int64, b []byte) nemesis.Fate {
		// Every third chunk waits, the others not: the ones between must
		// wait behind it, not overtake it.
		if off%3 == 0 {
			return delayed(40 * time.Millisecond)
		}
		return nemesis.Fate{}
	}
	p, tg := start(t, pol, ev, nil)
	a, b := dial(t, p, tg)
	var want []byte
	var first call
	for i := range 20 {
		write(t, a, string(rune('a'+i)))
		want = append(want, byte('a'+i))
		c := pol.awaitCall(t, n1n2, nemesis.NoCut)
		if i == 0 {
			first = c
		}
	}
	got := readN(t, b, 1)
	if waited := time.Since(first.at); waited < 40*time.Millisecond {
		t.Errorf("the first chunk came %s after it was read, before its delay of 40ms", waited)
	}
	got = append(got, readN(t, b, len(want)-1)...)
	if !bytes.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A lost chunk stalls the stream and, still held after LossReset, resets
// the connection: no byte after it, none skipped.
func TestLossResets(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	pol.chunk = func(l nemesis.Link, conn uint64, off int64, b []byte) nemesis.Fate {
		if l == n1n2 && off >= 3 {
			return lost
		}
		return nemesis.Fate{}
	}
	p, tg := start(t, pol, ev, func(c *Config) { c.LossReset = 30 * time.Millisecond })
	a, b := dial(t, p, tg)
	write(t, a, "abc")
	if got := readN(t, b, 3); string(got) != "abc" {
		t.Fatalf("%q", got)
	}
	write(t, a, "lost")
	read := pol.awaitCall(t, n1n2, nemesis.NoCut)
	if err := readFails(t, b); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("after the loss: %v, want a reset", err)
	}
	if took := time.Since(read.at); took < 30*time.Millisecond {
		t.Errorf("reset %s after the loss, before LossReset", took)
	}
	r := ev.await(t, EventReset)
	if r.Off != 3 || r.Link != n1n2 {
		t.Errorf("reset %+v, want at offset 3 of n1→n2", r)
	}
	if s := p.Stats(); s.Resets != 1 || s.ToTarget != 3 {
		t.Errorf("stats %+v", s)
	}
}

// A lost chunk whose fate, asked again on Changed, is no longer Lost is
// released in order.
func TestLossReleasedOnChange(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	lossy := true
	pol.chunk = func(l nemesis.Link, conn uint64, off int64, b []byte) nemesis.Fate {
		if l == n1n2 && lossy {
			return lost
		}
		return nemesis.Fate{}
	}
	p, tg := start(t, pol, ev, nil)
	a, b := dial(t, p, tg)
	write(t, a, "one")
	pol.awaitCall(t, n1n2, nemesis.NoCut)
	write(t, a, "two")
	pol.awaitCall(t, n1n2, nemesis.NoCut)
	pol.mu.Lock()
	lossy = false
	pol.mu.Unlock()
	p.Changed()
	if got := readN(t, b, 6); string(got) != "onetwo" {
		t.Errorf("%q, want onetwo", got)
	}
	if rel := ev.await(t, EventRelease); rel.Off != 0 {
		t.Errorf("release %+v", rel)
	}
}

// A chunk whose fate was asked before the policy changed, and which is held
// as lost only after the drain looked again at what it held, is looked at
// again too: the loss ended before it was held, so it goes on at once,
// not after its LossReset.
func TestLossEndedWhileAsked(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	var mu sync.Mutex
	lossy := true
	var p *Proxy
	ready := make(chan struct{})
	again := make(chan struct{}, 1) // the drain asked the first chunk's fate again
	pol.chunk = func(l nemesis.Link, conn uint64, off int64, b []byte) nemesis.Fate {
		if l != n1n2 {
			return nemesis.Fate{}
		}
		mu.Lock()
		was := lossy
		mu.Unlock()
		switch {
		case off == 0 && !was:
			again <- struct{}{}
			return nemesis.Fate{}
		case off == 0:
			return lost
		case !was: // the second chunk's fate asked again
			return nemesis.Fate{}
		}
		// The second chunk: its fate is Lost, but before it is held the
		// loss ends and the drain looks again at the first chunk alone.
		<-ready
		mu.Lock()
		lossy = false
		mu.Unlock()
		p.Changed()
		<-again
		return lost
	}
	var tg *target
	p, tg = start(t, pol, ev, nil)
	close(ready)
	a, b := dial(t, p, tg)
	write(t, a, "one")
	pol.awaitCall(t, n1n2, nemesis.NoCut)
	write(t, a, "two")
	if got := readN(t, b, 6); string(got) != "onetwo" {
		t.Errorf("%q, want onetwo", got)
	}
}

// Corruption writes exactly the bytes the policy gives, and the event
// records where.
func TestCorruption(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	const at = 5 // the byte to flip, counted in the stream
	pol.chunk = func(l nemesis.Link, conn uint64, off int64, b []byte) nemesis.Fate {
		if l != n1n2 || at < off || at >= off+int64(len(b)) {
			return nemesis.Fate{}
		}
		body := bytes.Clone(b)
		body[at-off] ^= 1 << 3
		return nemesis.Fate{Copies: []nemesis.Copy{{Body: body, Corrupt: fmt.Sprintf("bit 3 of byte %d", at)}}}
	}
	p, tg := start(t, pol, ev, nil)
	a, b := dial(t, p, tg)
	msg := "hello world"
	write(t, a, msg)
	got := readN(t, b, len(msg))
	want := []byte(msg)
	want[at] ^= 1 << 3
	if !bytes.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	write(t, b, msg)
	if got := readN(t, a, len(msg)); string(got) != msg {
		t.Errorf("the way back: %q", got)
	}
	c := ev.await(t, EventCorrupt)
	if c.Link != n1n2 || c.Off > at || c.Detail != "bit 3 of byte 5" {
		t.Errorf("corrupt event %+v", c)
	}
	if s := p.Stats(); s.Corrupted != 1 {
		t.Errorf("stats %+v", s)
	}
}

// A connection whose dialler is not found is reset, counted, and never
// reaches the target.
func TestUnattributedCarriesNothing(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	pol.set(n1n2, nemesis.Stall)
	asked := 0
	p, tg := start(t, pol, ev, func(c *Config) {
		c.From = ""
		c.AttributeRetry = 10 * time.Millisecond
		c.Attribute = func(remote, local *net.TCPAddr) (string, error) {
			asked++
			return "", errors.New("nobody")
		}
	})
	dialReset(t, p, "sneak")
	u := ev.await(t, EventUnattributed)
	if u.Link.From != "" || !strings.Contains(u.Detail, "nobody") {
		t.Errorf("event %+v", u)
	}
	p.Close()
	if s := p.Stats(); s.Unattributed != 1 || s.Opened != 0 || s.ToTarget != 0 || s.OpenUnattributed != 0 {
		t.Errorf("stats %+v", s)
	}
	if asked < 2 {
		t.Errorf("attribution asked %d times, want retries", asked)
	}
	select {
	case c := <-tg.conns:
		t.Errorf("the target was dialled from %s", c.RemoteAddr())
	default:
	}
}

// Close ends every connection and every goroutine of the proxy.
func TestCloseEndsEverything(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	pol.chunk = func(l nemesis.Link, conn uint64, off int64, b []byte) nemesis.Fate {
		return delayed(time.Hour) // a drain goroutine waits
	}
	p, tg := start(t, pol, ev, nil)
	a, b := dial(t, p, tg)
	write(t, a, "held")
	pol.awaitCall(t, n1n2, nemesis.NoCut)
	pol.set(n2n1, nemesis.Stall)
	write(t, b, "stalled")
	ev.await(t, EventHold)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Open != 0 || s.ToTarget != 0 || s.FromTarget != 0 {
		t.Errorf("after Close: %+v", s)
	}
	if left := proxyGoroutines(); left != "" {
		t.Errorf("goroutines of the proxy outlived Close:\n%s", left)
	}
	if ev.await(t, EventClose).Detail != "proxy closed" {
		t.Errorf("events %+v", ev.list())
	}
	readFails(t, a)
	readFails(t, b)
}
