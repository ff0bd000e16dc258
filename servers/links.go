package servers

import (
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers/proxy"
)

// startProxies puts a proxy on every directed link: for address links, one
// per ordered pair of nodes and peer port, which knows its dialler by the
// address it was dialled at; for process links, one per node and peer
// port, which finds its dialler by the socket's process.
func (r *run) startProxies() error {
	nodes := r.layout.nodes
	want := len(nodes) * len(r.sv.Peer)
	if r.sv.Links != scenario.LinksProcess {
		want *= len(nodes) - 1
	}
	listen := func(cfg proxy.Config) error {
		cfg.Policy = policy{r}
		cfg.Events = r.linkEvent
		cfg.LossReset = r.sv.LossReset.D
		p, err := proxy.Listen(cfg)
		if err != nil {
			return fmt.Errorf("%d of the %d proxies listening: %w", len(r.proxies), want, err)
		}
		r.proxies = append(r.proxies, p)
		return nil
	}
	// One attribution for every proxy: a burst of connections shares its
	// reads of /proc. Hosts that hold their processes (a cgroup, a
	// namespace) list them; a process group is looked for in /proc.
	byProcess := proxy.ByProcess(r.groups)
	if r.iso != nil && r.iso.kind != isolationGroup {
		byProcess = proxy.ByHostProcesses(r.hostPids)
	}
	for _, to := range nodes {
		for _, port := range r.sv.Peer {
			target := to.Addr[port]
			if r.sv.Links == scenario.LinksProcess {
				addr := net.JoinHostPort(r.layout.proxy(to.Index), strconv.Itoa(to.Port[port]))
				if err := listen(proxy.Config{Listen: addr, To: to.ID, Target: target, Attribute: byProcess}); err != nil {
					return err
				}
				continue
			}
			for _, from := range nodes {
				if from == to {
					continue
				}
				addr := net.JoinHostPort(r.layout.link(from.Index, to.Index), strconv.Itoa(to.Port[port]))
				if err := listen(proxy.Config{Listen: addr, To: to.ID, Target: target, From: from.ID}); err != nil {
					return err
				}
			}
		}
	}
	n, err := r.startClientProxies(listen)
	if err != nil {
		return err
	}
	r.logf("links: %d proxies (%s links, %s), %d of them for clients only", len(r.proxies), r.sv.Links, r.layout, n)
	return nil
}

// groups maps each server that is up to its process group, for
// attribution by process.
func (r *run) groups() map[string]int {
	out := map[string]int{}
	for _, s := range r.servers {
		if pid := s.pid(); pid > 0 {
			out[s.id] = pid
		}
	}
	return out
}

// hostPids maps each server that is up to its host's processes, for
// attribution by process.
func (r *run) hostPids() map[string][]int {
	out := map[string][]int{}
	for _, s := range r.servers {
		if pids := s.host.Pids(); len(pids) > 0 {
			out[s.id] = pids
		}
	}
	return out
}

// policy is the nemesis's view of each link, read under the driver's lock.
type policy struct{ r *run }

// Cut says whether a partition cuts the link, and how.
func (p policy) Cut(l nemesis.Link) nemesis.CutKind {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	return p.r.nem.Cut(l)
}

// Chunk asks the nemesis the fate of a chunk as of a message: a loss
// holds it (then resets the connection), a delay or a bandwidth fault
// delays it, a corruption alters it. Base latency and jitter are the
// network's, as for messages.
func (p policy) Chunk(l nemesis.Link, conn uint64, off int64, b []byte) nemesis.Fate {
	r := p.r
	m := nemesis.Msg{Link: l, Type: "stream", Body: b, Size: len(b)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.nem.Alters(l) {
		m.Body = nil // the fate does not depend on the bytes: none is copied
	}
	f := r.nem.Decide(m, r.Now())
	r.links.count(l, m.Size, f.Drop) // the links view's counts (linkcounts.go)
	return f
}

// linkStats counts what the proxies did.
type linkStats struct {
	mu sync.Mutex
	n  map[string]int64
}

func (s *linkStats) add(key string) {
	s.mu.Lock()
	if s.n == nil {
		s.n = map[string]int64{}
	}
	s.n[key]++
	s.mu.Unlock()
}

// reset forgets every count (a Session's next episode counts anew).
func (s *linkStats) reset() {
	s.mu.Lock()
	s.n = nil
	s.mu.Unlock()
}

func (s *linkStats) counts() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for k, v := range s.n {
		out[k] = v
	}
	return out
}

// linkEvent logs what a proxy did, counts it, and records in the history
// what a checker or a reader needs: a connection reset or refused by a
// fault, one that could not be attributed, and where a stream was
// corrupted. Opens, closes and releases are only logged.
func (r *run) linkEvent(e proxy.Event) {
	r.logf("link %s→%s conn %d: %s %s (byte %d)", e.Link.From, e.Link.To, e.Conn, e.Kind, e.Detail, e.Off)
	ev := history.Event{Kind: history.KindMsg, Src: e.Link.From, Dest: e.Link.To, MType: "stream", Msg: int64(e.Conn)}
	switch e.Kind {
	case proxy.EventOpen:
		r.stats.add(history.CountLinkConns)
		return
	case proxy.EventReset:
		r.stats.add(history.CountLinkResets)
		ev.What, ev.Reason = history.MsgDrop, "reset: "+e.Detail
	case proxy.EventRefuse:
		r.stats.add(history.CountLinkRefused)
		if (policy{r}).Cut(e.Link) != nemesis.Refuse && (policy{r}).Cut(nemesis.Link{From: e.Link.To, To: e.Link.From}) != nemesis.Refuse {
			return // the server itself refused (not listening yet): no fault's doing
		}
		ev.What, ev.Reason = history.MsgDrop, "refused: "+e.Detail
	case proxy.EventUnattributed:
		r.stats.add(history.CountLinkUnattributed)
		r.unattributed.Store(&e.Detail) // a failed start names the last (startNote)
		ev.What, ev.Reason = history.MsgDrop, "unattributed: "+e.Detail
	case proxy.EventCorrupt:
		r.stats.add(history.CountLinkCorrupted)
		ev.What, ev.Reason = history.MsgCorrupt, fmt.Sprintf("%s at byte %d", e.Detail, e.Off)
	case proxy.EventHold:
		r.stats.add(history.CountLinkHeld)
		return
	case proxy.EventShut:
		r.stats.add(history.CountLinkQueuesShut)
		return
	case proxy.EventConnectHeld:
		r.stats.add(history.CountLinkConnectsHeld)
		return
	default:
		return
	}
	r.observed(ev)
}
