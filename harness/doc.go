// Package harness is coup's controller: it runs a scenario against real
// node processes and judges the history.
//
// A run, in order:
//
//  1. create store/<scenario>/<timestamp>/ and start history.jsonl;
//  2. start every node process and do the init handshake;
//  3. the moment all nodes are up is the run's zero: the time origin of
//     the history (its meta event is recorded then, before any node's
//     start), of the scenario's "at" fields and of the nemesis;
//  4. start the workload and the nemesis (faults.go): planned faults at
//     their times, triggered ones when the history records what they wait
//     for;
//  5. at the scenario's duration, heal every fault in force (recording
//     each end), then wait out the recovery window;
//  6. stop every process, close the history, run the checks, write
//     results.json and point store/<scenario>/latest at the folder.
//
// A run whose nodes do not all answer init (start.go) stops after step 3:
// no check judges it, and its results carry one error that names the first
// node to fail in ring order, the cause (how it exited and the end of its
// log; or, for a node silent past the limit, that its output may be
// buffered) and the log's path.
//
// Every line a node writes is read by one goroutine per process, in order,
// and recorded before it is acted on. Messages between nodes go through the
// router (router.go): the nemesis decides each one's fate (dropped, or one
// or more copies, each with its delay and perhaps an altered body); a copy
// due at once goes straight into the receiver's outbox (outbox.go), a
// delayed one waits in the delay queue (delay.go), which sleeps its short
// waits on a thread of its own, since a Go timer fires up to a millisecond
// late. The node's writer takes its whole outbox and writes it in one
// write. Outbox and delay queue are bounded per node: what finds them full
// is dropped as an overflow, recorded; nothing on the router's path blocks
// on a node, so a slow or stopped node never stalls the others. The writer
// of a paused node holds its deliveries until it is resumed; a pause is
// recorded only once all the node wrote before it stopped has been read, so
// nothing a paused node does is recorded while it is paused.
//
// What no node may do (answer for another, write lines without end, grow
// the history without bound) is refused (refuse.go): logged, counted and
// recorded; docs/threat-model.md says what a node can and cannot do. The
// recorder keeps no event in memory: the history is written as the run
// goes and read back for the checks, and past history.max_messages
// messages are counted, not recorded.
//
// Results.Summary is what the console shows of a verdict; every string in
// it that came from the history, and so perhaps from a node, goes through
// Printable first, so that no node can move the cursor or forge a line. An
// interrupted run (a history with no end event) is never unexpected: its
// outcome is unknown, whatever its prefix shows.
//
// The report (report*.go) is drawn from the history and the results
// alone, so `coup check --report` makes the same page from a stored
// history: one self-contained HTML page, inline SVG, readable without its
// one small script. Every time it draws is saturated to the run's window
// and every list it draws is bounded, so a crafted or damaged history
// cannot make it loop or grow (docs/results.md lists the limits).
//
// The simulator (harness/sim) runs the same scenarios on a virtual clock,
// with no process; it shares RunMeta, NewWorkload, Evaluate and Save with
// Run, so that a simulated run's history, verdict and store folder are a
// real run's.
package harness
