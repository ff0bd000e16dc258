// Package lifecycle is what every run of a scenario does, whatever
// carries its messages: written once here, and driven by each driver
// (package harness: node processes on pipes; package sim: state machines on
// a virtual clock; a real-server driver next).
//
// A driver is small (Driver): it starts the nodes, carries every message
// between them (asking the nemesis each one's fate), carries out process
// faults (nemesis.Cluster), lets time pass (Wait) and stops. The lifecycle
// owns the rest: the store folder and its files, the meta event, the
// nemesis's driving loop, the start of the workload, the heal, the
// recovery window, the end event with the driver's counters, the closed
// history, the verdict and the saved folder.
//
// The driving loop (Execute):
//
//	dir := store/<scenario>/<timestamp>/, with history.jsonl and harness.log
//	parts := Assemble(scenario)         // the nemesis's config, the meta, the workload: once, for every driver
//	run := build(files, parts)          // the driver, then parts.New(driver, cfg): the nemesis and the lifecycle
//	run.Finish(ctx):
//	    Start: driver.Start(zero)       // zero records the meta event at the run's zero
//	        on failure: the meta event (if not yet), an unstarted event with why; then Stop
//	    Until(Duration): repeat
//	        observe the events recorded since (Watch): triggers fire
//	        carry out the actions due now, in order (a Hold may keep some back)
//	        once those due at the start are done: driver.Begin()   // the clients
//	        driver.Wait(until the next planned action, the next event, or Duration)
//	    heal: release held actions; end every fault in force
//	    driver.Wait(the heal's end + Recovery)
//	    counts := driver.Stop(); record the end event with counts
//	h := driver.Close()                 // the history, as the checks read it
//	results := verdict.Evaluate(h)      // a run that did not start: only why
//	Save(dir, results, h)               // results.json, report.html, latest
//
// The same steps serve a driver on a real clock and one on a virtual clock
// because time passes only in Wait: the pipe driver sleeps there while its
// goroutines carry messages, the simulator runs its queue of due items up
// to the time asked, in order. Every action is recorded before it is
// applied, a link action under the driver's lock (so that every message
// recorded after its event meets the changed net). A Restart returns once
// the node is up. Nothing the nemesis plans lies at or after the duration:
// past it, what was due is carried out late, then the heal.
//
// One clock: the run's zero is the origin of the history's times, and of
// every time a run shows. The lifecycle's progress lines are stamped on
// it (a nemesis action's with its event's time as recorded, since a
// restart returns later), and the real drivers' harness.log and console
// (Log) stamp their own lines on it too, so a fault the console shows at
// 1.501s is the history's event at 1.501s. Before the zero, while the
// nodes start, there is no such time: those lines say so (start+, or
// "[ start ]"), and the "nodes up" line says how long the start took.
//
// A run interrupted by its context (Ctrl-C) stops where it is, its driver
// stops every node, and its history has no end event: it is judged on its
// prefix, and its outcome is unknown. A run whose nodes did not all start
// (one failed, or coup was interrupted first) is not judged at all: its
// history is the meta event and an unstarted event that says why, so that
// coup check reads it as coup run did.
//
// The store (store.go): each run gets store/<scenario>/<timestamp>/ (a new
// folder, whatever the scenario's name), and store/<scenario>/latest names
// the newest. Assemble (with RunMeta, NemesisConfig and NewWorkload) turns
// a scenario into what the lifecycle and every driver share.
package lifecycle
