package scenario

import (
	"fmt"
	"strconv"
	"time"

	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/nodes/algorithms"
)

// Scenario is one scenario file, validated and with its defaults filled in.
type Scenario struct {
	// Name names the scenario in the store; it defaults to the file's base
	// name without ".toml".
	Name string `toml:"name"`
	// Description says what the scenario shows, for people.
	Description string `toml:"description"`
	// Algorithm is the built-in algorithm the nodes run (see
	// `coup algorithms`). With Command set it names the foreign node's
	// algorithm for the report and may be anything.
	Algorithm string `toml:"algorithm"`
	// Command, when set, runs this program (with its arguments) as each node
	// instead of the built-in node; it must speak the node protocol. Its
	// relative paths are taken from the scenario file's folder (see
	// resolveCommand).
	Command []string `toml:"command"`
	// InitTimeout is how long each node has to answer init, at the start
	// and after a restart (default: 5s plus 20ms per node).
	InitTimeout Duration `toml:"init_timeout"`
	// DeferStart asks a foreign node (command) to start its algorithm only
	// on the harness's start message, sent to every node together once
	// all have answered init (init carries "defer_start": true), so that
	// a node that starts fast does not elect itself before the slowest is
	// up. Built-in state machines always start so (DefersStart).
	DeferStart bool `toml:"defer_start"`
	// Nodes is the number of nodes, named n1..nN in ring order.
	Nodes int `toml:"nodes"`
	// IDs are the nodes' election identifiers in ring order; by default
	// node nK has id K. They must be distinct.
	IDs []int `toml:"ids"`
	// Seed seeds every random choice of the run (default 1).
	Seed int64 `toml:"seed"`
	// Duration is how long the workload and faults run (default 1s).
	Duration Duration `toml:"duration"`
	// Recovery is how long the run goes on after the heal, with no
	// faults, so that liveness can be judged (default 1s).
	Recovery Duration `toml:"recovery"`
	// Checksums asks built-in nodes to sum every message they send and to
	// reject any whose sum does not match (default true).
	Checksums *bool `toml:"checksums"`
	// Params are the algorithm's parameters; each algorithm documents its
	// own, and unknown ones are rejected.
	Params map[string]any `toml:"params"`
	// Elects says which leader validity expects: "max" (the highest live
	// election id), "min" (the smallest) or "any" (any live node). Default:
	// the built-in algorithm's own; "any" for a foreign node.
	Elects string `toml:"elects"`

	// Server, when set, runs real servers as the nodes instead of protocol
	// speakers (see Server and docs/servers.md).
	Server *Server `toml:"server"`

	Network  Network  `toml:"network"`
	Workload Workload `toml:"workload"`
	Faults   []Fault  `toml:"faults"`
	Checks   Checks   `toml:"checks"`
	Expect   Expect   `toml:"expect"`
	History  History  `toml:"history"`

	// Explore, when set, is the vocabulary `coup explore` draws fault
	// schedules from (see Explore and Vocabulary).
	Explore *Explore `toml:"explore"`

	// File is the path the scenario was loaded from.
	File string `toml:"-"`

	// written is the [server] table as the file wrote it, before its
	// preset and defaults were filled in (for Encode); algorithmFromServer
	// says that the algorithm was named after it.
	written             *Server
	algorithmFromServer bool

	loc     *locator
	machine bool // the nodes run the caller's own machine (ParseMachine)
	nemesis []nemesis.Fault
	sets    []Override // the command line's overrides, applied
}

// Network is the base behaviour of every link, before faults.
type Network struct {
	// Latency is the one-way delay of every message (default 1ms).
	Latency Duration `toml:"latency"`
	// Jitter adds a uniformly random delay in [0, jitter) to each message.
	Jitter Duration `toml:"jitter"`
	// FIFO keeps each link first-in first-out despite jitter (default
	// true), as a TCP connection would.
	FIFO *bool `toml:"fifo"`
}

// Workload says what clients ask of the nodes.
type Workload struct {
	// Kind is "election" (ask initiators to start an election), "mutex"
	// (clients acquire and release a lock), "lin-kv" (clients read, write
	// and compare-and-set keys, Maelstrom's workload), "set" (clients add
	// unique elements to a set, Jepsen's workload in Maelstrom's g-set
	// bodies), "echo" (clients send echoes, Maelstrom's) or "none" (the
	// algorithm starts by itself). Default "mutex" for a
	// mutual-exclusion algorithm, "election" otherwise. lin-kv, set and
	// echo are served by foreign nodes (command, a machine of your own,
	// real servers) only.
	Kind string `toml:"kind"`
	// Initiators are the nodes asked to start an election, or ["all"].
	// Default: the first node. Election workloads only.
	Initiators []string `toml:"initiators"`
	// At is when the initiators are asked, or the clients start (default
	// 0: as soon as the nodes are up).
	At Duration `toml:"at"`
	// Timeout is how long a client waits for an answer before it records
	// the operation as info: it may or may not have taken effect (default
	// 1s).
	Timeout Duration `toml:"timeout"`

	// Clients is the number of clients (default: one per node). Mutex,
	// lin-kv, set and echo workloads only, like targets and rate.
	Clients int `toml:"clients"`
	// Targets are the nodes the clients talk to: client ci talks to the
	// ((i−1) mod len)-th (default: every node, in ring order).
	Targets []string `toml:"targets"`
	// On places each client on a host, for real servers: "each" (the
	// default, one per host in turn), a node, or a list (ClientHosts).
	On ClientHosts `toml:"on"`
	// Rate is how often the clients ask, over all clients, when nothing
	// makes them wait: acquires per second for a lock, operations per
	// second for lin-kv and echo. Each client pauses a random time with
	// mean clients/rate before each (default 100).
	Rate float64 `toml:"rate"`
	// Hold is how long a client keeps the lock once granted (default
	// 10ms). Mutex workloads only.
	Hold Duration `toml:"hold"`

	// Keys is how many keys the lin-kv clients use, 0 to keys−1 (default
	// 3). Lin-kv workloads only, like values and mix.
	Keys int `toml:"keys"`
	// Values is how many values writes and compare-and-sets draw from, 0
	// to values−1 (default 5, as Maelstrom).
	Values int `toml:"values"`
	// Mix weighs the lin-kv operations (default: read, write and cas
	// alike).
	Mix *Mix `toml:"mix"`

	// FinalReads says who reads, after the heal, what the clients wrote
	// (the whole set; every key written), for the lost-writes check:
	// "all" (every client, each through its own node), "none", or one
	// client ("c2"). Default "all" for a set workload, and for lin-kv when
	// the checks include lost-writes; "none" otherwise. Set and lin-kv
	// workloads only, like final_after.
	FinalReads string `toml:"final_reads"`
	// FinalAfter is how long after the heal the final reads begin
	// (default: half the recovery window); it must be shorter than the
	// recovery window.
	FinalAfter Duration `toml:"final_after"`
}

// Mix weighs the lin-kv operations: each is picked with a probability in
// proportion to its weight. A weight left out is 0.
type Mix struct {
	// Read weighs reads.
	Read float64 `toml:"read"`
	// Write weighs writes.
	Write float64 `toml:"write"`
	// Cas weighs compare-and-sets.
	Cas float64 `toml:"cas"`
}

// Fault is one fault of the nemesis, as the file writes it. Validation
// turns it into a nemesis.Fault (see Scenario.NemesisFaults); which keys
// each kind takes is nemesis.Params.
type Fault struct {
	// Kind is the fault: crash, restart, replace, pause, resume, clock,
	// disk, partition, loss, delay, duplicate, corrupt, joker or timely.
	Kind string `toml:"kind"`
	// Target names the nodes the fault hits: a node, a list of nodes, or
	// one of leader, follower, random, one, minority, majority, all.
	Target Target `toml:"target"`
	// At is when the fault begins, from the start of the run; for a
	// triggered fault, when the trigger is armed; for timely, the GST.
	At Duration `toml:"at"`
	// For is how long each occurrence lasts (default: until the heal).
	For Duration `toml:"for"`
	// Every repeats the fault with this period until the run's duration.
	Every Duration `toml:"every"`
	// Random makes the gaps between occurrences random, with Every as the
	// mean period.
	Random *bool `toml:"random"`
	// When starts the fault on a history event instead of at a time.
	When *When `toml:"when"`

	// Probability of loss, duplication or corruption (default 1).
	Probability *float64 `toml:"probability"`
	// Delay, Jitter and Distribution shape a delay fault.
	Delay        Duration `toml:"delay"`
	Jitter       Duration `toml:"jitter"`
	Distribution string   `toml:"distribution"`
	// Direction: both, out or in.
	Direction string `toml:"direction"`
	// Shape, Groups and OneWay lay out a partition.
	Shape  string     `toml:"shape"`
	Groups [][]string `toml:"groups"`
	OneWay *bool      `toml:"oneway"`
	// Mode of a corruption: bitflip or mutate.
	Mode string `toml:"mode"`
	// Cut is how a partition cuts real servers' connections: stall
	// (bytes held until the heal, the default) or refuse (connections
	// reset and refused). Server scenarios only.
	Cut string `toml:"cut"`
	// Rate of a clock fault: how fast the clocks run (1.5, 0.8). Of a
	// bandwidth fault: the bytes a second each covered link carries.
	Rate *float64 `toml:"rate"`
	// Burst of a bandwidth fault: the bytes an idle link sends at once
	// (default 0).
	Burst *int64 `toml:"burst"`
	// Offset of a clock fault: a jump, forward ("30s") or back ("-30s").
	Offset Duration `toml:"offset"`
	// Clocks a clock fault skews: realtime, monotonic or both (the
	// default).
	Clocks string `toml:"clocks"`
	// Reset makes a clock fault put its target's clocks right.
	Reset *bool `toml:"reset"`
	// Delta bounds every message's delay on a timely link.
	Delta Duration `toml:"delta"`

	// Disk makes a crash a power failure: "lose-unsynced" (every write
	// not synced is lost) or "torn" (each file keeps a random prefix of
	// its unsynced writes). A disk fault's own keys: mode (corrupt, full,
	// slow, eio), files (a glob of the files corrupt and eio touch),
	// bits, zero or truncate (corrupt's: bits to flip, bytes to zero,
	// bytes to cut off), delay (slow's) and ops (eio's: read, write or
	// both). See docs/scenarios.md.
	Disk     string `toml:"disk"`
	Files    string `toml:"files"`
	Bits     *int   `toml:"bits"`
	Zero     *int64 `toml:"zero"`
	Truncate *int64 `toml:"truncate"`
	Ops      string `toml:"ops"`
}

// When is a fault's trigger: a report, a process event, or a lock
// operation's ok in the history.
type When struct {
	Report  string `toml:"report"`
	Process string `toml:"process"`
	Op      string `toml:"op"`
	Value   string `toml:"value"`
	Node    string `toml:"node"`
}

// Target is a fault's target as written: one string or a list of strings.
// A value of another type is kept and reported by validation, with its
// position.
type Target struct {
	Names []string
	Set   bool
	err   string
}

// UnmarshalTOML records the target; it never fails, so that validation can
// report the error with the field's position.
func (t *Target) UnmarshalTOML(v any) error {
	t.Set = true
	switch x := v.(type) {
	case string:
		t.Names = []string{x}
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				t.err = fmt.Sprintf("want node names as strings, got %v", e)
				return nil
			}
			t.Names = append(t.Names, s)
		}
		if len(t.Names) == 0 {
			t.err = "an empty list hits nothing"
		}
	default:
		t.err = fmt.Sprintf("want a node name, a list of them, or a pick such as \"leader\"; got %v", v)
	}
	return nil
}

// Checks configures the checks.
type Checks struct {
	// Run names the checks to run; default: two-leaders, agreement,
	// validity and termination for an election, mutex-linearizable,
	// mutex-cs, mutex-progress, mutex-fairness and mutex-measures for
	// mutual exclusion, kv-linearizable for lin-kv and echo for echo.
	Run []string `toml:"run"`
	// Termination is the bound within which every live node must believe
	// in a leader after the last disruption (default: the recovery window).
	Termination Duration `toml:"termination"`
	// Stabilisation is the bound within which eventual leadership must
	// hold, counted from the GST when the scenario has a timely fault, else
	// from the start (default: the check's own).
	Stabilisation Duration `toml:"stabilisation"`
	// Progress is the bound within which an acquire that no fault blocks
	// must be granted (mutex-progress; default: the workload's timeout or
	// the recovery window, whichever is shorter).
	Progress Duration `toml:"progress"`
	// StaleLeader bounds the stale-leader window: how long a leader's claim
	// may overlap another live node's claim in a higher term. Without it
	// the stale-leader check reports the window and holds (default: none).
	StaleLeader Duration `toml:"stale_leader"`
}

// Expect is the verdict the scenario expects.
type Expect struct {
	// Valid is the expected overall verdict (default true).
	Valid *bool `toml:"valid"`
	// Violations are the checks that must find a violation. Every other
	// check must hold.
	Violations []string `toml:"violations"`
	// Either are checks whose verdict the scenario does not predict:
	// true and false are both as expected, as when real servers race
	// (the old leader's claim may or may not outlive the new one's
	// election). Their verdicts are reported all the same.
	Either []string `toml:"either"`
	// Exits are the nodes that may exit on their own (their server, a
	// sidecar of their host, or a client process on their host, for
	// real servers), and client processes by name (c1, …), without the
	// run being unexpected. Any other exit that no fault and no end of
	// run caused is a finding that makes the run unexpected.
	Exits []string `toml:"exits"`
}

// History says what the history records.
type History struct {
	// Messages records every message's send, delivery and fate as an
	// event (default true). Message counts are kept either way.
	Messages *bool `toml:"messages"`
	// MaxMessages is the most messages recorded one by one in a run
	// (default 1 000 000): past it, messages are routed and counted as
	// ever, but no longer recorded, so that no node can grow the history,
	// or the memory that reads it back, without bound. A limit event in
	// the history says when it bit and whose message it was.
	MaxMessages *int64 `toml:"max_messages"`
}

// Duration is a duration written as a string like "150ms". A bad value is
// kept and reported by validation, with its position.
type Duration struct {
	D   time.Duration
	Raw string
	Set bool
	err error
}

// MaxDuration is the longest duration a scenario may give any key: longer
// than any run, and short enough that a time plus a bound never overflows.
const MaxDuration = 1000 * time.Hour

// UnmarshalText records the text; it never fails, so that validation can
// report the error with the field's position.
func (d *Duration) UnmarshalText(b []byte) error {
	d.Raw, d.Set = string(b), true
	d.D, d.err = time.ParseDuration(d.Raw)
	switch {
	case d.err == nil && d.D < 0:
		d.err = fmt.Errorf("negative")
	case d.err == nil && d.D > MaxDuration:
		d.err = fmt.Errorf("too long")
	}
	return nil
}

// MarshalText writes the duration back.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.D.String()), nil }

// NodeName is the name of the i-th node (0-based) in ring order.
func NodeName(i int) string { return "n" + strconv.Itoa(i+1) }

// NodeNames are the scenario's node names in ring order.
func (s *Scenario) NodeNames() []string {
	out := make([]string, s.Nodes)
	for i := range out {
		out[i] = NodeName(i)
	}
	return out
}

// NemesisFaults are the scenario's faults in the nemesis's terms, with
// their defaults filled in (nil before validation).
func (s *Scenario) NemesisFaults() []nemesis.Fault { return s.nemesis }

// GST is the global stabilisation time, from the run's zero, when the
// scenario has a timely fault.
func (s *Scenario) GST() (time.Duration, bool) { return nemesis.GST(s.nemesis) }

// StateMachine reports whether the nodes run a built-in state-machine
// algorithm: not a foreign program (command), and not a built-in node
// program such as memberlist. Only those start on the harness's start
// message, and only those can be simulated.
func (s *Scenario) StateMachine() bool {
	spec, ok := algorithms.Lookup(s.Algorithm)
	return s.Command == nil && ok && spec.Program == nil
}

// DefersStart reports whether the nodes start their algorithm on the
// harness's start message rather than at init: a built-in state machine
// always, a foreign node with defer_start.
func (s *Scenario) DefersStart() bool { return s.StateMachine() || (s.Command != nil && s.DeferStart) }

// ChecksumsOn reports whether nodes sum their messages.
func (s *Scenario) ChecksumsOn() bool { return s.Checksums == nil || *s.Checksums }

// DefaultMaxMessages is history.max_messages's default.
const DefaultMaxMessages = 1_000_000

// MessageLimit is the most messages recorded one by one (see
// History.MaxMessages).
func (s *Scenario) MessageLimit() int64 {
	if s.History.MaxMessages == nil {
		return DefaultMaxMessages
	}
	return *s.History.MaxMessages
}

// RecordMessages reports whether each message is recorded in the history.
func (s *Scenario) RecordMessages() bool { return s.History.Messages == nil || *s.History.Messages }

// FIFO reports whether links keep their order.
func (n *Network) IsFIFO() bool { return n.FIFO == nil || *n.FIFO }

// ExpectValid is the expected overall verdict.
func (e *Expect) ExpectValid() bool { return e.Valid == nil || *e.Valid }
