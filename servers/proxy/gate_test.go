package proxy

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coupharness/coup/nemesis"
)

// A connect across a stalled link gets no answer: its SYN is dropped, and
// the dialler's kernel retransmits it, still unanswered, until the heal;
// then a retransmission completes it and bytes flow. Either direction's
// stall shuts the queue (the SYN's answer would go the other way).
func TestStalledLinkLeavesConnectsUnanswered(t *testing.T) {
	for _, stalled := range []struct {
		name string
		set  func(*policy, nemesis.CutKind)
	}{
		{"n1→n2", func(p *policy, c nemesis.CutKind) { p.set(n1n2, c) }},
		{"n2→n1", func(p *policy, c nemesis.CutKind) { p.set(n2n1, c) }},
	} {
		t.Run(stalled.name, func(t *testing.T) {
			pol, ev := newPolicy(), newEvents()
			p, tg := start(t, pol, ev, nil)
			stalled.set(pol, nemesis.Stall)
			p.Changed()
			if e := ev.await(t, EventShut); !strings.Contains(e.Detail, "shut:") || e.Link != n1n2 {
				t.Fatalf("shut event %+v", e)
			}
			if full, err := p.queueFull(); err != nil || !full {
				t.Fatalf("the queue is not full while shut (%v)", err)
			}
			fd := synDial(t, p.Addr().(*net.TCPAddr))
			// The first SYN went unanswered once the kernel retransmits it,
			// and the socket is still connecting.
			info := awaitTCPInfo(t, fd, "a SYN retransmitted", func(i *unix.TCPInfo) bool { return i.Total_retrans >= 1 })
			if info.State != tcpSynSent {
				t.Fatalf("state %d after a retransmitted SYN, want SYN_SENT (%d)", info.State, tcpSynSent)
			}
			if s := p.Stats(); s.Accepted != 0 || s.Opened != 0 || s.Shuts != 1 {
				t.Fatalf("stats while stalled %+v: want nothing accepted, one shut", s)
			}

			stalled.set(pol, nemesis.NoCut)
			p.Changed()
			ev.await(t, EventOpenQueue)
			awaitTCPInfo(t, fd, "the connect completed", func(i *unix.TCPInfo) bool { return i.State == tcpEstablished })
			c := fdConn(t, fd)
			b := tg.accept(t)
			write(t, c, "late")
			if got := readN(t, b, 4); string(got) != "late" {
				t.Fatalf("after the heal: %q", got)
			}
			if s := p.Stats(); s.Accepted != 1 || s.Opened != 1 {
				t.Errorf("stats after the heal %+v: want one accepted and opened (the plugs are not counted)", s)
			}
		})
	}
}

// A proxy that finds its dialler by process cannot shut its queue (its
// address is every dialler's): a connection on a stalled link completes,
// but is held, unread, and its target is dialled only at the heal.
func TestStalledLinkHoldsConnectsBeforeTheDial(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	p, tg := start(t, pol, ev, func(c *Config) {
		c.From = ""
		c.Attribute = func(remote, local *net.TCPAddr) (string, error) { return "n1", nil }
	})
	pol.set(n2n1, nemesis.Stall)
	p.Changed()
	a, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	write(t, a, "early")
	if e := ev.await(t, EventConnectHeld); e.Link != n1n2 {
		t.Fatalf("held event %+v, want it on n1→n2", e)
	}
	if s := p.Stats(); s.Opened != 0 || s.Waiting != 1 || s.HeldConnects != 1 || s.Shuts != 0 {
		t.Fatalf("stats while stalled %+v: want one held, none opened, no shut", s)
	}
	pol.set(n2n1, nemesis.NoCut)
	p.Changed()
	b := tg.accept(t)
	if got := readN(t, b, 5); string(got) != "early" {
		t.Fatalf("after the heal: %q", got)
	}
	if e := ev.await(t, EventRelease); !strings.HasPrefix(e.Detail, "connect held") {
		t.Errorf("release %+v", e)
	}
	if s := p.Stats(); s.Waiting != 0 || s.Opened != 1 {
		t.Errorf("stats after the heal %+v", s)
	}
}

// A connection held before its dial is refused when its link is refused
// meanwhile.
func TestHeldConnectRefused(t *testing.T) {
	pol, ev := newPolicy(), newEvents()
	p, _ := start(t, pol, ev, func(c *Config) {
		c.From = ""
		c.Attribute = func(remote, local *net.TCPAddr) (string, error) { return "n1", nil }
	})
	pol.set(n1n2, nemesis.Stall)
	p.Changed()
	a, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ev.await(t, EventConnectHeld)
	pol.set(n1n2, nemesis.Refuse)
	p.Changed()
	if err := readFails(t, a); !errors.Is(err, unix.ECONNRESET) {
		t.Errorf("read: %v, want a reset", err)
	}
	if r := ev.await(t, EventRefuse); r.Link != n1n2 {
		t.Errorf("refuse %+v", r)
	}
	if s := p.Stats(); s.Waiting != 0 || s.Refused != 1 || s.Opened != 0 {
		t.Errorf("stats %+v", s)
	}
}

// The TCP states of linux/tcp_states.h that the tests look for.
const (
	tcpEstablished = 1
	tcpSynSent     = 2
)

// synDial starts a non-blocking connect to addr and returns its socket.
func synDial(t *testing.T, addr *net.TCPAddr) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	sa := &unix.SockaddrInet4{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To4())
	if err := unix.Connect(fd, sa); err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// awaitTCPInfo asks the kernel for the socket's TCP_INFO until ok holds,
// for at most 20s (a SYN is retransmitted after 1s, 3s, 7s and 15s).
func awaitTCPInfo(t *testing.T, fd int, what string, ok func(*unix.TCPInfo) bool) *unix.TCPInfo {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
		if err != nil {
			t.Fatal(err)
		}
		if ok(info) {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("not %s within 20s: state %d, %d retransmissions", what, info.State, info.Total_retrans)
		}
		time.Sleep(10 * time.Millisecond) // the kernel's state, which nothing announces
	}
}

// fdConn makes a connected socket a net.Conn (the test's copy of it).
func fdConn(t *testing.T, fd int) net.Conn {
	t.Helper()
	dup, err := unix.Dup(fd)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(dup), "dialler")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
