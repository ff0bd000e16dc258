package history

import "time"

// Kind is the kind of a history event.
type Kind string

// The event kinds. See the package documentation for the fields each uses.
const (
	KindMeta    Kind = "meta"
	KindProcess Kind = "process"
	KindReport  Kind = "report"
	KindOp      Kind = "op"
	KindNemesis Kind = "nemesis"
	KindMsg     Kind = "msg"
	KindEnd     Kind = "end"
	// KindRefused: the harness refused something a node wrote (a forged
	// or stray client answer, an unparsable or over-long line, a bad
	// report); what is the class, detail says what and why.
	KindRefused Kind = "refused"
	// KindLimit: the harness stopped recording something past a bound
	// (what "messages": history.max_messages); it goes on counting it.
	KindLimit Kind = "limit"
	// KindReady: the cluster was first seen ready: a node leading (value,
	// with its term) and every other node following it; detail says
	// what was seen. Real servers' runs record it once, when it happens.
	KindReady Kind = "ready"
	// KindUnstarted: the run's nodes did not all start, so nothing ran
	// and nothing is judged; what says how (UnstartedFailed,
	// UnstartedInterrupted), detail why, in coup's or the node's words.
	// It follows the meta event, and the history has no end event.
	KindUnstarted Kind = "unstarted"
	// KindClock: what coup read back of a node's clocks under a clock
	// fault (what ClockSeen or ClockUnseen; see the package
	// documentation).
	KindClock Kind = "clock"
	// KindLink: what a network between real servers carried on one
	// directed link (src → dest) over a span of time that ends at the
	// event's time: counts holds the figures (Link* below). A network
	// records one per link that carried or dropped anything in each
	// period (once a second), and one for the last part of a period as
	// the run stops, so that the sum of a link's events is what the
	// link carried in the run.
	KindLink Kind = "link"
	// KindDisk: what a storage fault did to a node's disk (what DiskLost
	// or DiskCorrupted): name the fault's occurrence, detail a line for
	// people, value the record as JSON (the files, bytes and last synced
	// offsets lost; the bits flipped).
	KindDisk Kind = "disk"
)

// The counts of a link event (KindLink). Bytes and span are always
// there; a stream network (the server driver's proxies) counts chunks
// (one read of a connection's direction, written as one), a packet
// network packets; a count that is 0 is left out.
const (
	// LinkSpan is the length, in nanoseconds, of the span the counts
	// cover: it began at the event's time minus the span.
	LinkSpan = "span_ns"
	// LinkBytes counts the bytes the network passed on towards dest
	// (for packets, the bytes of their transport payloads: what the
	// applications sent, without IP, TCP or UDP headers, so that a bare
	// acknowledgement counts as a packet of 0 bytes).
	LinkBytes = "bytes"
	// LinkChunks and LinkPackets count what carried those bytes.
	LinkChunks  = "chunks"
	LinkPackets = "packets"
	// LinkDroppedBytes and LinkDroppedPackets count what a fault took:
	// for a stream network, the bytes of chunks a loss held (a chunk
	// held past its loss's reset is lost with its connection; one let
	// go when the loss ended counts in bytes too, when it is passed
	// on); for a packet network, the packets a cut or a loss dropped and
	// their bytes. Bytes held by a stall and passed on at the heal count
	// in bytes then, not here.
	LinkDroppedBytes   = "dropped_bytes"
	LinkDroppedPackets = "dropped_packets"
)

// Disk event whats.
const (
	DiskLost      = "lost"      // a power failure lost what was not synced
	DiskCorrupted = "corrupted" // a disk fault altered files behind the programs' backs
)

// Clock event whats.
const (
	ClockSeen   = "seen"   // a process's reads saw the skew in value
	ClockUnseen = "unseen" // a process read no clock coup could see
)

// Unstarted event whats: how a run's start ended.
const (
	UnstartedFailed      = "failed"      // a node, or coup, failed to start the run
	UnstartedInterrupted = "interrupted" // Ctrl-C (or SIGTERM) before every node was up
)

// Process event whats: the life of a node process.
const (
	ProcStart  = "start"  // the process is up and answered init
	ProcCrash  = "crash"  // killed by the nemesis
	ProcExit   = "exit"   // exited on its own
	ProcPause  = "pause"  // stopped (SIGSTOP); still live
	ProcResume = "resume" // continued (SIGCONT)
	ProcStop   = "stop"   // stopped by the harness at the end of the run
	// ProcPartExit: a process that is not a node's own exited on its own
	// (a sidecar of the node's host, node its host and name its label;
	// a client's own process, process the client and node its host if
	// any); the node it serves stays up, so no check counts it down.
	ProcPartExit = "part-exit"
)

// Report whats: what a node says about itself.
const (
	ReportLeader      = "leader"      // value: the node it trusts as leader, "" for none; term: its term, if given
	ReportParticipant = "participant" // value: "true" or "false"
	ReportCS          = "cs"          // value: "enter" or "exit"
	ReportRejected    = "rejected"    // value: why (checksum, unparsable); msg: the message id if known
	ReportMetric      = "metric"      // name: the metric; value: its value
)

// LeaderUnknown is the detail of a leader report that says the node's
// belief is not known: a real server's poll failed, timed out or gave an
// answer no pattern reads. Its value is "" (no claim): a claim it
// follows ended there, cut short, and the checks count such ends.
const LeaderUnknown = "unknown"

// MaxEvidence bounds the text an event's evidence keeps: a log line or a
// poll's answer is under suspicion like every byte a server writes.
const MaxEvidence = 512

// Evidence is what a belief was read from: a log line (its file, its
// number, its text) or a poll's answer (its question and what came back,
// or the error in its place), so that a person can check a claim in the
// history without opening a log.
type Evidence struct {
	// From is where it was read: a log file's name in the run's folder
	// ("n1.etcd.log"), or a poll's question (its URL, address, file or
	// command).
	From string `json:"from"`
	// Line is the log line's number in its file, from 1; 0 for a poll.
	Line int `json:"line,omitempty"`
	// Text is the line or the answer, made printable and cut to
	// MaxEvidence bytes (Cut says so).
	Text string `json:"text"`
	Cut  bool   `json:"cut,omitempty"`
}

// LimitMessages is the what of the limit event that stops the recording of
// messages one by one.
const LimitMessages = "messages"

// Op types, in Jepsen's form.
const (
	OpInvoke = "invoke"
	OpOK     = "ok"
	OpFail   = "fail"
	OpInfo   = "info" // indeterminate: it may or may not have taken effect
)

// Message event whats.
const (
	MsgSend      = "send"
	MsgDeliver   = "deliver"
	MsgDrop      = "drop"
	MsgDuplicate = "duplicate"
	MsgCorrupt   = "corrupt"
)

// Nemesis phases.
const (
	PhaseStart = "start"
	PhaseEnd   = "end"
)

// Event is one line of a history. Fields a kind does not use are empty and
// omitted from the JSON.
type Event struct {
	Index int64 `json:"i"`
	Time  int64 `json:"t"` // nanoseconds since the run began
	Kind  Kind  `json:"kind"`

	Node  string `json:"node,omitempty"`
	What  string `json:"what,omitempty"`
	Value string `json:"value,omitempty"`
	Name  string `json:"name,omitempty"`
	// Term is the term (or epoch, or lease generation) a leader report
	// names, when the node gave one; nil when it gave none, so that term
	// 0 stays distinct from no term.
	Term *int64 `json:"term,omitempty"`

	// Process events.
	Incarnation int    `json:"incarnation,omitempty"`
	Detail      string `json:"detail,omitempty"`
	// Tail is, on an exit (ProcExit, ProcPartExit), the last lines of the
	// process's log, made printable and cut short.
	Tail []string `json:"tail,omitempty"`

	// Client operations.
	Process string `json:"process,omitempty"`
	Type    string `json:"type,omitempty"`
	F       string `json:"f,omitempty"`
	// Token is the fencing token a lock grant (an acquire's ok) carries,
	// when the lock service gives one: etcd's revision of the grant; nil
	// when it gave none.
	Token *int64 `json:"token,omitempty"`
	// Host is the host the operation's client sits on, and Served the
	// member that served it, where the server's protocol says so (etcd's
	// response header, the ZooKeeper session's server, an adapter's
	// served_by): the server driver's; empty when not known.
	Host   string `json:"host,omitempty"`
	Served string `json:"served,omitempty"`

	// Nemesis events.
	Phase string   `json:"phase,omitempty"`
	Nodes []string `json:"nodes,omitempty"`

	// Message events. Msg is the harness's id of a message, unique in a run;
	// a report of a rejected message carries it too, when it is known.
	Msg    int64  `json:"msg,omitempty"`
	Src    string `json:"src,omitempty"`
	Dest   string `json:"dest,omitempty"`
	MType  string `json:"mtype,omitempty"`
	Reason string `json:"reason,omitempty"`
	Body   string `json:"body,omitempty"` // the delivered body, when it differs from the sent one

	Meta *Meta `json:"meta,omitempty"`

	// Evidence is, on a leader report read from a real server, what it
	// was read from (the log line, or the poll's answers).
	Evidence []Evidence `json:"evidence,omitempty"`

	// Counts, on the end event, are the run's message and operation
	// counters, kept whether or not each message was recorded.
	Counts map[string]int64 `json:"counts,omitempty"`
}

// Duration is the time of an event as a time.Duration since the run began.
func (e *Event) Duration() time.Duration { return time.Duration(e.Time) }

// Meta says what ran. It is the first event of every history.
type Meta struct {
	Scenario  string `json:"scenario"`
	File      string `json:"file,omitempty"`
	Algorithm string `json:"algorithm"`
	// Command is the program each node ran, with its arguments, when the
	// nodes are the user's own (a scenario's command), not coup's.
	Command []string `json:"command,omitempty"`
	// Workload is the kind of the scenario's workload ("election",
	// "mutex", "lin-kv", "set", "echo", "none"); it picks the default checks of
	// a foreign node's history that names none.
	Workload string   `json:"workload,omitempty"`
	Nodes    []string `json:"nodes"`
	// IDs are the election ids of the nodes, in the order of Nodes.
	IDs  []int `json:"ids"`
	Seed int64 `json:"seed"`
	// Elects is "max" when the algorithm elects the highest id, "min" when
	// it elects the smallest, "" when validity does not depend on ids.
	Elects string `json:"elects,omitempty"`
	// Termination is the bound, in nanoseconds, within which every live
	// node must believe in some leader after the last disruption.
	Termination int64 `json:"termination_ns,omitempty"`
	// MessageBound is the most messages one election may cost, by the
	// algorithm's analysis for these nodes and initiators; 0 for none.
	MessageBound int64 `json:"message_bound,omitempty"`
	// Checksums is true when the nodes were asked to sum and verify every
	// message body.
	Checksums bool `json:"checksums"`
	// GST is the global stabilisation time, in nanoseconds since the run
	// began, when the scenario has eventually timely links; 0 for none.
	GST int64 `json:"gst_ns,omitempty"`
	// Stabilisation is the bound, in nanoseconds, within which eventual
	// leadership must hold (counted from GST when there is one, else from
	// the run's start); 0 for the check's default.
	Stabilisation int64 `json:"stabilisation_ns,omitempty"`
	// Progress is the bound, in nanoseconds, within which an acquire that
	// no fault blocks must be granted (the mutex-progress check); 0 for the
	// check's default.
	Progress int64 `json:"progress_ns,omitempty"`
	// StaleLeader is the bound, in nanoseconds, on how long a leader's
	// claim may overlap another live node's claim in a higher term (the
	// stale-leader check); 0 for none: the window is reported, not judged.
	StaleLeader int64 `json:"stale_leader_ns,omitempty"`
	// Checks names the checks the scenario asked for; empty means the
	// defaults of the algorithm.
	Checks []string `json:"checks,omitempty"`
	// Params are the algorithm parameters, as the nodes got them.
	Params map[string]any `json:"params,omitempty"`
	// Expect is the verdict the scenario expects.
	Expect *Expect `json:"expect,omitempty"`
	// Simulated is true when the deterministic simulator wrote the
	// history (virtual time, the algorithm in process); false for a run
	// of real processes.
	Simulated bool `json:"simulated,omitempty"`
	// Ready is what the run waited to see before its faults and workload
	// began, for a driver that watches the cluster form (real servers:
	// "port", "leader" or "followers"); empty for one that does not. Such
	// a run records the moment the cluster was first seen ready (a ready
	// event), whatever it waited for.
	Ready string `json:"ready,omitempty"`
	// Servers is true when the nodes were real servers ([server]): their
	// reports are what coup observed of them (log patterns, polls), not
	// what they sent.
	Servers bool `json:"servers,omitempty"`
	// Isolation says what held each real server's host's processes:
	// "cgroup", "namespace" or "group" (docs/servers.md); "" for nodes
	// that are not real servers.
	Isolation string `json:"isolation,omitempty"`
	// Network is what carried the packets between real servers' hosts:
	// "namespaces" (coup's network, a namespace per host) or "proxy"
	// (loopback, a TCP proxy per link).
	Network string `json:"network,omitempty"`
}

// Expect is a scenario's expected verdict: the overall validity and the
// checks that must find a violation (every other check must hold).
type Expect struct {
	Valid      bool     `json:"valid"`
	Violations []string `json:"violations,omitempty"`
	// Either are checks whose verdict the scenario does not predict:
	// true and false are both as expected (a race of real servers').
	Either []string `json:"either,omitempty"`
	// Exits are the nodes (and client processes) that may exit on their
	// own without the run being unexpected: any other exit that no fault
	// and no end of run caused is a finding.
	Exits []string `json:"exits,omitempty"`
}

// IDOf returns the election id of node, and whether the node is known.
func (m *Meta) IDOf(node string) (int, bool) {
	for i, n := range m.Nodes {
		if n == node {
			if i < len(m.IDs) {
				return m.IDs[i], true
			}
			return 0, false
		}
	}
	return 0, false
}
