// Package proxy is the fault proxy of coup's real-server driver: a TCP
// proxy that sits on the links between unmodified servers (etcd,
// ZooKeeper) and applies link faults to their byte streams.
//
// One Proxy listens on a loopback address and forwards every connection
// to one node (Config.To, at Config.Target). It learns who dialled either
// from its address (Config.From, when the driver gives each ordered pair
// of nodes its own listening address) or from the dialling process
// (Config.Attribute, such as ByProcess, when every member must use one
// address per peer). A connection whose dialler is not found is reset at
// once and carries no byte. The direction dialler → target is the link
// {From: dialler, To: To}; the way back is {From: To, To: dialler}.
//
// The driver owns the faults: its Policy says, for each directed link,
// whether it is cut (Stall or Refuse) and, for each chunk read on a link
// that is not, its Fate (delay, loss, corruption). The proxy never drops
// bytes from the middle of a stream:
//
//   - Stall holds every chunk read on the link, in order, and writes them
//     once the link is no longer cut. A new connect across a stall (either
//     direction: a SYN and its answer go both ways) gets no answer: a
//     proxy with From shuts its listen queue, so the kernel drops the
//     SYNs and the dialler retransmits them until the heal or its own
//     timeout; a proxy with Attribute cannot tell diallers apart before
//     the handshake, so the connection completes, and is held unread,
//     its target dialled only at the heal (gate.go).
//   - Refuse resets every connection carrying the link either way (TCP
//     cannot reset one direction) and resets new connections at once,
//     before their target is dialled.
//   - Delay holds a chunk for a while; later chunks wait behind it, so
//     order is kept.
//   - Loss holds a chunk (a stall) and resets the connection if it is
//     still held LossReset later: what TCP does when retransmissions keep
//     failing.
//   - Corruption writes other bytes of the same length, and says so in an
//     event before they are written.
//
// The driving contract:
//
//	p, err := proxy.Listen(proxy.Config{Listen: "127.0.0.1:0", To: "n2", Target: n2Addr,
//	        Attribute: proxy.ByProcess(groups), Policy: view, Events: record})
//	// the server n1 is told to reach n2 at p.Addr()
//	loop:
//	    view changes (a partition starts or heals, a loss fault ends)
//	    p.Changed()          // refused links reset, held chunks looked at again
//	p.Close()                // every connection closed, every goroutine ended
//
// The policy is asked on every chunk, from the goroutine that read it:
// Cut, then Chunk. It must answer from its own state under its own lock,
// and must not call the proxy. A change of a link's cut takes effect for
// the next chunk read; chunks already held are looked at again only on
// Changed (or when their own time comes).
//
// When nothing is held, a chunk goes from read to write in one goroutine
// with no copy; a queue and a drain goroutine exist per direction only
// while something is held, and at most 4 MiB is held per direction,
// beyond which the proxy stops reading and TCP's flow control holds the
// sender. A half-close (end of stream one way) is passed on, after what
// is held, as a half-close; an error on either side closes both.
package proxy
