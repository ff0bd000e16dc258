package workloads

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// loop is the client loop the key-value, set and echo workloads share:
// each client is bound to one node and, from At until Until, pauses a
// random time (exponential, mean clients/rate) and invokes one operation,
// then waits for it to end. A client whose operation times out (info: it
// may or may not have taken effect) goes on under a new process, as in
// Jepsen, so that every process is sequential: client ci's k-th new
// process is c(i+k·clients).
//
// With final reads (final.at > 0), each reader, at final.at (after the
// heal) or once its operation then in flight has ended, invokes its final
// reads one after another (final.ops), each again, FinalRetry after it
// failed or timed out, until it returns ok or the run ends.
type loop struct {
	clients int
	nodes   []string
	rate    float64
	at      time.Duration
	until   time.Duration
	rng     *rand.Rand
	// next is the operation a client invokes next.
	next func(cl *client) Op
	// final are the final reads, if any.
	final finalReads

	all []*client
	by  map[string]*client // by current process
}

// finalReads are a workload's final reads.
type finalReads struct {
	// at is when they begin (0: there are none).
	at time.Duration
	// readers are the clients that read ("c1"); none means every client.
	readers []string
	// ops are a reader's final reads, in order.
	ops func(cl *client) []Op
}

// FinalRetry is how long a reader waits before it invokes a final read
// again, after the read failed or timed out.
const FinalRetry = 100 * time.Millisecond

// client is one client of a loop.
type client struct {
	i       int
	node    string
	process string
	retired int
	// ops counts the operations the client invoked, over its processes.
	ops int

	// busy: an operation of the client is in flight; inFinal: it is a
	// final read.
	busy, inFinal bool
	// finalOn: the client's final reads have begun; final are those yet
	// to return ok.
	finalOn bool
	final   []Op
}

// name is the client's name, which outlives its processes ("c1").
func (cl *client) name() string { return fmt.Sprintf("c%d", cl.i) }

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
	if l.final.at > 0 {
		c.After(l.final.at, func() { l.startFinal(c) })
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
		if cl.finalOn {
			return // the final reads came first, on a real clock: they have begun
		}
		l.invoke(c, cl, op)
	})
}

func (l *loop) invoke(c Clients, cl *client, op Op) {
	op.Process, op.Node, op.Client = cl.process, cl.node, cl.name()
	cl.ops++
	cl.busy = true
	c.Invoke(op)
}

// startFinal begins the final reads of every reader: at once, or for a
// reader whose operation is in flight, once it has ended.
func (l *loop) startFinal(c Clients) {
	for _, cl := range l.all {
		if len(l.final.readers) > 0 && !slices.Contains(l.final.readers, cl.name()) {
			continue
		}
		cl.finalOn = true
		cl.final = l.final.ops(cl)
		if !cl.busy {
			l.nextFinal(c, cl, l.final.at)
		}
	}
}

// nextFinal invokes a reader's next final read at at, if it has one.
func (l *loop) nextFinal(c Clients, cl *client, at time.Duration) {
	if len(cl.final) == 0 || cl.busy {
		return
	}
	c.After(at, func() {
		if cl.busy || len(cl.final) == 0 {
			return
		}
		l.invoke(c, cl, cl.final[0])
		cl.inFinal = true
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
	wasFinal := cl.inFinal
	cl.busy, cl.inFinal = false, false
	if cl.finalOn {
		at := done.At
		switch {
		case wasFinal && done.Type == "ok":
			cl.final = cl.final[1:]
		case wasFinal:
			at += FinalRetry
		}
		l.nextFinal(c, cl, at)
		return
	}
	l.pauseThenInvoke(c, cl, done.At)
}
