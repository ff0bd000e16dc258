// Package checks judges a coup history: each check is a pure function from a
// history to a Result with a verdict (true, false or unknown), a sentence a
// person can act on, and the evidence (the nodes, the interval, the smallest
// set of events that shows the verdict).
//
// The contract:
//
//   - A check reads only its argument. It does no I/O, reads no clock,
//     starts no goroutine and never changes the history. The same history
//     always gives the same result.
//   - Events are read in index order and their times must not decrease; a
//     history whose time runs backwards is judged unknown, not guessed at,
//     and so is one that has leader reports but no process start event
//     (without starts no node is known to be live).
//   - Unparsable lines (History.Bad) are skipped: every check still runs on
//     the rest, and its explanation and figures say how many lines it lost.
//   - False and unknown results always carry an explanation. Unknown means
//     the history cannot decide (it is too short, or inconsistent); it is not
//     an error. Errors are for the caller's mistakes only, such as an unknown
//     check name.
//   - Results compose as in Jepsen: false beats unknown beats true.
//
// The model of a node the election checks share (see live.go): a node is
// live from its process start until its crash, exit or stop; a paused node is
// live and keeps its belief. A node's belief is its last leader report since
// it started; it believes nothing before its first report and nothing once it
// is no longer live. A node restarted under the same id starts with no belief.
// Reports from a node that is not live are ignored.
//
// The checks, by name (docs/checks.md says more, for users):
//
//   - two-leaders: at no instant do two live nodes each believe they are the
//     leader. A claim lasts from the node's report naming itself until its
//     next report naming another, or until it stops being live, or until
//     the end of the history. Claims that touch do not overlap. One pass
//     over the history. When the claims carry terms, the explanation and
//     evidence name the term each claim was in at the overlap's start.
//   - one-leader-per-term: no two distinct nodes ever claim leadership in
//     the same term, over the whole history, whether or not the first
//     claimant is still live. A claim in a term is a live node's leader
//     report naming itself with that term; the same node claiming its term
//     again (after stepping down, or restarted under the same id) is one
//     claimant. Claims without a term are counted, not judged; unknown when
//     no leader report from a live node carries a term.
//   - stale-leader: for every term claim (see termClaimsOf), its stale-leader
//     window: how long it stood while another live node claimed a higher
//     term. The longest window is reported with its evidence; false only
//     when Meta.StaleLeader is set and a window exceeds it; unknown without
//     terms. One sweep over the claims' ends.
//   - agreement: at the end of the run, the live nodes that believe in a
//     leader all believe in the same one.
//   - validity: at the end of the run, every leader a live node believes in
//     is live and, when Meta.Elects is "max" ("min"), has the highest
//     (smallest) election id among the live nodes.
//   - termination: every node live at the deadline believes in some leader
//     then. The deadline is Meta.Termination (one second if zero) after the
//     latest of the first event, the last nemesis event and the last "elect"
//     invocation; a history that ends before it is judged unknown.
//   - eventual-leadership (Ω): every correct node (live and not paused at
//     the end of the run) trusts the same correct node from some time on,
//     and that time is within Meta.Stabilisation of GST (or of the first
//     event); without a stabilisation bound, by the termination deadline.
//     A run that ends before the deadline is unknown.
//   - complexity: no election costs more messages than Meta.MessageBound.
//     Elections are found from their triggers to the moment the live nodes
//     agree on a live leader with nothing in flight (see electionsOf).
//   - integrity: every delivery of a message the nemesis corrupted was
//     rejected by its receiver, or the message was never delivered.
//
// The end of the run is the first stop event (the harness's shutdown), or
// the last event of a killed history; see finalWorld.
//
// The mutual-exclusion checks (MutexDefaults) read the clients' acquire and
// release operations and the nodes' cs reports. An operation acts for an
// owner, its invocation's value (or its process when the value is empty),
// so that a client that went on under a new process after a timeout can
// release what its old process was granted.
//
//   - mutex-linearizable (EM1): the operations are linearizable against a
//     lock (acquire succeeds only when it is free, release only by its
//     holder), checked by porcupine. Failed operations did not happen and
//     are left out. An operation that timed out (info), or that the history
//     ended before it returned, may or may not have taken effect, at any
//     time after its invocation: the model is nondeterministic. Timed-out
//     operations that could not change the verdict are left out (see
//     relevant in mutexlin.go), because each one left open doubles the
//     search. A violation names the operation no order fits and comes with
//     porcupine's visualisation as a File, annotated (mutexviz.go) with
//     each client's holds, the times two clients held the lock at once,
//     the nodes' stays inside and the nemesis's events. Porcupine runs on its own
//     goroutines, with a time budget (LinearizabilityBudget); past it the
//     verdict is unknown.
//   - mutex-cs (EM1): at no instant are two live nodes in the critical
//     section by their own reports. A stay lasts from an enter report to
//     the node's exit report, or until the node stops being live; a paused
//     node stays inside.
//   - mutex-progress (EM2): every acquire invoked after the last nemesis
//     event at a node that was live and not paused is granted (ok) within
//     Meta.Progress (one second if zero), when the history goes on that
//     long after it (until the first stop event); unknown when no acquire
//     can be judged.
//   - mutex-fairness (EM3): among the granted acquires, how many pairs were
//     granted in the opposite order to their requests, out of the pairs
//     that waited together. A figure: true, or unknown without grants.
//   - mutex-measures: the course material's measures (messages per entry,
//     client delay, synchronisation delay), as figures. Always true.
//
// The key-value check (KVDefaults) reads the lin-kv workload's read,
// write and cas operations, whose values are Jepsen's [k,v] and
// [k,[from,to]] (see package history):
//
//   - kv-linearizable: the operations are linearizable against a
//     key-value store, checked by porcupine key by key (the model's
//     Partition), each key a register that starts with no value. Failed
//     operations did not happen and are left out, and so are reads that
//     timed out (they change nothing and returned nothing). A write or cas
//     that timed out, or that the history ended before it returned, may or
//     may not have taken effect, at any time after its invocation: its
//     return is the end of the history, and the model applies it when it
//     can, since one that did not take effect is, to every operation that
//     returned, one that took effect after them all (see kvStep). Those
//     whose effect no returned operation could see are left out (see
//     kvRelevant). A violation names the first key no order fits and the
//     operation on it that cannot come next, with porcupine's page as a
//     File (KVVisualisationFile), annotated with the nodes' leadership
//     claims and terms and the nemesis's events.
//
// The lost-writes check (SetDefaults) reads Jepsen's set workload (adds
// of unique elements, values their elements; reads of the whole set, ok
// values JSON arrays) or, in a history with no add, the lin-kv workload
// as kv-linearizable does:
//
//   - lost-writes: every acknowledged write that the final reads could
//     see is there. The final reads are the ok reads invoked after the
//     last nemesis event (the heal) and after the last write's
//     invocation. An acknowledged (ok) write is judged by the final reads
//     (of its key) invoked after it was acknowledged: present when each
//     has it, lost when none has it, divergent when some have it and
//     some do not, unjudged when there are none. A lin-kv write whose
//     value the final reads do not have is overwritten, not lost, when
//     another write or cas of its key may have come after it (one not
//     acknowledged that did not fail, or an acknowledged one that
//     returned after it was invoked). A write not acknowledged (info,
//     fail, or open) is recovered when a final read has it and no
//     acknowledged write wrote the same, absent otherwise; a value a
//     final read has that no write wrote is unexpected. False when a
//     write is lost or a value unexpected; unknown without final reads,
//     without an acknowledged write, or when every acknowledged write is
//     unjudged. The figures count every fate, name the first
//     MaxLostNamed lost writes to be acknowledged, and group them all
//     into the windows in which they were acknowledged (LostWindowGap
//     apart at most), each with the nodes that acknowledged them and the
//     faults in force. A write's node is the member that served it when
//     its completion names one (Event.Served), else the one it went to.
//     One pass over the writes, each judged by binary search among the
//     final reads of its value.
//
// The echo check (EchoDefaults):
//
//   - echo: every echo that returned ok came back with its payload: the ok
//     completion's value equals the invocation's. Unknown when none
//     returned ok.
//
// Agreement and validity judge a killed history (no end event) at its last
// event, and say so. Figures whose value is a time carry the unit in their
// name ("deadline_ns").
//
// For reports, by the same models: BuildTimeline gives what each node
// believed over the history, BuildFlights every copy of a message from its
// send to its delivery or drop (corrupted copies matched with their
// rejections), and BuildLockLanes what each lock client did (request, hold,
// release) and when two held the lock at once.
//
// Callers run checks by name:
//
//	results, valid, err := checks.Run(h, checks.ElectionDefaults)
//
// or iterate All and call each Check's Run.
package checks
