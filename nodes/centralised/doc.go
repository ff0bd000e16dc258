// Package centralised is centralised mutual exclusion with a coordinator
// elected by bully, as a pure state machine.
//
// Every node runs bully (nodes/bully, by composition: the node hands
// bully an Env of its own, so that each leader report bully makes is also
// the node's change of coordinator, and hands it the messages and timers
// that are bully's). The coordinator is the node bully elects.
//
// The lock protocol, three messages per entry and exit:
//
//   - A client may talk to any node. When one of its clients waits, the
//     node sends request to the coordinator it trusts (or handles it
//     itself when it is the coordinator). Each acquire is one entry: the
//     node asks again after a release if another of its clients waits.
//   - The coordinator keeps the lock state: the holder and a FIFO queue
//     of requests. It sends grant to the first request when the lock is
//     free; release frees it, and the next request is granted. An entry
//     costs request and grant (one round trip of client delay), an exit
//     costs release, and the synchronisation delay is two messages
//     (release, then grant).
//   - A client that gives up waiting withdraws its acquire (see
//     nodes/mutex); when nobody at the node waits any more the node sends
//     release for its request, which takes it out of the queue.
//
// Requests are numbered per node, so that a grant or release of an
// earlier request (late, or duplicated by the network) is told apart.
//
// A new coordinator starts with an empty lock state. What happens to the
// requests and the hold when the coordinator changes:
//
//   - A node that comes to trust a coordinator other than the one that
//     knows of its request re-sends the request to it, and a node that is
//     inside tells it so (held). So a request in flight to a crashed
//     coordinator, or queued there, is re-sent once bully has elected the
//     next one, and the lock is never granted while a node that trusts
//     the new coordinator is inside. A new coordinator waits collect
//     (default T = 2·Ttrans + Tprocess, bully's own bound on a round
//     trip) before its first grant, for those declarations to arrive.
//   - A coordinator is known by its id alone, as bully knows it. A
//     coordinator that crashed and was replaced under the same id is, to
//     the other nodes, the coordinator they trusted already, even when
//     they lost trust in it for a while and elected it again: they tell
//     it nothing. Its requests are lost (the nodes wait until their
//     clients give up and ask again), and it grants the lock to the next
//     request while a node it does not know of is inside: the lock is
//     granted twice. Bully has no incarnation number that would tell the
//     new process from the old.
//
// A grant from a coordinator the node no longer trusts still lets it in
// when it is for the request that waits; the node then tells the
// coordinator it trusts that it is inside. A grant for anything else is
// given back (release to its sender).
package centralised
