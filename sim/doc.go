// Package sim is coup's deterministic simulator, the driver of the run
// lifecycle (package lifecycle) that runs a scenario's built-in algorithm
// in one process, every node's state machine on one virtual clock: the
// same lifecycle as a real run, so the same history format, checks,
// verdict and store folder.
//
// What it simulates, and how:
//
//   - Nodes: each node is a nodes.Machine built by the algorithm's Spec,
//     driven as nodes/process drives it in a real process: Start, then one
//     input at a time (Receive, Timeout, Request). Timers run on the
//     virtual clock, scaled by the node's clock rate. A panic in a machine
//     ends its incarnation as a real process's exit would.
//   - Messages travel as Go values: nothing is encoded unless the nemesis
//     may alter the message (a corruption or a joker covers its link), in
//     which case the receiver gets what a real node would: the line is
//     parsed, the sum checked when checksums are on, the body decoded, and
//     what fails is rejected and reported with the message id.
//   - Faults: the same nemesis as real runs (package nemesis) decides every
//     message's fate and every process fault, on the same schedule for the
//     same seed. Crash and pause are immediate; a paused node receives
//     nothing and its timers do not fire until it resumes, when the timers
//     that expired fire and what arrived meanwhile is delivered, in order. A
//     restart takes a seeded time drawn from Config.Restart, as a real
//     process takes to start, during which messages to the node are dropped
//     as to a node that is down, and Restart runs the rest of the cluster
//     until the node is up, as a real driver waits in Restart for init.
//   - Clients: the scenario's workload through workloads.Clients, with
//     requests handed to the node at once and answers recorded at once.
//   - Time: every happening is an item in one queue ordered by virtual time,
//     ties broken by the order the items were queued; the nemesis's due
//     actions go before items of the same time. Nothing reads the real
//     clock.
//   - Randomness: every choice comes from sources seeded by the seed: the
//     nemesis's streams (the net's fates and each fault's schedule and
//     targets), each node's Env.Rand (seeded as a real node's), the
//     workload's, and the restart times. Maps are never iterated where the
//     order could show.
//
// So a seed gives one history, always: Hash covers every field of every
// event, and Twice checks it. Seeds sweeps many seeds in parallel; each
// Sim is independent.
//
// A Strategy decides how a seed explores what the scenario leaves open:
// Random (uniform choices, the histories seeds always gave), PCT (node
// priorities place each delivery at the earliest or the latest time the
// network allows and order simultaneous items, with change points), Bias
// (scheduled faults held until a node's belief changes), or a Portfolio
// of the three by seed. The same seed and strategy give the same history.
//
// Around the runs, the search room (package explore) names how a run
// failed (Signature), how findable a failure is, and splits and merges
// sweeps; Runner is the simulator as it sees it, an exact one. Shrink
// searches for a smaller scenario with the same signature: explore.Shrink
// with that Runner (delta debugging over faults, nodes and durations,
// each candidate simulated at a seed, within a budget). Sweep is coup
// sim --seeds around Seeds (the progress, the tally, the findability of
// each failure, the results file), ShrinkSeed coup sim --shrink around
// Shrink.
//
// Nodes run a built-in algorithm, or a machine the caller hands it
// (Options.Spec: package coup, the library, runs a Go machine of the
// user's own this way, with a scenario read by scenario.LoadMachine).
//
// What a real run refuses from hostile nodes (docs/threat-model.md) has no
// counterpart here: the simulator runs machines in its own process, which
// trusts them as it trusts itself, so there is no foreign output to
// refuse, and it records
// every message (history.max_messages bounds real runs only); a sweep's
// memory is bounded by its run's length instead.
//
// Algorithm tests may use a Sim as their network (New, RunUntil, Leaders,
// Crash, Pause, ...): the same fault model as scenarios, with no process.
//
// The driving loop is the lifecycle's (lifecycle.Run); the simulator is
// its Driver (driver.go). Time passes only in Wait, which runs the queue's
// earliest items up to the time the lifecycle asks for, and returns early
// when an item recorded something the nemesis must observe:
//
//	Start: the meta event; start every node in ring order
//	Until(Duration): repeat
//	    the nemesis observes what was recorded and carries out what is due
//	    (its actions go before items of the same time; the workload starts
//	    once those due at 0 are done); Wait: run items until its next action
//	Finish: the nemesis's last pass at Duration; the heal; Wait out the
//	    recovery window; Stop: StopTime later, stop every node; the end event
package sim
