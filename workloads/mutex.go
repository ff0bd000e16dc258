package workloads

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// The operations of the lock workload.
const (
	FAcquire = "acquire"
	FRelease = "release"
)

// Mutex is the lock workload. Each of its clients is bound to one node and
// loops: pause, acquire, hold the lock for Hold once granted, release.
//
// Client i (1-based) is named ci, and every operation it invokes carries
// that name as its value: the owner the node acquires and releases for
// (see nodes/mutex). Its operations are recorded under a process, first
// ci; when an operation times out (info: it may or may not have taken
// effect) the process is retired, as in Jepsen, and the client goes on
// under the process c(i+k·Clients) for its k-th retirement, so that every
// process is sequential. Its first act under the new process is a release,
// since it may hold the lock after all: ok means it did, a failure means
// it did not (a release of an acquire still waiting withdraws it).
//
// No acquire, and no such release after a timeout, is invoked after
// Until; a client that holds the lock then still releases it after Hold.
type Mutex struct {
	// Clients is the number of clients.
	Clients int
	// Nodes are the nodes the clients talk to: client ci talks to
	// Nodes[(i−1) mod len(Nodes)].
	Nodes []string
	// Rate is how often the clients ask for the lock, in acquires per
	// second over all clients, when nothing makes them wait: before each
	// acquire a client pauses a random time, exponentially distributed with
	// mean Clients/Rate.
	Rate float64
	// Hold is how long a client keeps the lock once granted.
	Hold time.Duration
	// At is when the clients start; Until is when they stop asking.
	At, Until time.Duration
	// Seed seeds the pauses.
	Seed int64

	rng     *rand.Rand
	clients []*lockClient
	by      map[string]*lockClient // by current process
}

// lockClient is one client of the lock workload.
type lockClient struct {
	i       int
	name    string
	node    string
	process string
	retired int
}

var _ Workload = (*Mutex)(nil)

// Start starts every client after a first pause.
func (w *Mutex) Start(c Clients) {
	w.rng = rand.New(rand.NewPCG(uint64(w.Seed), 0x6c6f636b))
	w.by = map[string]*lockClient{}
	for i := 1; i <= w.Clients; i++ {
		name := fmt.Sprintf("c%d", i)
		cl := &lockClient{i: i, name: name, node: w.Nodes[(i-1)%len(w.Nodes)], process: name}
		w.clients = append(w.clients, cl)
		w.by[name] = cl
		w.pauseThenAcquire(c, cl, w.At)
	}
}

// pause is a random pause before an acquire.
func (w *Mutex) pause() time.Duration {
	if w.Rate <= 0 {
		return 0
	}
	mean := float64(w.Clients) / w.Rate * float64(time.Second)
	return time.Duration(w.rng.ExpFloat64() * mean)
}

func (w *Mutex) pauseThenAcquire(c Clients, cl *lockClient, now time.Duration) {
	at := now + w.pause()
	if at >= w.Until {
		return
	}
	c.After(at, func() { c.Invoke(Op{Process: cl.process, Client: cl.name, Node: cl.node, F: FAcquire, Value: cl.name}) })
}

// Complete goes on with the client whose operation ended.
func (w *Mutex) Complete(c Clients, done Completion) {
	cl := w.by[done.Process]
	if cl == nil {
		return // not one of ours
	}
	switch {
	case done.Type == "info":
		delete(w.by, cl.process)
		cl.retired++
		cl.process = fmt.Sprintf("c%d", cl.i+cl.retired*w.Clients)
		w.by[cl.process] = cl
		if done.At < w.Until {
			c.Invoke(Op{Process: cl.process, Client: cl.name, Node: cl.node, F: FRelease, Value: cl.name})
		}
	case done.F == FAcquire && done.Type == "ok":
		c.After(done.At+w.Hold, func() { c.Invoke(Op{Process: cl.process, Client: cl.name, Node: cl.node, F: FRelease, Value: cl.name}) })
	default: // a release that ended, or an acquire that failed
		w.pauseThenAcquire(c, cl, done.At)
	}
}
