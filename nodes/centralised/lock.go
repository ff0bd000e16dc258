package centralised

import "slices"

// claim is a node's request for the lock, or its hold of it: the node and
// the number of its request.
type claim struct {
	node string
	seq  int
}

// lock is the coordinator's lock state: who holds the lock and the FIFO
// queue of the requests that wait for it. It is a value with no I/O: the
// machine asks it what to grant.
type lock struct {
	holder *claim
	queue  []claim
	// latest is the highest request number seen from each node: a request
	// or a hold with a smaller one is stale (a duplicate, or overtaken by
	// a newer one on a link that reorders) and is ignored.
	latest map[string]int
}

// stale reports whether c is older than what the lock has seen from its
// node, and records it as the latest otherwise.
func (l *lock) stale(c claim) bool {
	if l.latest == nil {
		l.latest = map[string]int{}
	}
	if c.seq < l.latest[c.node] {
		return true
	}
	l.latest[c.node] = c.seq
	return false
}

// request queues c. A node asks again only once it has left the critical
// section or given up waiting, so a newer request supersedes the node's
// older one, waiting or held. A duplicate of a queued or held request
// changes nothing.
func (l *lock) request(c claim) {
	if l.stale(c) || l.holds(c) || slices.Contains(l.queue, c) {
		return
	}
	if l.holder != nil && l.holder.node == c.node {
		l.holder = nil // its release was lost
	}
	l.queue = slices.DeleteFunc(l.queue, func(q claim) bool { return q.node == c.node })
	l.queue = append(l.queue, c)
}

// held records that c's node is inside by c's grant, as it declares to a
// new coordinator. It returns the other holder when the lock already had
// one: two nodes are inside at once, and the coordinator can only tell.
func (l *lock) held(c claim) (other string) {
	if l.stale(c) {
		return ""
	}
	l.queue = slices.DeleteFunc(l.queue, func(q claim) bool { return q.node == c.node })
	if l.holder != nil && l.holder.node != c.node {
		return l.holder.node
	}
	l.holder = &c
	return ""
}

// release ends c: the hold, when c holds the lock, or the waiting
// request, when c waits (its client gave up). Anything else is stale.
func (l *lock) release(c claim) {
	if l.holds(c) {
		l.holder = nil
		return
	}
	l.queue = slices.DeleteFunc(l.queue, func(q claim) bool { return q == c })
}

// next grants the lock to the first request in the queue when the lock is
// free, and returns it.
func (l *lock) next() (claim, bool) {
	if l.holder != nil || len(l.queue) == 0 {
		return claim{}, false
	}
	c := l.queue[0]
	l.queue = l.queue[1:]
	l.holder = &c
	return c, true
}

func (l *lock) holds(c claim) bool { return l.holder != nil && *l.holder == c }
