// Package nodes is the contract between coup's election and mutual-exclusion
// algorithms and whatever drives them.
//
// An algorithm is a deterministic state machine (Machine). It is started once,
// then reacts to one input at a time: a message from a peer (Receive), a
// timer it set (Timeout), or a client request (Request). It acts only
// through its Env: it sends messages, sets and cancels timers, reports its
// beliefs and answers requests. It never reads a clock, never starts a
// goroutine, never uses a global random source and never does I/O.
//
// Two drivers run the same machines:
//
//   - nodes/runtime runs one machine as a real node process: messages are
//     JSON lines on stdin and stdout, timers use the real clock.
//   - the simulator (package sim) runs every node of a scenario in one
//     process on a virtual clock.
//
// The driving loop, for both, is:
//
//	m, err := spec.New(params)      // validate parameters, build the machine
//	m.Start(env)                    // once, after the init handshake
//	for each input, one at a time:
//	    m.Receive(from, msg) | m.Timeout(name) | m.Request(req)
//
// Env calls made while handling one input take effect in the order they are
// made. In particular a node reports a new belief before it sends a message
// that depends on it (the causality rule of the history).
//
// Messages are values. A machine must not change a message after sending it
// or after receiving it: the simulator may deliver one value twice.
package nodes
