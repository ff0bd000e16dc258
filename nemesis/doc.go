// Package nemesis is coup's fault model: what each fault does to a process
// or a link, when it happens, and whom it hits.
//
// It is pure: no clock, no goroutine, no I/O. The driver (the real harness,
// or the simulator) passes the time in, counted from the run's zero (the
// moment every node is up, which is also the history's time origin), and
// carries out what the nemesis decides. Every random choice comes from
// seeded streams: one per fault for its schedule and its targets, one for
// the net's fates. The same seed and the same inputs give the same
// schedule and the same fates. (A driver may place each copy's jitter
// itself, within [0, Jitter), through Config.Spread: the simulator's
// search strategies do.)
//
// The driving loop:
//
//	n := nemesis.New(cfg)                        // plans every timed occurrence
//	loop until cfg.Duration:
//	    for each recorded history event e (nemesis.Relevant ones suffice):
//	        actions += n.Observe(e)              // triggers fire here
//	    actions += n.Due(now)                    // planned starts and ends
//	    for each action a (a.Skip == "" only):
//	        record a.Event(); n.Apply(a, cluster)
//	    sleep until n.Next() or the next event
//	once more with now = cfg.Duration (what was due is done, late)
//	for each a in n.Heal(now): record a.Event(); n.Apply(a, cluster)
//
//	and, for every message sent between nodes, at any time:
//	    fate := n.Decide(msg, now)               // drop, or deliver copies
//
// Process faults (crash, restart, replace, pause, resume, clock) act through
// the Cluster interface that each driver implements. Link faults
// (partition, loss, delay, duplicate, corrupt), the joker and timely links
// change the Net, which Decide consults. Apply of a process action only
// calls the Cluster, so a driver with concurrent senders may run it outside
// the lock that serialises Decide; everything else must be serialised.
//
// The nemesis keeps a view of the cluster from the events it observes and
// the process actions it issues: which nodes are live, paused or down, and
// who the current leader is (the live node that most recently reported
// itself leader). Targets are resolved against it when a fault begins.
package nemesis
