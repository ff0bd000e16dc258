// Package workloads generates client operations: election triggers, lock
// clients, and Maelstrom's lin-kv and echo clients. A workload is driven
// through the Clients interface, which the real harness and the simulator
// both implement, and is told of each operation's completion. Workloads
// do no I/O and read no clock: time passes through Clients.After, and
// randomness comes from a source seeded by the scenario.
//
// Callbacks into a workload (Start, the functions given to After, and
// Complete) are serialised by the driver.
//
// An operation (Op) says what the request carries and what the history
// records: the invocation's value, and, for an ok answer, a value read
// from the answer's body (Op.Result). A completion carries the answer's
// body, so that a workload can read any field of it.
//
// Every workload runs under both drivers. The lin-kv (KV) and echo
// workloads need nodes that serve them, and no built-in algorithm does:
// in practice they run against foreign nodes (a scenario's command), which
// only the real harness runs, since the simulator runs built-in state
// machines only. Their requests reach a simulated machine all the same
// (nodes.Request.Body) and its answers' fields come back
// (nodes.Env.ReplyWith), so a built-in store would run in the simulator
// unchanged.
package workloads
