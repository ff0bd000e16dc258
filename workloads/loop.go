package workloads

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// loop is the client loop the key-value and echo workloads share: each
// client is bound to one node and, from At until Until, pauses a random
// time (exponential, mean clients/rate) and invokes one operation, then
// waits for it to end. A client whose operation times out (info: it may
// or may not have taken effect) goes on under a new process, as in Jepsen,
// so that every process is sequential: client ci's k-th new process is
// c(i+k·clients).
type loop struct {
	clients int
	nodes   []string
	rate    float64
	at      time.Duration
	until   time.Duration
	rng     *rand.Rand
	// next is the operation a client invokes next.
	next func(cl *client) Op

	all []*client
	by  map[string]*client // by current process
}

// client is one client of a loop.
type client struct {
	i       int
	node    string
	process string
	retired int
	// ops counts the operations the client invoked, over its processes.
	ops int
}

// start starts every client after a first pause.
func (l *loop) start(c Clients, seed int64, stream uint64) {
	l.rng = rand.New(rand.NewPCG(uint64(seed), stream))
	l.by = map[string]*client{}
	for i := 1; i <= l.clients; i++ {
		cl := &client{i: i, node: l.nodes[(i-1)%len(l.nodes)], process: fmt.Sprintf("c%d", i)}
		l.all = append(l.all, cl)
		l.by[cl.process] = cl
		l.pauseThenInvoke(c, cl, l.at)
	}
}

// pause is a random pause before an operation.
func (l *loop) pause() time.Duration {
	if l.rate <= 0 {
		return 0
	}
	mean := float64(l.clients) / l.rate * float64(time.Second)
	return time.Duration(l.rng.ExpFloat64() * mean)
}

func (l *loop) pauseThenInvoke(c Clients, cl *client, now time.Duration) {
	at := now + l.pause()
	if at >= l.until {
		return
	}
	op := l.next(cl) // drawn now, so that the draws follow the seed alone
	c.After(at, func() {
		op.Process, op.Node, op.Client = cl.process, cl.node, fmt.Sprintf("c%d", cl.i)
		cl.ops++
		c.Invoke(op)
	})
}

// complete goes on with the client whose operation ended.
func (l *loop) complete(c Clients, done Completion) {
	cl := l.by[done.Process]
	if cl == nil {
		return // not one of ours
	}
	if done.Type == "info" {
		delete(l.by, cl.process)
		cl.retired++
		cl.process = fmt.Sprintf("c%d", cl.i+cl.retired*l.clients)
		l.by[cl.process] = cl
	}
	l.pauseThenInvoke(c, cl, done.At)
}
