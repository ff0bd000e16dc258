// Package hostnet is coup's network between the hosts of a run of real
// servers: coup is the network, as the harness's router is for the
// messages of protocol nodes. Each host is a network namespace of its own
// (named coup-PID-TAG-HOST under /run/netns) whose one interface, coup0,
// is a TUN device with the host's address (10.77.0.i/24, i the host's
// place from 1); coup holds the other end of every TUN device, reads each
// IPv4 packet a host sends and writes it to the host it is for, after
// asking the policy what becomes of it on its directed link. Every
// protocol crosses it the same way, TCP, UDP, ICMP and any other IP
// protocol (VRRP's 112): a packet to a multicast or broadcast address is
// copied to every other host, each copy on its own link's fate.
//
// Nothing is routed beyond the network: each namespace has a route to
// the subnet and to multicast, through coup0, and no other; the
// addresses exist only inside the run's namespaces, and nothing listens
// in the machine's own namespace. A host's traffic to itself stays in
// its namespace (its loopback), as on a machine.
//
// What each fate (the nemesis's own nemesis.Fate) does to a packet:
//
//   - a Stall cut drops it, a SYN as any other packet: a connect gets no
//     answer until the heal, and TCP retransmits what was sent until then.
//   - a Refuse cut drops it and answers the sender as the refusing host: a
//     TCP segment with a reset (a connect is refused, a connection reset),
//     a UDP datagram with ICMP port unreachable (a connected socket reads
//     ECONNREFUSED), any other protocol with ICMP administratively
//     prohibited. Multicast is never answered.
//   - any other drop is a loss (TCP retransmits, a datagram is gone), or a
//     bandwidth fault's full queue (Overflow, MaxBacklog).
//   - Each Copy is a delivery after its delay; copies due at one moment
//     on a link keep their order, and copies with other delays are
//     delivered in the order of their times (a delay with jitter
//     reorders; a bandwidth fault's wait is part of the delay, and keeps
//     the order). A copy beyond the first is a duplicate.
//   - A copy's Body replaces the transport payload (a corruption of the
//     same length), and the TCP or UDP checksum is recomputed, so that the
//     altered bytes reach the application, as the corruption a network's
//     checks miss does.
//
// Every packet is counted on its link (Counts): delivered packets and
// bytes, and those cut, refused, lost, overflowed, delayed, duplicated,
// corrupted.
// Refusals and corruptions are also Events, for the history.
//
// The driving contract:
//
//	n, err := hostnet.New(hostnet.Config{Hosts: ids, Policy: view, Events: record})
//	h := n.Host("n1")
//	h.Do(func() error { start the host's processes })   // they run in n1's namespace
//	c, err := h.DialContext(ctx, "tcp", "10.77.0.2:2379") // a client living on n1
//	...                                                  // the policy answers from the nemesis's state
//	stop the hosts' processes
//	n.Close()   // forwarding stopped, every TUN device closed, every namespace removed
//
// A process started inside Host.Do (on the thread that entered the
// namespace) is in the namespace, and everything it forks after; a
// socket opened inside it stays there for its life. Host.Path is the
// namespace's file, for a launcher that enters it itself (nsenter
// --net=PATH, or setns(2) before exec).
//
// It needs root (namespaces, TUN devices; Available says why not). A run
// of coup killed before its Close leaves its namespaces named by its pid:
// New removes those of every coup that is no longer alive (Leftovers).
package hostnet
