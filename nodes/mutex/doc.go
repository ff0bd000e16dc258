// Package mutex is what coup's mutual-exclusion algorithms share: the
// client side of a node. A Front keeps the node's queue of acquire
// requests, reports entering and leaving the critical section, and answers
// the clients, so that an algorithm only decides when its node may enter
// and what it sends when the node leaves.
//
// The client protocol, the same for every algorithm:
//
//   - acquire asks for the critical section on behalf of an owner: the
//     request's value, or the client's id when the value is empty. The
//     node answers acquire_ok once the owner is inside, right after
//     reporting {"what": "cs", "value": "enter"}. A node queues the acquires
//     it receives, from any number of clients, in arrival order; each
//     acquire gets its own entry into the critical section, and the node
//     leaves the critical section between two entries (so another node may
//     go first).
//   - release leaves the critical section: when the owner is inside, the
//     node reports {"what": "cs", "value": "exit"}, answers release_ok and
//     the algorithm passes the critical section on. When the owner is not
//     inside but has an acquire waiting, the release withdraws the oldest
//     such acquire: both are answered with a definite error (the lock did
//     not change hands). Otherwise the release is a definite error.
//   - any other operation is a definite error (not supported).
//
// The owner travels in the value so that a client that gave up waiting and
// went on under a new process id, as Jepsen's clients do, can still release
// whatever its timed-out acquire may have been granted.
//
// An algorithm drives its Front like this:
//
//	func (m *Machine) Request(r nodes.Request) {
//		switch m.front.Handle(r) {
//		case mutex.Want:
//			// a client waits and none did: ask for the critical section
//			// (unless the algorithm is already asking)
//		case mutex.Leave:
//			// the owner left: pass the critical section on, then ask
//			// again if m.front.Waiting()
//		}
//	}
//
// and, when the algorithm has obtained the critical section, calls
// m.front.Enter(); false means every waiting acquire was withdrawn
// meanwhile, and the node should leave at once.
package mutex
