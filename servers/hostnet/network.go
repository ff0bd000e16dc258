package hostnet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"

	"github.com/coupharness/coup/nemesis"
)

// Subnet holds every host's address: the i-th host (from 1) is 10.77.0.i.
// Each network's namespaces are its own, so networks side by side share
// the addresses without meeting; nothing outside them has a route there.
var Subnet = netip.MustParsePrefix("10.77.0.0/24")

// MaxHosts is how many hosts fit the subnet.
const MaxHosts = 254

// DefaultMTU is each host's interface's MTU: the most an IPv4 packet
// holds, as on loopback (whose 65536 the proxy's links had), so that a
// TCP stream between hosts moves in large segments, each one read and
// one write through coup. With Ethernet's 1500, the same stream took
// about 40 times as many packets and ran at a tenth of the speed
// (docs/performance.md); a fault acts on a packet, whatever its size.
const DefaultMTU = 65535

// Config configures a network.
type Config struct {
	// Hosts are the hosts' names (n1, n2…), each given a namespace of its
	// own and, in this order, the addresses 10.77.0.1, 10.77.0.2…
	Hosts []string
	// Policy decides the fate of every packet between two hosts (nil:
	// every packet is delivered at once).
	Policy Policy
	// Events receives what the history should record (nil: nothing). It
	// is called from the goroutine that read the packet, and must not
	// block for long.
	Events func(Event)
	// MTU is each host's interface's MTU (0: DefaultMTU).
	MTU int
}

// Network is coup's network between hosts: each host is a network
// namespace whose one interface is a TUN device, and coup, holding the
// other end of every one, forwards each packet between them after asking
// the policy what becomes of it.
type Network struct {
	cfg   Config
	tag   string
	hosts []*Host
	byIP  map[netip.Addr]*Host
	links [][]*link // links[from][to], by index from 0
	seq   atomic.Uint64
	unrouted,
	notIPv4 atomic.Int64

	done    chan struct{}
	wg      sync.WaitGroup
	closeMu sync.Mutex
	closed  bool
}

// Host is one host of a network: its name, address and namespace.
type Host struct {
	// ID is the host's name (n1).
	ID string
	// Addr is its address.
	Addr netip.Addr
	// Namespace is its namespace's name; Path is the namespace's file,
	// what `nsenter --net=PATH` or setns(2) enters.
	Namespace, Path string

	i    int
	n    *Network
	ns   *os.File
	tun  *os.File
	wire *wire // what waits to be written to the host
}

// Available says why a network cannot be made here (nil when it can):
// it needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) for the namespaces, and
// /dev/net/tun and the ip command.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces and TUN devices need root")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("no TUN device: %w", err)
	}
	if err := ipCmd(nil, "-V"); err != nil {
		return fmt.Errorf("the ip command (Debian's iproute2): %w", err)
	}
	return nil
}

// New makes the network: a namespace per host, its TUN device, address
// and routes, and the goroutines that forward packets. It first removes
// what runs of coup killed before their end left (Leftovers). Close
// removes everything it made; a New that fails removes what it made.
func New(cfg Config) (*Network, error) {
	if len(cfg.Hosts) == 0 || len(cfg.Hosts) > MaxHosts {
		return nil, fmt.Errorf("a network has 1 to %d hosts, not %d", MaxHosts, len(cfg.Hosts))
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultMTU
	}
	if cfg.Policy == nil {
		cfg.Policy = PolicyFunc(func(nemesis.Msg) nemesis.Fate { return nemesis.Fate{} })
	}
	if _, err := homeNamespace(); err != nil {
		return nil, err
	}
	_, _ = Leftovers()
	var tag [3]byte
	_, _ = rand.Read(tag[:])
	n := &Network{cfg: cfg, tag: hex.EncodeToString(tag[:]), byIP: map[netip.Addr]*Host{}, done: make(chan struct{})}
	base := Subnet.Addr().As4()
	for i, id := range cfg.Hosts {
		a := base
		a[3] = byte(i + 1)
		h := &Host{ID: id, Addr: netip.AddrFrom4(a), Namespace: nsName(n.tag, id), i: i, n: n}
		h.Path = NamespaceDir + "/" + h.Namespace
		n.hosts = append(n.hosts, h)
		n.byIP[h.Addr] = h
	}
	for _, from := range n.hosts {
		row := make([]*link, len(n.hosts))
		for _, to := range n.hosts {
			if to != from {
				row[to.i] = &link{l: nemesis.Link{From: from.ID, To: to.ID}}
			}
		}
		n.links = append(n.links, row)
	}
	// The hosts are made side by side: each is a few commands.
	errs := make([]error, len(n.hosts))
	var wg sync.WaitGroup
	for i, h := range n.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.make(cfg.MTU)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		n.Close()
		return nil, err
	}
	for _, h := range n.hosts {
		h.wire = newWire(h)
		n.wg.Add(2)
		go h.wire.run()
		go n.read(h)
	}
	return n, nil
}

// make makes the host's namespace, its TUN device and its configuration.
func (h *Host) make(mtu int) error {
	ns, err := addNamespace(h.Namespace)
	if err != nil {
		return fmt.Errorf("%s: %w", h.ID, err)
	}
	h.ns = ns
	if h.tun, err = openTUN(ns); err != nil {
		return fmt.Errorf("%s: %w", h.ID, err)
	}
	if err := configure(h.Namespace, netip.PrefixFrom(h.Addr, Subnet.Bits()), mtu); err != nil {
		return fmt.Errorf("%s: %w", h.ID, err)
	}
	return nil
}

// Hosts are the network's hosts, in the order of Config.Hosts.
func (n *Network) Hosts() []*Host { return n.hosts }

// Host is the host of that name, nil for none.
func (n *Network) Host(id string) *Host {
	for _, h := range n.hosts {
		if h.ID == id {
			return h
		}
	}
	return nil
}

// Tag is what names the network's namespaces apart from other networks'.
func (n *Network) Tag() string { return n.tag }

// Close stops forwarding, closes every TUN device (its interface goes)
// and removes every namespace, and waits until every goroutine of the
// network has ended. A namespace in which a process still runs lives on
// unnamed until that process ends: stop the hosts' processes first.
func (n *Network) Close() error {
	n.closeMu.Lock()
	defer n.closeMu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	close(n.done)
	var errs []error
	for _, h := range n.hosts {
		if h.tun != nil {
			errs = append(errs, h.tun.Close())
		}
	}
	n.wg.Wait()
	for _, h := range n.hosts {
		if h.ns == nil {
			continue
		}
		h.ns.Close()
		errs = append(errs, deleteNamespace(h.Namespace))
	}
	return errors.Join(errs...)
}

// Do runs f on a thread inside the host's namespace: a socket f opens is
// the host's, and a process it starts (fork and exec on that thread)
// starts there, with everything it forks after.
func (h *Host) Do(f func() error) error { return inNamespace(h.ns, f) }

// DialContext dials addr from inside the host, as a process of the host
// would: the connection's address is the host's, and its packets cross
// coup's network like the host's servers'.
func (h *Host) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := h.Do(func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Listen listens on the host (a TCP or Unix stream).
func (h *Host) Listen(network, addr string) (net.Listener, error) {
	var l net.Listener
	err := h.Do(func() (err error) {
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// ListenPacket opens a packet socket on the host (UDP).
func (h *Host) ListenPacket(network, addr string) (net.PacketConn, error) {
	var c net.PacketConn
	err := h.Do(func() (err error) {
		c, err = net.ListenPacket(network, addr)
		return err
	})
	return c, err
}
