package servers

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers/hostnet"
)

// layout is where everything of a run listens. On coup's network
// (hostnet), each host has its namespace's address and reaches every
// other at its own, every packet crossing coup:
//
//	node i's own ports        10.77.0.i, in i's namespace
//	i to j                    10.77.0.j, j's own
//
// with each port name k (from 0) at port namespacePort+k, every
// namespace being the run's own. Where namespaces cannot be had, all is
// on loopback, through the proxies:
//
//	node i's own ports        127.0.i.S
//	i's proxy to j (address)  127.i.j.S, on j's port numbers
//	j's proxy (process)       127.255.j.S, on j's port numbers
//
// S, the run's slot, is drawn at random, so that runs side by side (tests
// in parallel) use different addresses; any 127.x.y.z is loopback on
// Linux, with no set-up and no root.
type layout struct {
	slot  int
	net   *hostnet.Network // nil on loopback
	nodes []*scenario.ServerNode
}

// namespacePort is the first port of a host on coup's network.
const namespacePort = 20000

// newNetLayout lays the nodes out on coup's network n.
func newNetLayout(sc *scenario.Scenario, dir string, n *hostnet.Network) (*layout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	l := &layout{net: n}
	port := func(_ int, name string) int { return namespacePort + slices.Index(sc.Server.Ports, name) }
	l.nodes = scenario.ServerNodes(sc, abs, l.host, l.link, l.proxy, port)
	return l, nil
}

// maxLayoutTries bounds the draws of a slot whose ports are free.
const maxLayoutTries = 20

func newLayout(sc *scenario.Scenario, dir string) (*layout, error) {
	if sc.Nodes > scenario.MaxServers { // validation refuses it first
		return nil, fmt.Errorf("at most %d servers fit coup's loopback layout, got %d", scenario.MaxServers, sc.Nodes)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var last error
	for range maxLayoutTries {
		slot := 1 + rand.IntN(254)
		l := &layout{slot: slot}
		ports := map[string]int{}
		port := func(i int, name string) int { return ports[portKey(i, name)] }
		if last = l.pickPorts(sc, ports); last != nil {
			continue
		}
		l.nodes = scenario.ServerNodes(sc, abs, l.host, l.link, l.proxy, port)
		return l, nil
	}
	return nil, fmt.Errorf("no free loopback ports after %d tries: %w", maxLayoutTries, last)
}

func (l *layout) host(i int) string {
	if l.net != nil {
		return l.net.Hosts()[i-1].Addr.String()
	}
	return fmt.Sprintf("127.0.%d.%d", i, l.slot)
}

func (l *layout) link(i, j int) string {
	if l.net != nil {
		return l.host(j)
	}
	return fmt.Sprintf("127.%d.%d.%d", i, j, l.slot)
}

func (l *layout) proxy(j int) string {
	if l.net != nil {
		return l.host(j)
	}
	return fmt.Sprintf("127.255.%d.%d", j, l.slot)
}

func (l *layout) String() string {
	if l.net != nil {
		return "coup's network " + hostnet.Subnet.String()
	}
	return fmt.Sprintf("slot %d", l.slot)
}
func portKey(i int, name string) string { return strconv.Itoa(i) + "/" + name }

// pickPorts has the kernel pick a free port for each of each node's
// ports, on the node's own address. The listeners are closed before the
// servers start: another process could take a port in between, and the
// server then fails to start, with its reason in its log.
func (l *layout) pickPorts(sc *scenario.Scenario, ports map[string]int) error {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for i := 1; i <= sc.Nodes; i++ {
		for _, name := range sc.Server.Ports {
			ln, err := net.Listen("tcp", net.JoinHostPort(l.host(i), "0"))
			if err != nil {
				return err
			}
			lns = append(lns, ln)
			ports[portKey(i, name)] = ln.Addr().(*net.TCPAddr).Port
		}
	}
	return nil
}

// errNoNode is an operation on a node the run does not have.
var errNoNode = errors.New("no such node")
