package servers

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers/proxy"
	"github.com/coupharness/coup/workloads"
)

// Clients live on hosts. Each client of the workload sits on the host
// [workload] on names (scenario.ClientHosts), and reaches every member as
// a process on that host would: its own host's member at the member's
// own addresses, every other member through coup's proxy for the link
// from its host, at the address a server of that host reaches the member
// by (127.h.j.S, on the member's port numbers), for every port the member
// listens on. A partition that cuts host h from member j so cuts h's
// clients from j, as it cuts h's server.

// hostOf is the host a client (c3, the client's name, which outlives its
// processes) sits on; "" for a name that is not a client's.
func (r *run) hostOf(client string) string {
	n, ok := strings.CutPrefix(client, "c")
	if !ok {
		return ""
	}
	i, err := strconv.Atoi(n)
	if err != nil {
		return ""
	}
	return r.sc.Workload.On.HostOf(i)
}

// clientHosts are the hosts that have a client, in node order.
func (r *run) clientHosts() []*scenario.ServerNode {
	var out []*scenario.ServerNode
	for _, n := range r.layout.nodes {
		for i := 1; i <= r.sc.Workload.Clients; i++ {
			if r.sc.Workload.On.HostOf(i) == n.ID {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// reachFrom is every member's named ports (host:port) as a client on
// host reaches them.
func (r *run) reachFrom(host string) map[string]map[string]string {
	out := map[string]map[string]string{}
	var from *scenario.ServerNode
	for _, n := range r.layout.nodes {
		if n.ID == host {
			from = n
		}
	}
	for _, n := range r.layout.nodes {
		if from == nil || n == from {
			out[n.ID] = n.Addr
			continue
		}
		at := map[string]string{}
		for name, port := range n.Port {
			at[name] = net.JoinHostPort(r.layout.link(from.Index, n.Index), strconv.Itoa(port))
		}
		out[n.ID] = at
	}
	return out
}

// startClientProxies puts a proxy on every address reachFrom gives a
// client that no server's proxy listens on already: for each host with a
// client, each other member and each of its ports (under address links,
// the peer ports' proxies from the host are the servers', and serve the
// clients too). Each knows its dialler by its address: the host.
func (r *run) startClientProxies(listen func(proxy.Config) error) (int, error) {
	if r.clients == nil {
		return 0, nil
	}
	n := 0
	for _, from := range r.clientHosts() {
		for _, to := range r.layout.nodes {
			if to == from {
				continue
			}
			for _, port := range r.sv.Ports {
				if r.sv.Links == scenario.LinksAddress && isPeerPort(r.sv, port) {
					continue
				}
				addr := net.JoinHostPort(r.layout.link(from.Index, to.Index), strconv.Itoa(to.Port[port]))
				if err := listen(proxy.Config{Listen: addr, To: to.ID, Target: to.Addr[port], From: from.ID}); err != nil {
					return n, err
				}
				n++
			}
		}
	}
	return n, nil
}

func isPeerPort(sv *scenario.Server, port string) bool {
	for _, p := range sv.Peer {
		if p == port {
			return true
		}
	}
	return false
}

// byClient carries each client's operations through an opClient of its
// own, made on first use with the addresses its host sees: the built-in
// clients inside coup.
type byClient struct {
	make func(host string) opClient
	r    *run

	mu sync.Mutex
	by map[string]opClient
}

var _ opClient = (*byClient)(nil)

func (b *byClient) Do(ctx context.Context, node string, op workloads.Op) ([]byte, error) {
	name := workloads.ClientOf(op)
	b.mu.Lock()
	c, ok := b.by[name]
	if !ok {
		c = b.make(b.r.hostOf(name))
		b.by[name] = c
	}
	b.mu.Unlock()
	return c.Do(ctx, node, op)
}

// close ends every client's sessions and keep-alives.
func (b *byClient) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.by {
		if cl, ok := c.(interface{ close() }); ok {
			cl.close()
		}
	}
}

// clientPorts is each member's port named "client", of reachFrom's.
func clientPorts(addrs map[string]map[string]string) map[string]string {
	out := map[string]string{}
	for id, ports := range addrs {
		if a, ok := ports["client"]; ok {
			out[id] = a
		}
	}
	return out
}

// maxServedBy bounds the served_by an answer may carry.
const maxServedBy = 128

// servedBy is the member that served an operation, as its answer's
// served_by names it (a node, or the server's own name for itself, which
// the log patterns' self groups teach); "" when it names none.
func (r *run) servedBy(body []byte) string {
	if body == nil {
		return ""
	}
	var a struct {
		ServedBy string `json:"served_by"`
	}
	if json.Unmarshal(body, &a) != nil || a.ServedBy == "" || len(a.ServedBy) > maxServedBy {
		return ""
	}
	r.obs.mu.Lock()
	defer r.obs.mu.Unlock()
	if id, ok := r.obs.names[a.ServedBy]; ok {
		return id
	}
	return a.ServedBy
}

// withServedBy adds served_by to an answer body (unchanged when served
// is empty or the body is no object).
func withServedBy(body []byte, served string) []byte {
	if served == "" || body == nil {
		return body
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	m["served_by"], _ = json.Marshal(served)
	b, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return b
}

// servedSink is the context key of where a client's calls write the
// member that answered (etcd's response header names it).
type servedSink struct{}

// setServed writes the member that answered to the context's sink, if
// it has one.
func setServed(ctx context.Context, member string) {
	if p, ok := ctx.Value(servedSink{}).(*string); ok {
		*p = member
	}
}
