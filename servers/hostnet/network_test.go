package hostnet

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/nemesis"
	"golang.org/x/sys/unix"
)

// testPolicy is a policy a test sets: a cut of n1↔n2, a loss, a delay,
// drawn from a seeded source; or a nemesis's own fates (nem, on its
// clock from zero).
type testPolicy struct {
	mu    sync.Mutex
	cut   nemesis.CutKind
	cutTo map[string]bool // links to these hosts stall
	loss  float64
	delay time.Duration
	dup   float64
	flip  bool
	nem   *nemesis.Nemesis
	zero  time.Time
	rng   *rand.Rand
}

func (p *testPolicy) set(f func(p *testPolicy)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func (p *testPolicy) Packet(m nemesis.Msg) nemesis.Fate {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nem != nil {
		return p.nem.Decide(m, time.Since(p.zero))
	}
	if p.cut != nemesis.NoCut {
		return nemesis.Fate{Drop: true, Cut: p.cut}
	}
	if p.cutTo[m.To] {
		return nemesis.Fate{Drop: true, Cut: nemesis.Stall}
	}
	if p.loss > 0 && p.rng.Float64() < p.loss {
		return nemesis.Fate{Drop: true, Reason: nemesis.DropLoss}
	}
	c := nemesis.Copy{Delay: p.delay}
	if p.flip && len(m.Body) > 0 {
		c.Body = append([]byte(nil), m.Body...)
		c.Body[0] ^= 0x20
		c.Corrupt = "bitflip"
	}
	f := nemesis.Fate{Copies: []nemesis.Copy{c}}
	if p.dup > 0 && p.rng.Float64() < p.dup {
		f.Copies = append(f.Copies, nemesis.Copy{Delay: p.delay})
	}
	return f
}

// twoHosts is a network of n1 and n2 under a test policy, closed at the
// test's end, which checks that nothing of it is left.
func twoHosts(t *testing.T) (*Network, *testPolicy) {
	t.Helper()
	return hosts(t, "n1", "n2")
}

// hosts is a network of those hosts under a test policy, as twoHosts.
func hosts(t *testing.T, ids ...string) (*Network, *testPolicy) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("coup's network cannot be made here: %v (the proxy on loopback is what runs without root)", err)
	}
	p := &testPolicy{rng: rand.New(rand.NewPCG(7, 7))}
	before := runtime.NumGoroutine()
	n, err := New(Config{Hosts: ids, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if left := Ours(); len(left) > 0 {
			t.Errorf("namespaces left after Close: %v", left)
		}
		// The network's goroutines (a reader and a writer per host) are
		// gone once Close returns; the test's own (an echo reading a
		// socket closed by a cleanup that runs next) may take a moment.
		if got := runtime.NumGoroutine(); got > before+2 {
			t.Errorf("%d goroutines after Close, %d before the network", got, before)
		}
	})
	return n, p
}

// echo serves UDP on h at port 9000, sending each datagram back.
func echo(t *testing.T, h *Host) string {
	t.Helper()
	addr := h.Addr.String() + ":9000"
	pc, err := h.ListenPacket("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		b := make([]byte, 2048)
		for {
			k, a, err := pc.ReadFrom(b)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(b[:k], a)
		}
	}()
	return addr
}

// ping sends one datagram and waits up to wait for its echo; it returns
// the round trip, or false.
func ping(c net.Conn, wait time.Duration) (time.Duration, bool) {
	start := time.Now()
	if _, err := c.Write([]byte("ping")); err != nil {
		return 0, false
	}
	c.SetReadDeadline(start.Add(wait))
	b := make([]byte, 64)
	for {
		k, err := c.Read(b)
		if err != nil {
			return 0, false
		}
		if string(b[:k]) == "ping" {
			return time.Since(start), true
		}
	}
}

func udpClient(t *testing.T, from *Host, to string) net.Conn {
	t.Helper()
	c, err := from.DialContext(context.Background(), "udp4", to)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// drain reads whatever echoes are still on their way.
func drain(c net.Conn) {
	b := make([]byte, 64)
	for {
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := c.Read(b); err != nil {
			return
		}
	}
}

func TestUDPStopsAcrossACutAndResumesAtTheHeal(t *testing.T) {
	n, p := twoHosts(t)
	c := udpClient(t, n.Host("n1"), echo(t, n.Host("n2")))
	if _, ok := ping(c, 5*time.Second); !ok {
		t.Fatal("no echo before the cut")
	}
	p.set(func(p *testPolicy) { p.cut = nemesis.Stall })
	for i := range 5 {
		if _, ok := ping(c, 200*time.Millisecond); ok {
			t.Fatalf("datagram %d crossed a stalled cut", i)
		}
	}
	if cut := n.Counts().Total().Cut; cut < 5 {
		t.Errorf("%d packets counted as cut, want at least 5", cut)
	}
	p.set(func(p *testPolicy) { p.cut = nemesis.NoCut })
	if _, ok := ping(c, 5*time.Second); !ok {
		t.Fatal("no echo after the heal")
	}
	// A refused cut answers a datagram with port unreachable: the
	// connected socket reads ECONNREFUSED.
	p.set(func(p *testPolicy) { p.cut = nemesis.Refuse })
	c.Write([]byte("ping"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 64)); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a datagram across a refused cut: read %v, want connection refused", err)
	}
}

func TestUDPLossLosesAboutP(t *testing.T) {
	n, p := twoHosts(t)
	h2 := n.Host("n2")
	pc, err := h2.ListenPacket("udp4", h2.Addr.String()+":9001")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	c := udpClient(t, n.Host("n1"), h2.Addr.String()+":9001")
	const loss, sent = 0.3, 1000
	p.set(func(p *testPolicy) { p.loss = loss })
	got := make(chan int)
	go func() {
		k, b := 0, make([]byte, 64)
		for {
			pc.SetReadDeadline(time.Now().Add(2 * time.Second))
			if _, _, err := pc.ReadFrom(b); err != nil {
				got <- k
				return
			}
			k++
		}
	}()
	for range sent {
		c.Write([]byte("x"))
		time.Sleep(100 * time.Microsecond) // within the receiver's buffer
	}
	received := <-got
	lost := float64(sent-received) / sent
	if lost < loss-0.1 || lost > loss+0.1 {
		t.Errorf("%d of %d datagrams arrived: %.2f lost under loss %.1f", received, sent, lost, loss)
	}
	if cl := n.Counts().Links[nemesis.Link{From: "n1", To: "n2"}].Lost; int(cl) != sent-received {
		t.Errorf("n1→n2 counts %d lost, the receiver missed %d", cl, sent-received)
	}
}

func TestUDPDelayGrowsTheRoundTripByTwiceIt(t *testing.T) {
	n, p := twoHosts(t)
	c := udpClient(t, n.Host("n1"), echo(t, n.Host("n2")))
	median := func() time.Duration {
		var rtts []time.Duration
		for range 15 {
			if d, ok := ping(c, 5*time.Second); ok {
				rtts = append(rtts, d)
			}
		}
		if len(rtts) < 10 {
			t.Fatalf("only %d of 15 echoes", len(rtts))
		}
		slices.Sort(rtts)
		return rtts[len(rtts)/2]
	}
	base := median()
	const d = 40 * time.Millisecond
	p.set(func(p *testPolicy) { p.delay = d })
	delayed := median()
	// Each way waits d: the round trip grows by 2d at least, and on a
	// loaded machine by some more.
	if grew := delayed - base; grew < 2*d-time.Millisecond || grew > 2*d+200*time.Millisecond {
		t.Errorf("round trip %v without the delay, %v with %v each way: grew %v, want about %v", base, delayed, d, grew, 2*d)
	}
}

func TestTCPConnectAcrossAStallGetsNoAnswerUntilTheHeal(t *testing.T) {
	n, p := twoHosts(t)
	h2 := n.Host("n2")
	ln, err := h2.Listen("tcp4", h2.Addr.String()+":9002")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello"))
			c.Close()
		}
	}()
	p.set(func(p *testPolicy) { p.cut = nemesis.Stall })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_, err = n.Host("n1").DialContext(ctx, "tcp4", h2.Addr.String()+":9002")
	cancel()
	var ne net.Error
	if err == nil || !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("a connect across a stalled cut: %v, want no answer (the dial timing out)", err)
	}
	// A connect under way at the heal completes: its SYN, retransmitted,
	// now crosses.
	heal := 1500 * time.Millisecond
	start := time.Now()
	time.AfterFunc(heal, func() { p.set(func(p *testPolicy) { p.cut = nemesis.NoCut }) })
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := n.Host("n1").DialContext(ctx, "tcp4", h2.Addr.String()+":9002")
	if err != nil {
		t.Fatalf("a connect under way at the heal: %v", err)
	}
	defer c.Close()
	if took := time.Since(start); took < heal {
		t.Errorf("the connect was answered after %v, before the heal at %v", took, heal)
	}
	b := make([]byte, 5)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(b); err != nil || string(b) != "hello" {
		t.Errorf("read %q, %v after the heal", b, err)
	}
	// A refused cut resets a connect at once.
	p.set(func(p *testPolicy) { p.cut = nemesis.Refuse })
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := n.Host("n1").DialContext(ctx, "tcp4", h2.Addr.String()+":9002"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a connect across a refused cut: %v, want connection refused", err)
	}
}

func TestDuplicatesAndCorruptionReachTheReceiver(t *testing.T) {
	n, p := twoHosts(t)
	h2 := n.Host("n2")
	pc, err := h2.ListenPacket("udp4", h2.Addr.String()+":9003")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	c := udpClient(t, n.Host("n1"), h2.Addr.String()+":9003")
	p.set(func(p *testPolicy) { p.dup, p.flip = 1, true })
	c.Write([]byte("abc"))
	b := make([]byte, 64)
	for i := range 2 {
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		k, _, err := pc.ReadFrom(b)
		if err != nil {
			t.Fatalf("copy %d: %v", i+1, err)
		}
		// The first copy is corrupted (its checksum redone, so the
		// kernel delivers it); the duplicate is the packet as sent.
		want := map[int]string{0: "Abc", 1: "abc"}[i]
		if string(b[:k]) != want {
			t.Errorf("copy %d: %q, want %q", i+1, b[:k], want)
		}
	}
	tot := n.Counts().Total()
	if tot.Duplicated != 1 || tot.Corrupted != 1 {
		t.Errorf("counted %d duplicated and %d corrupted, want 1 and 1", tot.Duplicated, tot.Corrupted)
	}
}

func TestLeftoversOfADeadRunAreRemoved(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("coup's network cannot be made here: %v", err)
	}
	// A namespace named as a coup that is gone would name it (pid 2^22,
	// beyond pid_max's default, is never alive).
	name := "coup-4194304-test-n1"
	if _, err := addNamespace(name); err != nil {
		t.Fatal(err)
	}
	removed, err := Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, name) {
		t.Errorf("Leftovers removed %v, not %s", removed, name)
		_ = deleteNamespace(name)
	}
}

// A bandwidth fault holds a TCP stream to its rate: what a sender that
// never waits gets across a throttled link in a few seconds is within 20%
// of the rate's worth, at two rates (a limit that did nothing, or one
// that dropped too much, is outside it).
func TestBandwidthLimitsATCPStream(t *testing.T) {
	n, p := twoHosts(t)
	h2 := n.Host("n2")
	ln, err := h2.Listen("tcp4", h2.Addr.String()+":9004")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, rate := range []float64{250e3, 2e6} { // bytes a second
		nem, err := nemesis.InForce([]string{"n1", "n2"}, nemesis.Fault{Kind: nemesis.Bandwidth, Target: nemesis.Target{Nodes: []string{"n1"}}, Direction: nemesis.Out, Rate: rate, Burst: 16 << 10})
		if err != nil {
			t.Fatal(err)
		}
		p.set(func(p *testPolicy) { p.nem, p.zero = nem, time.Now() })
		k, took := stream(t, ln, n.Host("n1"), h2.Addr.String()+":9004", 3*time.Second)
		got := float64(k) / took.Seconds()
		t.Logf("%d bytes in %v across a %g B/s limit: %.0f B/s (%.2f of it)", k, took, rate, got, got/rate)
		if got < 0.8*rate || got > 1.2*rate {
			t.Errorf("%.0f B/s across a %g B/s limit: not within 20%% of it", got, rate)
		}
	}
}

// stream sends as fast as it can from h to addr for span, on a connection
// ln accepts, and returns the bytes that arrived meanwhile and how long
// that was.
func stream(t *testing.T, ln net.Listener, h *Host, addr string, span time.Duration) (int64, time.Duration) {
	t.Helper()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- 0
			return
		}
		defer c.Close()
		var k int64
		b := make([]byte, 64<<10)
		c.SetReadDeadline(time.Now().Add(span))
		for {
			m, err := c.Read(b)
			k += int64(m)
			if err != nil {
				got <- k
				return
			}
		}
	}()
	c, err := h.DialContext(context.Background(), "tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16<<10)
	start := time.Now()
	c.SetWriteDeadline(start.Add(span))
	for time.Since(start) < span {
		if _, err := c.Write(buf); err != nil {
			break // the deadline
		}
	}
	k := <-got // the reader's own deadline: what arrived within the span
	took := time.Since(start)
	c.(*net.TCPConn).SetLinger(0)
	c.Close() // what is still queued is reset away
	return k, took
}

// vrrpSocket is a raw socket of IP protocol 112 (VRRP's) on h, a member
// of VRRP's multicast group on coup0.
func vrrpSocket(t *testing.T, h *Host) int {
	t.Helper()
	fd := -1
	err := h.Do(func() error {
		var err error
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, protoVRRP); err != nil {
			return err
		}
		mreq := &unix.IPMreq{Multiaddr: [4]byte{224, 0, 0, 18}, Interface: h.Addr.As4()}
		if err := unix.SetsockoptIPMreq(fd, unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, mreq); err != nil {
			return err
		}
		if err := unix.SetsockoptInet4Addr(fd, unix.IPPROTO_IP, unix.IP_MULTICAST_IF, h.Addr.As4()); err != nil {
			return err
		}
		return unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 300_000})
	})
	if err != nil {
		t.Fatalf("%s: a raw VRRP socket: %v", h.ID, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// received reads what fd got until it has nothing for 300ms, and counts
// the packets that carry payload.
func received(fd int, payload string) int {
	n, b := 0, make([]byte, 2048)
	for {
		k, _, err := unix.Recvfrom(fd, b, 0)
		if err != nil {
			return n
		}
		if p, ok := parse(b[:k]); ok && string(p.b[p.payload:]) == payload {
			n++
		}
	}
}

// A packet of IP protocol 112 to VRRP's multicast group reaches every
// other host, each copy on its own link's fate: a cut of the link to n3
// stops n3's copies, not n2's.
func TestMulticastOfAnotherProtocolCrossesEachLink(t *testing.T) {
	n, p := hosts(t, "n1", "n2", "n3")
	send := vrrpSocket(t, n.Host("n1"))
	at2, at3 := vrrpSocket(t, n.Host("n2")), vrrpSocket(t, n.Host("n3"))
	group := &unix.SockaddrInet4{Addr: [4]byte{224, 0, 0, 18}}
	advertise := func(what string) {
		for range 3 {
			if err := unix.Sendto(send, []byte(what), 0, group); err != nil {
				t.Fatalf("send to 224.0.0.18: %v", err)
			}
		}
	}
	advertise("before")
	if a, b := received(at2, "before"), received(at3, "before"); a != 3 || b != 3 {
		t.Errorf("before the cut n2 got %d and n3 %d of 3 advertisements", a, b)
	}
	p.set(func(p *testPolicy) { p.cutTo = map[string]bool{"n3": true} })
	advertise("during")
	if a, b := received(at2, "during"), received(at3, "during"); a != 3 || b != 0 {
		t.Errorf("with n1→n3 cut n2 got %d (want 3) and n3 %d (want 0)", a, b)
	}
	c := n.Counts().Links
	// The group's IGMP reports (n1 joined it too) are flooded and cut
	// as well: at least the three advertisements.
	if got := c[nemesis.Link{From: "n1", To: "n3"}].Cut; got < 3 {
		t.Errorf("n1→n3 counts %d cut, want at least 3", got)
	}
}
