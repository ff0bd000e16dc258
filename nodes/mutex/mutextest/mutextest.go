// Package mutextest drives a random lock workload against a mutual
// exclusion algorithm on an in-memory network (nodes/nodetest) and checks
// what every such algorithm must do without faults: no two nodes inside at
// once, every acquire granted, and each grant a report of entry.
//
// It lives outside _test files so that every mutual-exclusion algorithm's
// tests can use it.
package mutextest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/coupharness/coup/nodes/mutex"
	"github.com/coupharness/coup/nodes/nodetest"
)

// Load is a workload: Clients clients, client ci bound to node
// n((i−1) mod N + 1), each pausing a random time in [0, 2·Think) before
// every acquire and holding the critical section for Hold once granted. No
// acquire starts after Until.
type Load struct {
	Clients int
	Think   time.Duration
	Hold    time.Duration
	Until   time.Duration
	Seed    uint64
}

// Outcome is what a run of a Load showed.
type Outcome struct {
	// Acquires counts the acquires sent, Granted those answered ok, and
	// Entries the cs enter reports.
	Acquires, Granted, Entries int
	// MaxWait is the longest an acquire waited for its answer.
	MaxWait time.Duration
	// Waits are the waits of every granted acquire, in grant order.
	Waits []time.Duration
	// Violations describe every breach of mutual exclusion or of the
	// client protocol, in order.
	Violations []string
}

type client struct {
	name, node string
	state      int // idle, waiting, holding
	at         time.Duration
	req        int
}

const (
	idle = iota
	waiting
	holding
)

// Step is the virtual time between two looks at the clients.
const Step = 100 * time.Microsecond

// Run drives l against net (started already) and then lets every client
// release, within limit of virtual time.
func Run(net *nodetest.Network, l Load, limit time.Duration) Outcome {
	rng := rand.New(rand.NewPCG(l.Seed, 0x6d75))
	pause := func() time.Duration {
		if l.Think <= 0 {
			return 0
		}
		return time.Duration(rng.Int64N(int64(2 * l.Think)))
	}
	ring := net.Nodes()
	var cs []*client
	for i := 0; i < l.Clients; i++ {
		cs = append(cs, &client{name: fmt.Sprintf("c%d", i+1), node: ring[i%len(ring)], at: net.Now() + pause()})
	}
	var out Outcome
	answered := 0
	for net.Now() < limit {
		net.RunFor(Step)
		now := net.Now()
		for ; answered < len(net.Replies); answered++ {
			rep := net.Replies[answered]
			for _, c := range cs {
				if c.state != waiting || rep.Req.ID != c.req {
					continue
				}
				if !rep.OK {
					out.Violations = append(out.Violations, fmt.Sprintf("%s's acquire at %s failed: %s", c.name, c.node, rep.Err.Text))
					c.state, c.at = idle, now+pause()
					continue
				}
				wait := rep.At - c.at
				out.Granted++
				out.Waits = append(out.Waits, wait)
				out.MaxWait = max(out.MaxWait, wait)
				c.state, c.at = holding, rep.At+l.Hold
			}
		}
		busy := false
		for _, c := range cs {
			switch {
			case c.state == holding && now >= c.at:
				net.Do(c.name, c.node, mutex.OpRelease, c.name)
				c.state, c.at = idle, now+pause()
			case c.state == idle && now >= c.at && now < l.Until:
				c.req = net.Do(c.name, c.node, mutex.OpAcquire, c.name)
				out.Acquires++
				c.state, c.at = waiting, now
			}
			busy = busy || c.state != idle
		}
		if !busy && now >= l.Until {
			break
		}
	}
	for _, c := range cs {
		if c.state == waiting {
			out.Violations = append(out.Violations, fmt.Sprintf("%s's acquire at %s, sent at %s, was never granted", c.name, c.node, c.at))
		}
	}
	out.Entries, out.Violations = exclusion(net, out.Violations)
	return out
}

// exclusion scans the cs reports in order: no node may enter while
// another is inside, nor enter twice or leave without entering.
func exclusion(net *nodetest.Network, violations []string) (int, []string) {
	inside := map[string]bool{}
	entries := 0
	for _, r := range net.Reports {
		if r.What != mutex.ReportEnter.What {
			continue
		}
		switch r.Value {
		case mutex.ReportEnter.Value:
			entries++
			for n := range inside {
				violations = append(violations, fmt.Sprintf("%s entered at %s while %s was inside", r.Node, r.At, n))
			}
			if inside[r.Node] {
				violations = append(violations, fmt.Sprintf("%s entered twice at %s", r.Node, r.At))
			}
			inside[r.Node] = true
		case mutex.ReportExit.Value:
			if !inside[r.Node] {
				violations = append(violations, fmt.Sprintf("%s left at %s without being inside", r.Node, r.At))
			}
			delete(inside, r.Node)
		}
	}
	return entries, violations
}

// Inside returns the nodes whose last cs report is an entry.
func Inside(net *nodetest.Network) []string {
	last := map[string]string{}
	for _, r := range net.Reports {
		if r.What == mutex.ReportEnter.What {
			last[r.Node] = r.Value
		}
	}
	var out []string
	for _, n := range net.Nodes() {
		if last[n] == mutex.ReportEnter.Value {
			out = append(out, n)
		}
	}
	return out
}
