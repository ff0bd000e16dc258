package proxy

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/coupharness/coup/nemesis"
)

// The two directions of a connection.
const (
	up   = 0 // dialler → target
	down = 1 // target → dialler
)

// conn is one forwarded connection: the dialler's socket, the target's,
// and a direction each way.
type conn struct {
	p    *Proxy
	id   uint64
	link nemesis.Link // dialler → the node forwarded to
	sock [2]*net.TCPConn
	dirs [2]*direction

	done    chan struct{} // closed when the connection ends
	once    sync.Once
	running atomic.Int32 // the connection's goroutines still running
	ended   atomic.Int32 // directions whose end of stream was passed on
}

func newConn(p *Proxy, id uint64, link nemesis.Link, dialler, target *net.TCPConn) *conn {
	c := &conn{p: p, id: id, link: link, sock: [2]*net.TCPConn{dialler, target}, done: make(chan struct{})}
	c.dirs[up] = newDirection(c, link, dialler, target)
	c.dirs[down] = newDirection(c, nemesis.Link{From: link.To, To: link.From}, target, dialler)
	return c
}

// run forwards both directions, the upward one from the calling
// goroutine, and returns when that direction's reader ends.
func (c *conn) run() {
	c.running.Store(2)
	c.p.wg.Add(1)
	go func() {
		defer c.p.wg.Done()
		defer c.leave()
		c.dirs[down].read()
	}()
	defer c.leave()
	c.dirs[up].read()
}

// leave is called as each of the connection's goroutines ends; the last
// one lets the proxy forget the connection.
func (c *conn) leave() {
	if c.running.Add(-1) == 0 {
		c.p.remove(c)
	}
}

// halfClosed is called as a direction's end of stream is passed on; once
// both have been, the connection is over.
func (c *conn) halfClosed() {
	if c.ended.Add(1) == 2 {
		c.close("both sides closed")
	}
}

// close ends the connection with an ordinary close of both sockets.
func (c *conn) close(why string) { c.end(EventClose, c.link, 0, why) }

// reset ends the connection with a reset of both sockets, on account of
// direction l (at offset off, when a chunk caused it).
func (c *conn) reset(l nemesis.Link, off int64, why string) { c.end(EventReset, l, off, why) }

// end ends the connection once: sockets closed (with SO_LINGER 0 for a
// reset), goroutines blocked on them or on the queues woken, the event
// emitted. Bytes still held are discarded with the connection, never
// written after a gap.
func (c *conn) end(kind string, l nemesis.Link, off int64, why string) {
	c.once.Do(func() {
		close(c.done)
		for _, s := range c.sock {
			if kind == EventReset {
				_ = s.SetLinger(0)
			}
			_ = s.Close()
		}
		if kind == EventReset {
			c.p.resets.Add(1)
		}
		c.p.emit(Event{Kind: kind, Conn: c.id, Link: l, Off: off, Detail: why})
	})
}
