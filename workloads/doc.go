// Package workloads generates client operations: election triggers, lock
// clients, Maelstrom's lin-kv and echo clients, and Jepsen's set clients
// (Maelstrom's g-set bodies). A workload is driven
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
// The lin-kv and set workloads end with final reads (Final): after the
// heal, each reader reads what the clients wrote (every key written, the
// whole set), again after a failure, until it returns ok, so that the
// lost-writes check can tell which acknowledged writes the store kept.
// A final read of a key records error 20 as a read of no value
// (Op.Absent); a read of a set may be long (Op.Long).
//
// Every workload runs under every driver. The lin-kv (KV), set and echo
// workloads need nodes that serve them, and no built-in algorithm does:
// they run against foreign nodes (a scenario's command, under the pipe
// driver), real servers (through their clients) and a Go machine of the
// user's own (package coup, in the simulator). Their requests reach a
// simulated machine as they reach a process (nodes.Request.Body) and its
// answers' fields come back (nodes.Env.ReplyWith), so a built-in store
// would run in the simulator unchanged.
package workloads
