package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coupharness/coup/nemesis"
)

// Config says where a proxy listens, where it forwards, and who decides
// the fate of the bytes.
type Config struct {
	// Listen is the loopback address to listen on ("127.0.0.5:2380",
	// "[::1]:0"): an IP literal in 127.0.0.0/8 or ::1, so that no fault
	// proxy is ever reachable from another machine.
	Listen string
	// To is the node this proxy forwards to.
	To string
	// Target is that node's real address.
	Target string
	// From, when set, is the node every connection comes from (per-link
	// addressing: one listening address per ordered pair of nodes).
	From string
	// Attribute, when From is empty, finds the node that dialled a
	// connection from its remote (the dialler's) and local (this proxy's)
	// addresses; ByProcess is one. An error or an empty name means not
	// found (yet): it is asked again until AttributeRetry has passed.
	Attribute func(remote, local *net.TCPAddr) (string, error)
	// AttributeRetry is how long attribution is retried before the
	// connection is reset (default DefaultAttributeRetry).
	AttributeRetry time.Duration
	// Policy decides cuts and each chunk's fate.
	Policy Policy
	// Events, when set, receives every Event, from many goroutines at
	// once, synchronously: it must be safe for concurrent use, quick, and
	// must not call back into the proxy.
	Events func(Event)
	// DialTimeout bounds the dial to Target (default DefaultDialTimeout).
	DialTimeout time.Duration
	// LossReset is how long a chunk whose fate drops it (a loss) is held
	// before its connection is reset (default DefaultLossReset).
	LossReset time.Duration
}

// The defaults of Config's durations.
const (
	DefaultAttributeRetry = 200 * time.Millisecond
	DefaultDialTimeout    = 5 * time.Second
	DefaultLossReset      = 10 * time.Second
)

func (c *Config) validate() error {
	switch {
	case c.To == "":
		return errors.New("proxy: To: the node forwarded to is not named")
	case c.Target == "":
		return errors.New("proxy: Target: no address to forward to")
	case c.From == "" && c.Attribute == nil:
		return errors.New("proxy: neither From nor Attribute: no way to tell who dials")
	case c.Policy == nil:
		return errors.New("proxy: Policy: none")
	case c.AttributeRetry < 0:
		return fmt.Errorf("proxy: AttributeRetry: %s is negative", c.AttributeRetry)
	case c.DialTimeout < 0:
		return fmt.Errorf("proxy: DialTimeout: %s is negative", c.DialTimeout)
	case c.LossReset < 0:
		return fmt.Errorf("proxy: LossReset: %s is negative", c.LossReset)
	}
	if c.LossReset == 0 {
		c.LossReset = DefaultLossReset
	}
	if c.AttributeRetry == 0 {
		c.AttributeRetry = DefaultAttributeRetry
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	return checkLoopback(c.Listen)
}

// checkLoopback accepts only an IP literal on the loopback network, with
// a port.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("proxy: Listen: %w", err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("proxy: Listen: %q is not a loopback address (want an IP in 127.0.0.0/8 or ::1)", addr)
	}
	return nil
}

// Proxy forwards the connections it accepts to one node, applying the
// policy to every chunk. Its methods are safe for concurrent use.
type Proxy struct {
	cfg    Config
	ln     *net.TCPListener
	ctx    context.Context // ended by Close: stops attribution and dials
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the proxy started
	ids    atomic.Uint64

	accepted, attributing, unattributed, refused, resets, corrupted, released atomic.Int64
	waiting, heldConnects, shuts                                              atomic.Int64

	// policyChanges counts the calls of Changed, each counted before it looks
	// at anything: a chunk whose fate was asked before a change and held
	// after it is looked at again (direction.forward).
	policyChanges atomic.Uint64
	// changed is closed, and replaced, by every Changed.
	chMu    sync.Mutex
	changed chan struct{}
	// The accept loop's own: whether the listen queue is shut, and the
	// plugs that fill it, by their local address (gate.go).
	shutNow bool
	plugs   map[string]*net.TCPConn

	mu     sync.Mutex
	closed bool
	conns  map[*conn]struct{} // connections whose goroutines still run
	opened int64
	bytes  [2]int64 // written by connections that have ended, by direction
}

// Stats are a proxy's counters since it started.
type Stats struct {
	// Accepted counts every connection accepted.
	Accepted int64
	// Opened counts connections attributed and forwarded to the target.
	Opened int64
	// Open is how many forwarded connections are open now.
	Open int64
	// OpenUnattributed is how many accepted connections wait now for their
	// dialler to be found.
	OpenUnattributed int64
	// Unattributed counts connections reset because their dialler was not
	// found.
	Unattributed int64
	// Refused counts new connections reset at once: a refused link, or a
	// target that could not be dialled.
	Refused int64
	// Resets counts open connections reset by a fault.
	Resets int64
	// Corrupted counts chunks written altered; Released chunks held by a
	// stall or a loss and then written.
	Corrupted, Released int64
	// Shuts counts the times the listen queue was shut by a stall, so
	// that new connects went unanswered (a proxy with From only).
	Shuts int64
	// HeldConnects counts connections accepted on a stalled link and held
	// before their target was dialled; Waiting is how many are held now.
	HeldConnects, Waiting int64
	// ToTarget and FromTarget are the bytes written each way: from the
	// diallers to the target, and back.
	ToTarget, FromTarget int64
}

// Listen starts a proxy: it listens on cfg.Listen and forwards to
// cfg.Target until Close.
func Listen(cfg Config) (*Proxy, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{cfg: cfg, ln: ln.(*net.TCPListener), ctx: ctx, cancel: cancel, conns: map[*conn]struct{}{},
		changed: make(chan struct{}), plugs: map[string]*net.TCPConn{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// Changed tells the proxy the policy changed: every open connection that
// carries a link now refused, either way, is reset (TCP cannot reset one
// direction alone), and every held chunk is looked at again: a stalled
// chunk whose link is no longer cut is released, a lost chunk's fate is
// asked again. A proxy that knows its dialler by address shuts its listen
// queue if its link is now stalled, or opens it if no longer; connections
// held before their dial are looked at again.
func (p *Proxy) Changed() {
	p.policyChanges.Add(1)
	p.signalChange()
	for _, c := range p.open() {
		for _, d := range c.dirs {
			if p.cfg.Policy.Cut(d.link) == nemesis.Refuse {
				c.reset(d.link, 0, fmt.Sprintf("link %s→%s refused", d.link.From, d.link.To))
				break
			}
		}
		for _, d := range c.dirs {
			d.wake()
		}
	}
}

// Close stops accepting, closes every connection, and returns once every
// goroutine of the proxy has ended.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	err := p.ln.Close()
	for _, c := range p.open() {
		c.close("proxy closed")
	}
	p.wg.Wait()
	p.closePlugs()
	return err
}

// Stats returns the proxy's counters.
func (p *Proxy) Stats() Stats {
	s := Stats{
		Accepted: p.accepted.Load(), OpenUnattributed: p.attributing.Load(), Unattributed: p.unattributed.Load(),
		Refused: p.refused.Load(), Resets: p.resets.Load(), Corrupted: p.corrupted.Load(), Released: p.released.Load(),
		Shuts: p.shuts.Load(), HeldConnects: p.heldConnects.Load(), Waiting: p.waiting.Load(),
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s.Opened, s.Open = p.opened, int64(len(p.conns))
	s.ToTarget, s.FromTarget = p.bytes[up], p.bytes[down]
	for c := range p.conns {
		s.ToTarget += c.dirs[up].written.Load()
		s.FromTarget += c.dirs[down].written.Load()
	}
	return s
}

// open lists the connections whose goroutines still run.
func (p *Proxy) open() []*conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		out = append(out, c)
	}
	return out
}

// add registers a connection about to be forwarded; false once the proxy
// is closed.
func (p *Proxy) add(c *conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	p.opened++
	return true
}

// remove forgets a connection whose goroutines have all ended, keeping
// its byte counts.
func (p *Proxy) remove(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	for i, d := range c.dirs {
		p.bytes[i] += d.written.Load()
	}
}

func (p *Proxy) emit(e Event) {
	if p.cfg.Events != nil {
		p.cfg.Events(e)
	}
}

// serve accepts connections until the listener is closed, except while
// the gate keeps the listen queue shut.
func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		if !p.gate() {
			return
		}
		s, err := p.ln.AcceptTCP()
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue // woken by Changed: the gate looks again
			}
			// Out of file descriptors, or the like: wait a moment rather
			// than spin.
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		if p.isPlug(s) {
			_ = s.Close()
			continue
		}
		p.accepted.Add(1)
		p.wg.Add(1)
		go p.handle(s, p.ids.Add(1))
	}
}

// handle finds who dialled a connection, refuses it or dials the target,
// and then forwards it until it ends.
func (p *Proxy) handle(s *net.TCPConn, id uint64) {
	defer p.wg.Done()
	from, err := p.attribute(s)
	if err != nil {
		reset(s)
		if p.ctx.Err() != nil {
			return
		}
		p.unattributed.Add(1)
		p.emit(Event{Kind: EventUnattributed, Conn: id, Link: nemesis.Link{To: p.cfg.To}, Detail: err.Error()})
		return
	}
	link := nemesis.Link{From: from, To: p.cfg.To}
	// A connection on a cut link is refused, or held, before its target
	// is dialled: the target never sees a connect the cut should stop.
	if !p.awaitConnect(s, id, link) {
		return
	}
	dialer := net.Dialer{Timeout: p.cfg.DialTimeout}
	t, err := dialer.DialContext(p.ctx, "tcp", p.cfg.Target)
	if err != nil {
		reset(s)
		if p.ctx.Err() != nil {
			return
		}
		p.refused.Add(1)
		p.emit(Event{Kind: EventRefuse, Conn: id, Link: link, Detail: fmt.Sprintf("dial %s: %v", p.cfg.Target, err)})
		return
	}
	c := newConn(p, id, link, s, t.(*net.TCPConn))
	if !p.add(c) {
		s.Close()
		t.Close()
		return
	}
	p.emit(Event{Kind: EventOpen, Conn: id, Link: link, Detail: s.RemoteAddr().String()})
	c.run()
}

// attribute finds the node that dialled s, asking Config.Attribute again
// for up to AttributeRetry.
func (p *Proxy) attribute(s *net.TCPConn) (string, error) {
	if p.cfg.From != "" {
		return p.cfg.From, nil
	}
	p.attributing.Add(1)
	defer p.attributing.Add(-1)
	remote, _ := s.RemoteAddr().(*net.TCPAddr)
	local, _ := s.LocalAddr().(*net.TCPAddr)
	deadline := time.Now().Add(p.cfg.AttributeRetry)
	wait := time.Millisecond
	for {
		from, err := p.cfg.Attribute(remote, local)
		if err == nil && from != "" {
			return from, nil
		}
		if err == nil {
			err = errors.New("no node found")
		}
		if !time.Now().Before(deadline) {
			return "", fmt.Errorf("the dialler of %s: %w", remote, err)
		}
		select {
		case <-p.ctx.Done():
			return "", p.ctx.Err()
		case <-time.After(min(wait, time.Until(deadline))):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// reset closes a socket with a reset (SO_LINGER 0): the peer's next read
// or write fails with "connection reset by peer".
func reset(s *net.TCPConn) {
	_ = s.SetLinger(0)
	_ = s.Close()
}
