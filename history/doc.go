// Package history defines the one ordered log that a coup run records, and
// reads and writes it as JSON lines.
//
// A history is a sequence of events. Every event has an index (its position,
// from 0) and a time (nanoseconds since the run began, the moment every node
// was up; virtual time in the simulator). The first event of a history is always a meta event that says
// what ran: the scenario, the algorithm, the nodes and their election ids, the
// seed and the bounds the checks use. With the meta event a history is
// self-contained: `coup check` needs nothing else.
//
// The recorder assigns index and time under one lock, so index order and time
// order agree. Together with the harness reading each node's output in order
// and forwarding a message only after recording it, this makes the history
// causal: if one event happened before another, its index is smaller.
//
// Event kinds and the fields each uses:
//
//	meta     meta
//	process  node, what (start|crash|exit|pause|resume|stop), incarnation, detail
//	report   node, what (leader|participant|cs|rejected|metric|...), value, name, msg, term
//	op       process, type (invoke|ok|fail|info), f, node, value
//	nemesis  what (the fault), phase (start|end), nodes, name (which fault and occurrence: "faults[2]#1"), detail
//	msg      what (send|deliver|drop|duplicate|corrupt), msg, src, dest, mtype, reason, body
//	refused  node, what (output|line|report|reply|dest|…), detail
//	limit    what (messages), node (whose message crossed it), value (the bound), detail
//	ready    value (the leader), term, detail (what each node believed then)
//	clock    node, what (seen|unseen), name (the clock fault's occurrence), value (the skew seen), detail
//	unstarted what (failed|interrupted), detail (why)
//	link     src, dest, counts (span_ns, bytes, chunks|packets, dropped_bytes, dropped_packets)
//	end      (the run finished normally; absent when it was killed)
//
// A client operation is an invoke event and, later, one completion (ok,
// fail or info) of the same process and f; a process has at most one
// operation open. The value is the workload's:
//
//	election  elect: none; ok: the answer's value, if any
//	mutex     acquire, release: the owner; ok: none
//	lin-kv    JSON text in Jepsen's form: read [k,null], ok [k,v] (the
//	          value read, null for none, a JSON string holding the text of
//	          a value that is not an integer); write [k,v], ok the same;
//	          cas [k,[from,to]], ok the same
//	echo      echo: the payload sent; ok: the echo the node sent back (a
//	          string as it is, any other JSON value as its text)
//	set       add: the element, an integer; ok the same. read: none; ok
//	          the elements read, a JSON array (integers in increasing
//	          order, anything else as JSON strings of its text)
//
// A fail or info completion's value says why: the error's text (or
// "error N" without one), "timed out", "run ended". The meta event's
// workload names the workload.
//
// A corrupt event precedes the delivery of a copy whose body the nemesis
// altered; its reason says how ("bitflip", "mutate": only a checksum can
// tell; "joker": the sender's payload was altered and its sum recomputed,
// so only an end-to-end check can tell), and body holds the altered body
// when messages are recorded. Corrupt events are recorded whether or not
// the other message events are.
//
// A refused event says that the harness refused something a node wrote: a
// line that is not a message, a line too long to read, a report that is not
// one, an answer to a client that the client's request did not go to, or a
// message to nobody. The first few of each class from each node are
// recorded; all are counted on the end event.
//
// A limit event says that the run stopped recording messages one by one
// at its bound (history.max_messages), which bounds the history whatever
// the nodes send; from then on messages are counted on the end event only,
// and the checks that need every message say they cannot judge.
//
// A ready event says that the cluster was first seen ready: a node leading
// and every other node following it. A run of real servers records it
// once, when it happens, and its meta event says what the run waited for
// before its faults began (ready).
//
// A clock event says what coup read back of a node's clocks under a clock
// fault on real processes: seen, a process's own reads through the hook
// coup put in (value: the skew its last read saw, as a Go duration, of
// the wall clock when the fault skews it, else of the monotonic clock;
// detail: the process, both clocks' skews, how many reads and, at the
// fault's end, the rate measured between its first and last reading);
// unseen, a process that read no clock through its vDSO, or could not be
// read (detail: why). They follow the fault's nemesis start and come
// before its end.
//
// An unstarted event says that the run's nodes did not all start, so that
// nothing ran: a node or coup failed to start it (failed), or coup was
// interrupted first (interrupted); detail says why, in coup's or the
// node's own words. It comes right after the meta event, or after the
// process events of the nodes that did start; such a history has no end
// event, and is not judged.
//
// A link event says what the network between real servers carried on one
// directed link (src → dest, nodes of the run; the server driver names a
// client's link by its host) during the span_ns nanoseconds before its
// time: bytes passed on, and the chunks (a stream proxy's) or packets (a
// packet network's) that carried them, and what a fault dropped. A
// network records one per link and period (a second) in which the link
// carried or dropped anything, and the rest of a period as the run
// stops; a link and period with nothing has none. The report draws them
// as the links view; no check reads them.
//
// Readers must tolerate kinds and fields they do not know.
package history
