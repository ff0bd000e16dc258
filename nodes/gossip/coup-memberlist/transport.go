package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// The messages a gossip node sends its peers: memberlist's packets, and its
// streams cut into pieces. They are JSON bodies like every node's, so the
// harness routes, counts, delays, drops and corrupts them like any other.
const (
	typePacket = "packet" // one memberlist packet (UDP, in memberlist's own transport)
	typeOpen   = "open"   // a stream is opened (TCP, in memberlist's own transport)
	typeData   = "data"   // a piece of a stream
	typeClose  = "close"  // the sender closed its end of a stream
)

// body is every gossip message.
type body struct {
	Type string `json:"type"`
	// Data is a packet or a piece of a stream (base64 in the JSON).
	Data []byte `json:"data,omitempty"`
	// Conn names a stream: its dialer's id for it.
	Conn string `json:"conn,omitempty"`
	// Dialer is true on the messages the dialing end sends.
	Dialer bool `json:"dialer,omitempty"`
	// Seq numbers a stream's pieces from 1; a close carries the number of
	// pieces its sender sent.
	Seq int64 `json:"seq,omitempty"`
}

// maxPiece is the most bytes of a stream one message carries.
const maxPiece = 32 << 10

// transport is memberlist's network, over the node protocol: every packet
// and every piece of a stream is a message through the harness, so the
// nemesis sees all of memberlist's traffic. Addresses are labels only
// ("127.0.0.1:7001" is n1): nothing listens anywhere.
type transport struct {
	self   string
	addrOf map[string]string // node → address
	nodeOf map[string]string // address → node
	send   func(dest string, b body)

	packets chan *memberlist.Packet
	streams chan net.Conn

	mu    sync.Mutex
	conns map[connKey]*conn
	gone  map[connKey]bool // streams closed at both ends, so late pieces make no new ones
	next  int64
	epoch string // tells this incarnation's streams from a former one's
	down  bool
}

// connKey names a stream at one end: the peer, the dialer's id for it, and
// whether this end dialed.
type connKey struct {
	peer   string
	id     string
	dialed bool
}

// Address is the memberlist address that stands for the i-th node (from 0).
func Address(i int) string { return "127.0.0.1:" + strconv.Itoa(7001+i) }

func newTransport(self string, all []string, epoch string, send func(string, body)) *transport {
	t := &transport{
		self: self, addrOf: map[string]string{}, nodeOf: map[string]string{}, send: send,
		packets: make(chan *memberlist.Packet, 1024), streams: make(chan net.Conn, 64),
		conns: map[connKey]*conn{}, gone: map[connKey]bool{}, epoch: epoch,
	}
	for i, n := range all {
		t.addrOf[n], t.nodeOf[Address(i)] = Address(i), n
	}
	return t
}

var _ memberlist.NodeAwareTransport = (*transport)(nil)

func (t *transport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	return t.WriteTo(b, a.Addr)
}

func (t *transport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	return t.DialTimeout(a.Addr, timeout)
}

func (t *transport) FinalAdvertiseAddr(string, int) (net.IP, int, error) {
	host, port, err := net.SplitHostPort(t.addrOf[t.self])
	if err != nil {
		return nil, 0, err
	}
	p, _ := strconv.Atoi(port)
	return net.ParseIP(host), p, nil
}

func (t *transport) WriteTo(b []byte, addr string) (time.Time, error) {
	dest, ok := t.nodeOf[addr]
	if !ok {
		return time.Time{}, fmt.Errorf("no node has address %s", addr)
	}
	t.send(dest, body{Type: typePacket, Data: b})
	return time.Now(), nil
}

func (t *transport) PacketCh() <-chan *memberlist.Packet { return t.packets }
func (t *transport) StreamCh() <-chan net.Conn           { return t.streams }

func (t *transport) DialTimeout(addr string, _ time.Duration) (net.Conn, error) {
	dest, ok := t.nodeOf[addr]
	if !ok {
		return nil, fmt.Errorf("no node has address %s", addr)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.down {
		return nil, net.ErrClosed
	}
	t.next++
	k := connKey{peer: dest, id: t.epoch + "." + strconv.FormatInt(t.next, 10), dialed: true}
	c := t.newConn(k)
	t.send(dest, body{Type: typeOpen, Conn: k.id, Dialer: true})
	return c, nil
}

func (t *transport) Shutdown() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.down = true
	return nil
}

// newConn makes one end of a stream (called under mu).
func (t *transport) newConn(k connKey) *conn {
	c := &conn{t: t, key: k, notify: make(chan struct{}, 1), pieces: map[int64][]byte{}}
	c.local, c.remote = tcpAddr(t.addrOf[t.self]), tcpAddr(t.addrOf[k.peer])
	t.conns[k] = c
	return c
}

func tcpAddr(s string) net.Addr {
	a, err := net.ResolveTCPAddr("tcp", s)
	if err != nil {
		return &net.TCPAddr{}
	}
	return a
}

// receive takes a message from a peer.
func (t *transport) receive(from string, b body) {
	switch b.Type {
	case typePacket:
		select {
		case t.packets <- &memberlist.Packet{Buf: b.Data, From: tcpAddr(t.addrOf[from]), Timestamp: time.Now()}:
		default: // memberlist is not keeping up: drop, as a full socket buffer would
		}
		return
	case typeOpen, typeData, typeClose:
	default:
		return
	}
	// A message from the dialer is for the accepting end, and the other
	// way round.
	k := connKey{peer: from, id: b.Conn, dialed: !b.Dialer}
	t.mu.Lock()
	c, ok := t.conns[k]
	if !ok && b.Dialer && !t.gone[k] && !t.down {
		// The first message of a stream this end accepts, whichever of its
		// messages comes first.
		c, ok = t.newConn(k), true
		select {
		case t.streams <- c:
		default:
			delete(t.conns, k)
			t.gone[k] = true
			ok = false
		}
	}
	t.mu.Unlock()
	if !ok {
		return
	}
	switch b.Type {
	case typeData:
		c.arrive(b.Seq, b.Data)
	case typeClose:
		c.closedBy(b.Seq)
	}
}

// forget drops a stream closed at both ends.
func (t *transport) forget(k connKey) {
	t.mu.Lock()
	delete(t.conns, k)
	t.gone[k] = true
	t.mu.Unlock()
}

// conn is one end of a stream. Pieces may arrive out of order or twice (the
// nemesis delays and duplicates them); they are read in order. A piece that
// never comes stalls the stream until memberlist's deadline ends it, as a
// broken TCP connection would.
type conn struct {
	t             *transport
	key           connKey
	local, remote net.Addr
	notify        chan struct{}

	mu       sync.Mutex
	pieces   map[int64][]byte // arrived out of order
	ready    []byte           // in order, not yet read
	read     int64            // the last piece moved to ready
	sent     int64            // pieces written
	total    int64            // pieces the peer sent, once it closed
	peerDone bool
	closed   bool
	deadline time.Time
}

func (c *conn) wake() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

func (c *conn) arrive(seq int64, data []byte) {
	c.mu.Lock()
	if seq > c.read {
		if _, dup := c.pieces[seq]; !dup {
			c.pieces[seq] = data
		}
		for {
			p, ok := c.pieces[c.read+1]
			if !ok {
				break
			}
			delete(c.pieces, c.read+1)
			c.read++
			c.ready = append(c.ready, p...)
		}
	}
	c.mu.Unlock()
	c.wake()
}

func (c *conn) closedBy(total int64) {
	c.mu.Lock()
	c.peerDone, c.total = true, total
	both := c.closed
	c.mu.Unlock()
	c.wake()
	if both {
		c.t.forget(c.key)
	}
}

// Read returns bytes in order; io.EOF once the peer has closed and every
// piece it sent has been read; a timeout error at the read deadline.
func (c *conn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		switch {
		case len(c.ready) > 0:
			n := copy(p, c.ready)
			c.ready = c.ready[n:]
			c.mu.Unlock()
			return n, nil
		case c.closed:
			c.mu.Unlock()
			return 0, net.ErrClosed
		case c.peerDone && c.read >= c.total:
			c.mu.Unlock()
			return 0, io.EOF
		}
		deadline := c.deadline
		c.mu.Unlock()
		if deadline.IsZero() {
			<-c.notify
			continue
		}
		d := time.Until(deadline)
		if d <= 0 {
			return 0, os.ErrDeadlineExceeded
		}
		tm := time.NewTimer(d)
		select {
		case <-c.notify:
		case <-tm.C:
		}
		tm.Stop()
	}
}

// Write sends p as pieces; it never blocks.
func (c *conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	for off := 0; off < len(p); off += maxPiece {
		end := min(off+maxPiece, len(p))
		c.sent++
		c.t.send(c.key.peer, body{Type: typeData, Conn: c.key.id, Dialer: c.key.dialed, Seq: c.sent, Data: append([]byte(nil), p[off:end]...)})
	}
	return len(p), nil
}

func (c *conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	both := c.peerDone
	c.t.send(c.key.peer, body{Type: typeClose, Conn: c.key.id, Dialer: c.key.dialed, Seq: c.sent})
	c.mu.Unlock()
	c.wake()
	if both {
		c.t.forget(c.key)
	}
	return nil
}

func (c *conn) LocalAddr() net.Addr  { return c.local }
func (c *conn) RemoteAddr() net.Addr { return c.remote }

func (c *conn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }
func (c *conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	c.wake()
	return nil
}
func (c *conn) SetWriteDeadline(time.Time) error { return nil } // writes never block

// encode is a body's JSON.
func encode(b body) []byte {
	out, _ := json.Marshal(b) // a body always encodes
	return out
}
