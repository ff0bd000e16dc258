// Package harness is coup's controller: it runs a scenario against real
// node processes and judges the history.
//
// A run, in order:
//
//  1. create store/<scenario>/<timestamp>/ and start history.jsonl;
//  2. start every node process and do the init handshake;
//  3. from the moment all nodes are up (the run's time zero for the
//     scenario's "at" fields), start the workload and the nemesis's plan;
//  4. after the scenario's duration, heal every fault, then wait out the
//     recovery window;
//  5. stop every process, close the history, run the checks, write
//     results.json and point store/<scenario>/latest at the folder.
//
// Every line a node writes is read by one goroutine per process, in order,
// and recorded before it is acted on. Messages between nodes go through the
// router: the nemesis decides each one's fate, a delay queue holds it until
// it is due, and a bounded per-node queue hands it to the node's writer. A
// full queue drops the message (recorded as an overflow); nothing on the
// router's path blocks on a node, so a slow or stopped node never stalls the
// others.
package harness
