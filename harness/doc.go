// Package harness is coup's pipe driver: it runs a scenario against real
// node processes, each speaking coup's line protocol on its stdin and
// stdout, and carries every message between them. The run's lifecycle
// (store, meta event, workload, nemesis, heal, recovery, end, verdict,
// save) is package lifecycle's; this package is the Driver under it.
//
// What it does for the lifecycle:
//
//   - Start (cluster.go, start.go): start every node process in its own
//     process group (internal/proc) and do the init handshake; the moment
//     all have answered (or one has failed) is the run's zero. A node that
//     does not answer names the cause: how it exited and the end of its log,
//     or, for one silent past the limit, that its output may be buffered.
//   - Messages (router.go, deliver.go, outbox.go, delay.go): every line a
//     node writes is read by one goroutine per process, in order, and
//     recorded before it is acted on. A message between nodes goes through
//     the router: the nemesis decides its fate (dropped, or one or more
//     copies, each with its delay and perhaps an altered body), under the
//     router's lock, which is the Driver's Lock. A copy due at once goes
//     straight into the receiver's outbox, a delayed one waits in the delay
//     queue, which sleeps its short waits on a thread of its own, since a
//     Go timer fires up to a millisecond late. The node's writer takes its
//     whole outbox and writes it in one write. Outbox and delay queue are
//     bounded per node: what finds them full is dropped as an overflow,
//     recorded; nothing on the router's path blocks on a node, so a slow
//     or stopped node never stalls the others.
//   - Process faults (cluster.go): crash is SIGKILL to the group; restart
//     starts a fresh process under the same id and returns once it has
//     answered init; pause is SIGSTOP, recorded only once all the node
//     wrote before it stopped has been read, and its writer holds its
//     deliveries until SIGCONT; the clock rate is a control line to a
//     built-in node.
//   - Clients (clients.go): the workload's requests as messages from a
//     client, their answers recorded as the history's operations.
//   - Wait sleeps on the real clock until the time asked or until the
//     recorder has queued an event for the nemesis; Stop kills every
//     process and counts what was still in flight.
//
// What no node may do (answer for another, write lines without end, grow
// the history without bound) is refused (refuse.go): logged, counted and
// recorded; docs/threat-model.md says what a node can and cannot do. The
// recorder keeps no event in memory: the history is written as the run
// goes and read back for the checks, and past history.max_messages
// messages are counted, not recorded.
package harness
