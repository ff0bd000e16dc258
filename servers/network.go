package servers

import (
	"context"

	"fmt"
	"net"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers/hostnet"
)

// The network a run has (history.Meta.Network, results.json's network):
// coup's own, each host a network namespace (hostnet), or the TCP proxy
// on loopback.
const (
	netNamespaces = scenario.NetworkNamespaces
	netProxy      = scenario.NetworkProxy
)

// chooseNetwork is the network a run of sv has: what the scenario asks,
// "auto" being namespaces where they can be had and the proxy elsewhere.
// A scenario that asks for namespaces where they cannot be had is
// refused, with why (never run on the proxy in silence).
func chooseNetwork(sv *scenario.Server) (string, error) {
	switch sv.Network {
	case netProxy:
		return netProxy, nil
	case netNamespaces:
		if err := hostnet.Available(); err != nil {
			return "", fmt.Errorf("the scenario asks for network = %q, which cannot be had here: %w (network = \"proxy\" runs on loopback without root)", netNamespaces, err)
		}
		return netNamespaces, nil
	}
	if hostnet.Available() == nil {
		return netNamespaces, nil
	}
	return netProxy, nil
}

// startNetwork makes coup's network for the run's nodes: a namespace and
// an address per host.
func (r *run) startNetwork() error {
	n, err := hostnet.New(hostnet.Config{Hosts: r.sc.NodeNames(), Policy: netPolicy{r}, Events: r.packetEvent})
	if err != nil {
		return err
	}
	r.net = n
	r.links.unit = history.LinkPackets // its link events count packets
	r.logf("network: coup's, %s, one namespace per host (%s…)", hostnet.Subnet, n.Hosts()[0].Namespace)
	return nil
}

// netHost is a node's host on coup's network, nil on the proxy's.
func (r *run) netHost(node string) *hostnet.Host {
	if r.net == nil {
		return nil
	}
	return r.net.Host(node)
}

// enter runs f inside a node's namespace (a process f starts is the
// host's), or as it is on the proxy's network.
func (r *run) enter(node string) func(f func() error) error {
	if h := r.netHost(node); h != nil {
		return h.Do
	}
	return func(f func() error) error { return f() }
}

// dialFunc dials as net.Dialer.DialContext does.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// dialer is how a process of a node's host dials: from inside its
// namespace on coup's network, so that its connections are the host's
// and cross coup's network like its server's.
func (r *run) dialer(node string) dialFunc {
	if h := r.netHost(node); h != nil {
		return h.DialContext
	}
	var d net.Dialer
	return d.DialContext
}

// netPolicy is the nemesis's view of each link, asked of each packet
// under the driver's lock: the nemesis's fate, as it is (a partition cuts,
// a loss drops, a delay delays, a bandwidth fault queues, a duplicate
// copies, a corruption alters the payload). Base latency and jitter are
// the network's, as for messages.
type netPolicy struct{ r *run }

func (p netPolicy) Packet(m nemesis.Msg) nemesis.Fate {
	r := p.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.nem.Alters(m.Link) {
		m.Body = nil // the fate does not depend on the bytes: none is copied
	}
	return r.nem.Decide(m, r.Now())
}

var _ hostnet.Policy = netPolicy{}

// packetEvent records what the history needs of coup's network: a
// packet refused by a cut, one corrupted.
func (r *run) packetEvent(e hostnet.Event) {
	ev := history.Event{Kind: history.KindMsg, Src: e.Link.From, Dest: e.Link.To, MType: e.Proto, Msg: int64(e.Packet)}
	switch e.Kind {
	case hostnet.EventRefuse:
		ev.What, ev.Reason = history.MsgDrop, "refused: "+e.Detail
	case hostnet.EventCorrupt:
		ev.What, ev.Reason = history.MsgCorrupt, e.Detail
	default:
		return
	}
	r.observed(ev)
}

// netCounts adds what coup's network did to the end event's counters: in
// all, and each link's packets and bytes, as the last link events read
// them (linkcounts.go), so that the counts and the links view agree.
func (r *run) netCounts(counts map[string]int64) {
	if r.net == nil {
		return
	}
	c := r.lastNetCounts()
	t := c.Total()
	for k, v := range map[string]int64{
		history.CountNetPackets: t.Packets, history.CountNetBytes: t.Bytes, history.CountNetCut: t.Cut,
		history.CountNetRefused: t.Refused, history.CountNetLost: t.Lost, history.CountNetDelayed: t.Delayed,
		history.CountNetDuplicated: t.Duplicated, history.CountNetCorrupted: t.Corrupted, history.CountNetUnrouted: c.Unrouted,
	} {
		counts[k] = v
	}
	for l, lc := range c.Links {
		counts[history.CountNetLink+"."+l.From+">"+l.To+".packets"] = lc.Packets
		counts[history.CountNetLink+"."+l.From+">"+l.To+".bytes"] = lc.Bytes
	}
}

// closeNetwork removes coup's network, once every host is down.
func (r *run) closeNetwork() {
	if r.net == nil {
		return
	}
	if err := r.net.Close(); err != nil {
		r.progress("WARNING: coup's network did not close cleanly: %v", err)
	}
}
