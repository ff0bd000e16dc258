package proxy

import (
	"fmt"
	"net"
	"time"

	"github.com/coupharness/coup/nemesis"
	"golang.org/x/sys/unix"
)

// A connect across a stalled cut must not complete, as a SYN across a
// real partition gets no answer. The kernel completes a handshake into
// the listener's accept queue before accept() is called, so not accepting
// is not enough; but Linux drops a SYN whose listener's accept queue is
// full (the dialler's kernel then retransmits it, after 1s, 3s, 7s, …,
// until the dialler's own timeout). So a proxy that knows its dialler by
// its address (Config.From) shuts its queue while the link is stalled
// either way: it stops accepting, lowers the queue's bound to one
// (listen(2) again), and fills it with connections of its own (plugs).
// At the heal it raises the bound, accepts and closes the plugs, and the
// diallers' next retransmission completes. No privilege is needed: it is
// the proxy's own socket.
//
// A proxy that finds its dialler by process (Config.Attribute) shares its
// address among diallers, so the kernel cannot tell them apart before
// the handshake: such a connection completes, and the proxy holds it,
// reading nothing and dialling the target only at the heal (awaitConnect).

// shutBacklog is the accept queue's bound while shut. With a bound of 0
// the kernel would also find the SYN queue full and log a "possible SYN
// flooding" line; with 1 it only finds the accept queue full, once two
// plugs are in it.
const shutBacklog = 1

// openBacklog is the bound asked for when the queue opens again; the
// kernel caps it at net.core.somaxconn, as it does Go's own listen.
const openBacklog = 1 << 16

// maxPlugs bounds the plugs dialled to fill a queue.
const maxPlugs = 4

// plugTimeout bounds one plug's dial: on loopback a handshake into a
// queue with room takes microseconds, and one into a full queue never
// completes.
const plugTimeout = 100 * time.Millisecond

// connectCut is how a new connection on link (dialler → target) is cut:
// Refuse when either direction is refused, Stall when either is stalled
// (the SYN goes one way, its answer the other), else NoCut.
func (p *Proxy) connectCut(l nemesis.Link) nemesis.CutKind {
	back := nemesis.Link{From: l.To, To: l.From}
	a, b := p.cfg.Policy.Cut(l), p.cfg.Policy.Cut(back)
	switch {
	case a == nemesis.Refuse || b == nemesis.Refuse:
		return nemesis.Refuse
	case a == nemesis.Stall || b == nemesis.Stall:
		return nemesis.Stall
	}
	return nemesis.NoCut
}

// changes returns a channel closed at the next Changed.
func (p *Proxy) changes() <-chan struct{} {
	p.chMu.Lock()
	defer p.chMu.Unlock()
	return p.changed
}

// signalChange closes the channel of changes and makes a new one; for a
// proxy with a queue to shut, it wakes the accept loop when the link is
// now stalled, so that it stops accepting.
func (p *Proxy) signalChange() {
	p.chMu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.chMu.Unlock()
	if p.cfg.From != "" && p.connectCut(p.link()) == nemesis.Stall {
		// A deadline in the past ends an Accept under way with a timeout.
		_ = p.ln.SetDeadline(time.Now())
	}
}

// link is the link of a proxy that knows its dialler by address.
func (p *Proxy) link() nemesis.Link { return nemesis.Link{From: p.cfg.From, To: p.cfg.To} }

// gate keeps the accept loop's queue shut while the proxy's link is
// stalled (From set), and returns once it may accept, or false once the
// proxy is closed. It is called by the accept loop alone.
func (p *Proxy) gate() bool {
	if p.cfg.From == "" {
		return true
	}
	for {
		// Cleared before the cut is read: a Changed after this point
		// either is seen by the read below, or sets a deadline that ends
		// the next Accept.
		_ = p.ln.SetDeadline(time.Time{})
		ch := p.changes()
		if p.connectCut(p.link()) != nemesis.Stall {
			if p.shutNow {
				p.openQueue()
			}
			return true
		}
		if !p.shutNow {
			p.shutQueue()
		}
		select {
		case <-ch:
		case <-p.ctx.Done():
			return false
		}
	}
}

// shutQueue lowers the accept queue's bound and fills it with plugs.
func (p *Proxy) shutQueue() {
	p.shutNow = true
	p.shuts.Add(1)
	if err := p.setBacklog(shutBacklog); err != nil {
		p.emit(Event{Kind: EventShut, Link: p.link(), Detail: fmt.Sprintf("listen queue not shut: %v", err)})
		return
	}
	plugs := 0
	for range maxPlugs {
		full, err := p.queueFull()
		if err != nil || full {
			break
		}
		d := net.Dialer{Timeout: plugTimeout}
		c, err := d.DialContext(p.ctx, "tcp", p.ln.Addr().String())
		if err != nil {
			break // the queue filled up meanwhile, or the proxy closed
		}
		p.plugs[c.LocalAddr().String()] = c.(*net.TCPConn)
		plugs++
	}
	p.emit(Event{Kind: EventShut, Link: p.link(), Detail: fmt.Sprintf("listen queue shut: new connects go unanswered (%d plugs)", plugs)})
}

// openQueue raises the accept queue's bound again and lets the plugs go:
// the accept loop closes each as it accepts it.
func (p *Proxy) openQueue() {
	p.shutNow = false
	_ = p.setBacklog(openBacklog)
	for _, c := range p.plugs {
		_ = c.Close()
	}
	p.emit(Event{Kind: EventOpenQueue, Link: p.link(), Detail: "listen queue open"})
}

// isPlug says whether an accepted connection is one of the proxy's own
// plugs, and forgets it if so.
func (p *Proxy) isPlug(s *net.TCPConn) bool {
	if len(p.plugs) == 0 {
		return false
	}
	k := s.RemoteAddr().String()
	if _, ok := p.plugs[k]; !ok {
		return false
	}
	delete(p.plugs, k)
	return true
}

// closePlugs closes every plug (the proxy is closing).
func (p *Proxy) closePlugs() {
	for k, c := range p.plugs {
		_ = c.Close()
		delete(p.plugs, k)
	}
}

// setBacklog calls listen(2) again on the listening socket, which changes
// only the bound of its accept queue.
func (p *Proxy) setBacklog(n int) error {
	rc, err := p.ln.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) { lerr = unix.Listen(int(fd), n) }); err != nil {
		return err
	}
	return lerr
}

// queueFull says whether the kernel now drops SYNs to this listener: its
// accept queue holds more than its bound (TCP_INFO of a listening socket
// gives the queue's length as unacked and its bound as sacked, as ss
// shows them).
func (p *Proxy) queueFull() (bool, error) {
	n, max, err := p.queue()
	return n > max, err
}

// queue is the accept queue's length and bound.
func (p *Proxy) queue() (n, max uint32, err error) {
	rc, err := p.ln.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var info *unix.TCPInfo
	var ierr error
	if err := rc.Control(func(fd uintptr) { info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
		return 0, 0, err
	}
	if ierr != nil {
		return 0, 0, ierr
	}
	return info.Unacked, info.Sacked, nil
}

// awaitConnect holds an accepted connection whose link is cut before its
// target is dialled: nothing is read from it and the target never sees
// it until neither direction is stalled. It returns false when the
// connection was refused (a refused link) or the proxy closed, having
// ended the connection.
func (p *Proxy) awaitConnect(s *net.TCPConn, id uint64, link nemesis.Link) bool {
	var since time.Time
	for {
		ch := p.changes()
		switch p.connectCut(link) {
		case nemesis.NoCut:
			if !since.IsZero() {
				p.waiting.Add(-1)
				p.emit(Event{Kind: EventRelease, Conn: id, Link: link,
					Detail: fmt.Sprintf("connect held %s", time.Since(since).Round(time.Microsecond))})
			}
			return true
		case nemesis.Refuse:
			if !since.IsZero() {
				p.waiting.Add(-1)
			}
			refused := link
			if p.cfg.Policy.Cut(link) != nemesis.Refuse {
				refused = nemesis.Link{From: link.To, To: link.From}
			}
			reset(s)
			p.refused.Add(1)
			p.emit(Event{Kind: EventRefuse, Conn: id, Link: link, Detail: fmt.Sprintf("link %s→%s refused", refused.From, refused.To)})
			return false
		}
		if since.IsZero() {
			since = time.Now()
			p.waiting.Add(1)
			p.heldConnects.Add(1)
			p.emit(Event{Kind: EventConnectHeld, Conn: id, Link: link, Detail: "connect held by a stall: the target is dialled at the heal"})
		}
		select {
		case <-ch:
		case <-p.ctx.Done():
			p.waiting.Add(-1)
			_ = s.Close()
			return false
		}
	}
}
