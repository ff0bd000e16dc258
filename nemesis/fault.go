package nemesis

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"
)

// Kind is a fault.
type Kind string

// The faults. Process faults act on node processes through a Cluster; link
// faults change the fate of messages in the Net; a joker alters what one
// node sends; timely makes links eventually timely.
const (
	// Crash kills a node (SIGKILL). With For, it is restarted afterwards
	// (crash-recovery); without, it stays down (crash-stop).
	Crash Kind = "crash"
	// Restart starts a fresh process with the id of a node that is down:
	// its state is lost and it does the init handshake again.
	Restart Kind = "restart"
	// Replace crashes a node and restarts it at once, under the same id.
	Replace Kind = "replace"
	// Pause stops a node (SIGSTOP) until For has passed, or the heal; a
	// paused node stays live.
	Pause Kind = "pause"
	// Resume continues a paused node (SIGCONT).
	Resume Kind = "resume"
	// Clock skews a node's clocks: a jump (Offset), a rate (Rate), or
	// both, from the moment it begins; its end, or a clock fault with
	// Reset, puts them right. A built-in node's rate is its timers'
	// (simulated, on every driver); anything else is done to the node's
	// real processes (the pipe driver's foreign nodes, real servers).
	Clock Kind = "clock"
	// Partition cuts links, both ways or one way, in a shape.
	Partition Kind = "partition"
	// Loss drops each message on the links with a probability.
	Loss Kind = "loss"
	// Delay adds a random delay to each message on the links; the links
	// stop being FIFO, so messages are reordered.
	Delay Kind = "delay"
	// Duplicate delivers a second copy of a message with a probability.
	Duplicate Kind = "duplicate"
	// Corrupt alters a message's body with a probability: bit flips (the
	// JSON may break) or a field mutation (the JSON stays valid, only a
	// checksum can tell).
	Corrupt Kind = "corrupt"
	// Joker alters the "payload" field of every message a node sends and
	// recomputes the message's sum, so per-message checksums pass and only
	// an end-to-end check can catch it.
	Joker Kind = "joker"
	// Disk is a fault of a node's disk, through coup's storage layer (a
	// real server's data folder) or a Machine's storage (the simulator):
	// corrupt its files, or make it full, slow or failing (DiskMode). A
	// power failure is a crash with PowerFail.
	Disk Kind = "disk"
	// Bandwidth limits each covered link to Rate bytes a second, with a
	// burst of Burst bytes: a message (a packet, a chunk) waits until the
	// link has sent what came before it, as behind a throttled router.
	Bandwidth Kind = "bandwidth"
	// Timely makes the links out of some nodes eventually timely: from
	// At (the global stabilisation time) on, every message on them is
	// delivered within Delta, whatever the other faults say.
	Timely Kind = "timely"
)

// Kinds lists every fault, in the order the documentation gives them.
var Kinds = []Kind{Crash, Restart, Replace, Pause, Resume, Clock, Disk, Partition, Loss, Delay, Duplicate, Corrupt, Bandwidth, Joker, Timely}

// OnProcess reports whether the fault acts on processes through a Cluster
// rather than on the net.
func (k Kind) OnProcess() bool {
	switch k {
	case Crash, Restart, Replace, Pause, Resume, Clock, Disk:
		return true
	}
	return false
}

// Pick says how a target is chosen when it does not name nodes.
type Pick string

// The picks. Random choices come from the schedule's seeded stream.
const (
	// Leader is the current leader as the history says: the live node that
	// most recently reported itself leader and has not reported another
	// since.
	Leader Pick = "leader"
	// Follower is one random candidate other than the leader, while a
	// live node believes it leads.
	Follower Pick = "follower"
	// Random is a random non-empty subset of the candidates.
	Random Pick = "random"
	// One is one random candidate.
	One Pick = "one"
	// Minority is ⌊(n−1)/2⌋ random candidates, n being the number of nodes.
	Minority Pick = "minority"
	// Majority is ⌊n/2⌋+1 random candidates.
	Majority Pick = "majority"
	// All is every candidate.
	All Pick = "all"
	// Holder is the client process that holds the lock as the history
	// says: its latest acquire returned ok and it has not released since
	// (the latest such grant when the history shows more than one). Only a
	// pause takes it, and only where the workload's clients run as
	// processes of their own (a real server's client adapters): it stops
	// the client that believes it holds the lock.
	Holder Pick = "holder"
)

// Picks lists the picks a target may name.
var Picks = []Pick{Leader, Follower, Random, One, Minority, Majority, All, Holder}

// Target says which nodes a fault hits: named nodes, or a pick among the
// candidates when the fault begins. The candidates depend on the fault: the
// live nodes for crash, replace and pause (pause: those not paused), the
// down nodes for restart, the paused nodes for resume, every node for the
// others. Named nodes that are not candidates are skipped.
type Target struct {
	Nodes []string
	Pick  Pick
}

// ParseTarget reads a target as a scenario writes it: a pick ("leader"),
// or one or more node names.
func ParseTarget(names []string) (Target, error) {
	if len(names) == 1 && slices.Contains(Picks, Pick(names[0])) {
		return Target{Pick: Pick(names[0])}, nil
	}
	for _, n := range names {
		if slices.Contains(Picks, Pick(n)) {
			return Target{}, fmt.Errorf("%q must be the only target, not one of a list", n)
		}
	}
	return Target{Nodes: names}, nil
}

func (t Target) String() string {
	if t.Pick != "" {
		return string(t.Pick)
	}
	return strings.Join(t.Nodes, ",")
}

// IsZero reports whether the target is unset.
func (t Target) IsZero() bool { return t.Pick == "" && len(t.Nodes) == 0 }

// Direction says which links of the target nodes a link fault covers.
type Direction string

// The directions.
const (
	Both Direction = "both" // messages from or to the target nodes
	Out  Direction = "out"  // messages from the target nodes
	In   Direction = "in"   // messages to the target nodes
)

// Shape is the layout of a partition.
type Shape string

// The partition shapes. The ring is the scenario's node order.
const (
	// Isolate cuts the target nodes off from the rest (target "leader"
	// isolates the current leader).
	Isolate Shape = "isolate"
	// Halves splits the nodes at random into ⌊n/2⌋ and ⌈n/2⌉.
	Halves Shape = "halves"
	// MajoritiesRing lets each node hear only the majority of nodes around
	// it on the ring, so every node sees a majority and no two see the
	// same one.
	MajoritiesRing Shape = "majorities-ring"
	// Bridge splits the other nodes into two halves that cannot talk to
	// each other, and leaves one node (the target) talking to both.
	Bridge Shape = "bridge"
	// RingCut cuts the ring link between each target node and its
	// successor.
	RingCut Shape = "ring-cut"
	// Groups cuts every link between explicit groups; nodes in no group
	// form one more group.
	Groups Shape = "groups"
)

// Shapes lists the partition shapes.
var Shapes = []Shape{Isolate, Halves, MajoritiesRing, Bridge, RingCut, Groups}

// Distribution is the law of a delay fault's random part.
type Distribution string

// The distributions. Each draws the random part X of a delay Delay + X,
// with Jitter as its scale; a total below zero counts as zero.
const (
	Uniform     Distribution = "uniform"     // X in [0, Jitter)
	Normal      Distribution = "normal"      // X normal with mean 0, standard deviation Jitter
	Exponential Distribution = "exponential" // X exponential with mean Jitter
)

// Distributions lists the delay distributions.
var Distributions = []Distribution{Uniform, Normal, Exponential}

// Mode is how a corrupt fault alters a body.
type Mode string

// The corruption modes.
const (
	// BitFlip flips one bit of the body bytes (never making a newline). The
	// JSON may break; the receiver rejects the line as unparsable, or by
	// its checksum.
	BitFlip Mode = "bitflip"
	// Mutate changes the value of one field of the body so that the JSON
	// stays valid and decodes: only a checksum catches it. A body with no
	// field but its type is left alone.
	Mutate Mode = "mutate"
)

// Modes lists the corruption modes.
var Modes = []Mode{BitFlip, Mutate}

// CutKind is how a partition cuts a byte stream between real servers
// (the server driver); a driver that carries messages drops them either
// way.
type CutKind string

// The cut kinds.
const (
	// Stall holds the bytes of a cut direction and releases them at the
	// heal, as TCP does across a real partition: connections stay open
	// and a peer sees only silence.
	Stall CutKind = "stall"
	// Refuse resets every connection across a cut direction and refuses
	// new ones, as a host that is down does: a peer learns at once.
	Refuse CutKind = "refuse"
)

// CutKinds lists the cut kinds.
var CutKinds = []CutKind{Stall, Refuse}

// Trigger fires a fault when the history records a matching event: a
// report (Report is its what) or a process event (Process is its what),
// optionally with a value and from a node. The fault's At arms it; it fires
// once, at the first matching event from then on.
type Trigger struct {
	// Report matches report events of this what ("participant", "leader").
	Report string
	// Process matches process events of this what ("crash", "start").
	Process string
	// Op matches the ok of a lock operation of this f: "acquire" (a
	// grant) or "release".
	Op string
	// Value, when set, must equal the event's value (reports only).
	Value string
	// Node, when set, must be the node of the event.
	Node string
}

func (t *Trigger) String() string {
	var b strings.Builder
	switch {
	case t.Report != "":
		fmt.Fprintf(&b, "report %s", t.Report)
	case t.Op != "":
		fmt.Fprintf(&b, "op %s ok", t.Op)
	default:
		fmt.Fprintf(&b, "process %s", t.Process)
	}
	if t.Value != "" {
		fmt.Fprintf(&b, "=%s", t.Value)
	}
	if t.Node != "" {
		fmt.Fprintf(&b, " by %s", t.Node)
	}
	return b.String()
}

// Fault is one fault of a scenario, in the nemesis's terms. Times count
// from the run's zero, when every node is up (the history's time too).
type Fault struct {
	Kind   Kind
	Target Target
	// At is when the fault begins; for a triggered fault, when its trigger
	// is armed; for timely, the global stabilisation time.
	At time.Duration
	// For is how long each occurrence lasts; 0 means until the heal (or,
	// for an instantaneous fault, nothing).
	For time.Duration
	// Every repeats the fault: a new occurrence every Every, from At until
	// the run's duration.
	Every time.Duration
	// Random makes the gaps between occurrences random: each gap between
	// the end of one occurrence and the start of the next is uniform in
	// [0, 2×(Every−For)), so Every is the mean period.
	Random bool
	// When, if set, starts the fault on a history event instead of a time.
	When *Trigger

	// Probability of loss, duplication or corruption, per message.
	Probability float64
	// Delay and Jitter shape a delay fault: Delay + X, X drawn from
	// Distribution with Jitter as its scale.
	Delay        time.Duration
	Jitter       time.Duration
	Distribution Distribution
	// Direction picks the target nodes' links a link fault covers; for a
	// one-way partition, which way is cut ("out": from the first group to
	// the others; "in": into it).
	Direction Direction
	// Shape, Groups and OneWay lay out a partition.
	Shape  Shape
	Groups [][]string
	OneWay bool
	// Mode of a corrupt fault.
	Mode Mode
	// Cut is how a partition cuts real servers' streams; "" for a run of
	// protocol nodes, where a cut message is dropped.
	Cut CutKind
	// Rate of a clock fault: clocks and timers run Rate times fast (0.5
	// is half speed); 0 leaves the rate alone. Of a bandwidth fault: the
	// bytes a second each covered link carries.
	Rate float64
	// Burst of a bandwidth fault: how many bytes an idle link sends at
	// once, before the rate holds them back (0: none).
	Burst int64
	// Offset of a clock fault: the clocks jump by it when it begins
	// (forward, or back when negative).
	Offset time.Duration
	// Clocks a clock fault skews: the wall clock, the monotonic clocks
	// (timeouts, leases), or both (the default).
	Clocks Clocks
	// Reset makes a clock fault put its target's clocks right, at once:
	// it ends the skew of any clock fault in force there.
	Reset bool
	// Delta bounds the delay of every message on a timely link.
	Delta time.Duration

	// PowerFail makes a crash a power failure: the node's processes die at
	// once, then its disk loses what was not synced (LoseUnsynced) or
	// keeps a torn prefix of it (Torn). "" is a plain crash, which keeps
	// every byte the kernel accepted.
	PowerFail PowerFail
	// DiskMode is what a disk fault does; Files (a glob of paths under the
	// data folder, "" for all) names the files corrupt and eio touch.
	DiskMode DiskMode
	Files    string
	// Bits, Zero and Truncate say how corrupt alters the files (exactly
	// one): flip that many random bits, zero that many bytes at a random
	// offset of each file, or cut that many bytes off each file's end.
	Bits     int
	Zero     int64
	Truncate int64
	// Ops are the operations an eio fault fails: "read", "write" or
	// "both" (the default). A slow disk waits Delay before each write and
	// sync.
	Ops string
}

// PowerFail is what a power failure does to writes not yet synced.
type PowerFail string

// The power failures.
const (
	// LoseUnsynced loses every write, and every directory entry, not
	// synced.
	LoseUnsynced PowerFail = "lose-unsynced"
	// Torn keeps a random, seeded prefix of each file's unsynced writes
	// (the last one kept cut at a random sector boundary of its file on a
	// real server's disk, at a random byte of the simulator's whole-file
	// writes).
	Torn PowerFail = "torn"
)

// PowerFails lists the power failures.
var PowerFails = []PowerFail{LoseUnsynced, Torn}

// DiskMode is what a disk fault does.
type DiskMode string

// The disk modes.
const (
	// DiskCorrupt alters the files on disk, behind the programs' backs,
	// once (it has no duration).
	DiskCorrupt DiskMode = "corrupt"
	// DiskFull fails every write with ENOSPC while it lasts.
	DiskFull DiskMode = "full"
	// DiskSlow delays each write and each sync by Delay while it lasts.
	DiskSlow DiskMode = "slow"
	// DiskEIO fails reads, writes or both of the matching files with EIO
	// while it lasts.
	DiskEIO DiskMode = "eio"
)

// DiskModes lists the disk modes.
var DiskModes = []DiskMode{DiskCorrupt, DiskFull, DiskSlow, DiskEIO}

// EIO operations.
var eioOps = []string{"read", "write", "both"}

// OnDisk reports whether the fault needs a node's disk to act on: a power
// failure, or a disk fault.
func (f *Fault) OnDisk() bool { return f.Kind == Disk || f.Kind == Crash && f.PowerFail != "" }

// Clocks says which clocks a clock fault skews.
type Clocks string

// The clock sets.
const (
	Realtime   Clocks = "realtime"  // the wall clock (CLOCK_REALTIME, gettimeofday, time)
	Monotonic  Clocks = "monotonic" // the clocks counted from boot (CLOCK_MONOTONIC, CLOCK_BOOTTIME)
	BothClocks Clocks = "both"
)

// ClockSets lists the clock sets.
var ClockSets = []Clocks{Realtime, Monotonic, BothClocks}

// MaxClockRate bounds a clock fault's rate.
const MaxClockRate = 1000

// MinBandwidth is the lowest rate of a bandwidth fault, in bytes a
// second: below it a single packet waits for seconds.
const MinBandwidth = 100

// MinEvery is the shortest period of a repeated fault.
const MinEvery = time.Millisecond

// Params lists the parameters a fault kind takes beyond the common ones
// (target, at, for, every, random, when), by their scenario key.
func Params(k Kind) []string {
	switch k {
	case Crash:
		return []string{"disk"}
	case Disk:
		return []string{"mode", "files", "bits", "zero", "truncate", "delay", "ops"}
	case Clock:
		return []string{"rate", "offset", "clocks", "reset"}
	case Partition:
		return []string{"shape", "groups", "oneway", "direction", "cut"}
	case Loss, Duplicate:
		return []string{"probability", "direction"}
	case Delay:
		return []string{"delay", "jitter", "distribution", "direction"}
	case Corrupt:
		return []string{"probability", "mode", "direction"}
	case Bandwidth:
		return []string{"rate", "burst", "direction"}
	case Timely:
		return []string{"delta", "direction"}
	}
	return nil
}

// FieldError is a bad fault: the scenario key and what is wrong.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Check fills in the fault's defaults and validates it against the
// scenario's nodes (in ring order) and duration. It returns a *FieldError
// naming the scenario key at fault.
func (f *Fault) Check(nodes []string, duration time.Duration) error {
	if !slices.Contains(Kinds, f.Kind) {
		return fieldErr("kind", "unknown fault %q (known: %s)", f.Kind, joinKinds())
	}
	if err := f.checkTarget(nodes); err != nil {
		return err
	}
	if err := f.checkTimes(duration); err != nil {
		return err
	}
	if f.When != nil {
		if err := f.When.check(nodes); err != nil {
			return err
		}
	}
	switch f.Kind {
	case Clock:
		if err := f.checkClock(); err != nil {
			return err
		}
	case Loss, Duplicate, Corrupt:
		if f.Probability < 0 || f.Probability > 1 {
			return fieldErr("probability", "must be between 0 and 1, got %g", f.Probability)
		}
	case Delay:
		if f.Delay == 0 && f.Jitter == 0 {
			return fieldErr("delay", "a delay fault needs a delay, a jitter or both")
		}
		if f.Distribution == "" {
			f.Distribution = Uniform
		}
		if !slices.Contains(Distributions, f.Distribution) {
			return fieldErr("distribution", "unknown distribution %q (known: uniform, normal, exponential)", f.Distribution)
		}
	case Partition:
		if err := f.checkPartition(nodes); err != nil {
			return err
		}
		if f.Cut != "" && !slices.Contains(CutKinds, f.Cut) {
			return fieldErr("cut", "unknown cut %q (known: stall, refuse)", f.Cut)
		}
	case Bandwidth:
		if !(f.Rate >= MinBandwidth) || math.IsInf(f.Rate, 0) {
			return fieldErr("rate", "a bandwidth fault needs rate, the bytes a second each link carries, at least %d, got %g", MinBandwidth, f.Rate)
		}
		if f.Burst < 0 {
			return fieldErr("burst", "bytes an idle link sends at once: not negative, got %d", f.Burst)
		}
	case Timely:
		if f.Delta <= 0 {
			return fieldErr("delta", "a timely fault needs delta, the bound on every message's delay after GST")
		}
	case Crash:
		if f.PowerFail != "" && !slices.Contains(PowerFails, f.PowerFail) {
			return fieldErr("disk", "unknown power failure %q (known: lose-unsynced, torn)", f.PowerFail)
		}
	case Disk:
		if err := f.checkDisk(); err != nil {
			return err
		}
	}
	if f.Kind == Corrupt {
		if f.Mode == "" {
			f.Mode = BitFlip
		}
		if !slices.Contains(Modes, f.Mode) {
			return fieldErr("mode", "unknown corruption mode %q (known: bitflip, mutate)", f.Mode)
		}
	}
	if f.Kind != Partition && slices.Contains(Params(f.Kind), "direction") {
		if f.Direction == "" {
			f.Direction = Both
			if f.Kind == Timely {
				f.Direction = Out
			}
		}
		if f.Direction != Both && f.Direction != In && f.Direction != Out {
			return fieldErr("direction", "unknown direction %q (known: both, out, in)", f.Direction)
		}
	}
	return nil
}

func joinKinds() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// needsTarget reports whether a kind has no sensible default target.
func (f *Fault) needsTarget() bool {
	switch f.Kind {
	case Crash, Restart, Replace, Pause, Resume, Clock, Joker, Disk:
		return true
	}
	return false
}

func (f *Fault) checkTarget(nodes []string) error {
	if f.Kind == Partition {
		switch f.Shape {
		case Halves, MajoritiesRing, Groups:
			if !f.Target.IsZero() {
				return fieldErr("target", "a %s partition takes no target: its sides follow from the shape", f.Shape)
			}
			return nil
		case "":
			if len(f.Groups) > 0 {
				if !f.Target.IsZero() {
					return fieldErr("target", "a partition into groups takes no target")
				}
				return nil
			}
		}
		if f.Target.IsZero() {
			f.Target = Target{Pick: One}
		}
	}
	if f.Target.IsZero() {
		if f.needsTarget() {
			return fieldErr("target", "missing: name the nodes the fault hits, or one of %s", joinPicks())
		}
		f.Target = Target{Pick: All}
	}
	for _, n := range f.Target.Nodes {
		if !slices.Contains(nodes, n) {
			return fieldErr("target", "%q names no node: %s", n, nodeRange(nodes))
		}
	}
	if f.Target.Pick == Leader && (f.Kind == Restart || f.Kind == Resume) {
		return fieldErr("target", "the leader is live and running: it cannot be the target of %s", f.Kind)
	}
	if f.Target.Pick == Holder && f.Kind != Pause {
		return fieldErr("target", "\"holder\" is the client that holds the lock: only a pause takes it, not %s", f.Kind)
	}
	return nil
}

func joinPicks() string {
	s := make([]string, len(Picks))
	for i, p := range Picks {
		s[i] = `"` + string(p) + `"`
	}
	return strings.Join(s, ", ")
}

func nodeRange(nodes []string) string {
	switch len(nodes) {
	case 0:
		return "the scenario has no nodes"
	case 1:
		return "the scenario has only " + nodes[0]
	}
	return fmt.Sprintf("the scenario has %s to %s", nodes[0], nodes[len(nodes)-1])
}

func (f *Fault) checkTimes(duration time.Duration) error {
	if f.At < 0 {
		return fieldErr("at", "negative time %s", f.At)
	}
	if f.At >= duration {
		return fieldErr("at", "%s is not within the run's duration (%s)", f.At, duration)
	}
	if f.For < 0 {
		return fieldErr("for", "negative duration %s", f.For)
	}
	if f.Every < 0 {
		return fieldErr("every", "negative duration %s", f.Every)
	}
	if f.Every > 0 && f.Every < MinEvery {
		return fieldErr("every", "%s is shorter than %s: the faults would come faster than processes can take them", f.Every, MinEvery)
	}
	instant := f.Kind == Restart || f.Kind == Replace || f.Kind == Resume || f.Kind == Timely || (f.Kind == Clock && f.Reset) ||
		(f.Kind == Disk && f.DiskMode == DiskCorrupt)
	if instant && f.For > 0 {
		return fieldErr("for", "a %s fault takes no time: it has no duration", f.Kind)
	}
	if f.Kind == Timely && (f.Every > 0 || f.When != nil) {
		field := "every"
		if f.When != nil {
			field = "when"
		}
		return fieldErr(field, "a timely fault happens once, at the global stabilisation time (at)")
	}
	if f.Random && f.Every == 0 {
		return fieldErr("random", "random gaps need every, the mean period")
	}
	if f.Every > 0 {
		if f.When != nil {
			return fieldErr("when", "a triggered fault fires once: it cannot also repeat every %s", f.Every)
		}
		if f.For >= f.Every {
			return fieldErr("for", "%s is not shorter than the period (every = %s): occurrences would overlap", f.For, f.Every)
		}
		if f.For == 0 && !instant && f.Kind != Crash {
			return fieldErr("for", "a repeated %s fault needs for, how long each occurrence lasts (else they would pile up until the heal)", f.Kind)
		}
	}
	return nil
}

func (f *Fault) checkClock() error {
	if f.Reset {
		switch {
		case f.Rate != 0:
			return fieldErr("rate", "a reset puts the clocks right: it takes no rate")
		case f.Offset != 0:
			return fieldErr("offset", "a reset puts the clocks right: it takes no offset")
		case f.Clocks != "":
			return fieldErr("clocks", "a reset puts every clock right: it takes no clocks")
		}
		return nil
	}
	if f.Rate < 0 || f.Rate > MaxClockRate || f.Rate != f.Rate {
		return fieldErr("rate", "must be more than zero and at most %d (2 runs the clocks twice as fast, 0.5 half as fast), got %g", MaxClockRate, f.Rate)
	}
	if f.Rate == 0 && f.Offset == 0 {
		return fieldErr("rate", "a clock fault needs a rate (how fast the clocks run: 1.5, 0.8), an offset (a jump: \"30s\", \"-1m\"), or both; or reset = true to put them right")
	}
	if f.Clocks == "" {
		f.Clocks = BothClocks
	}
	if !slices.Contains(ClockSets, f.Clocks) {
		return fieldErr("clocks", "unknown clocks %q (known: realtime, monotonic, both)", f.Clocks)
	}
	return nil
}

func (t *Trigger) check(nodes []string) error {
	switch {
	case t.Report == "" && t.Process == "" && t.Op == "":
		return fieldErr("when", "say what triggers the fault: when = { report = \"participant\", value = \"true\" }, when = { process = \"crash\" } or when = { op = \"acquire\" }")
	case t.Report != "" && t.Process != "":
		return fieldErr("when.process", "a trigger matches a report, a process event or a lock operation, not two")
	case t.Op != "" && (t.Report != "" || t.Process != ""):
		return fieldErr("when.op", "a trigger matches a report, a process event or a lock operation, not two")
	case t.Op != "" && t.Op != fAcquire && t.Op != fRelease:
		return fieldErr("when.op", "%q: a trigger watches the lock's grants and releases (\"acquire\" or \"release\")", t.Op)
	case (t.Process != "" || t.Op != "") && t.Value != "":
		return fieldErr("when.value", "only a report's value is matched")
	}
	if t.Node != "" && !slices.Contains(nodes, t.Node) {
		return fieldErr("when.node", "%q names no node: %s", t.Node, nodeRange(nodes))
	}
	return nil
}

func (f *Fault) checkPartition(nodes []string) error {
	if f.Shape == "" {
		if len(f.Groups) == 0 {
			return fieldErr("shape", "missing: say how to cut (%s), or give groups", joinShapes())
		}
		f.Shape = Groups
	}
	if !slices.Contains(Shapes, f.Shape) {
		return fieldErr("shape", "unknown shape %q (known: %s)", f.Shape, joinShapes())
	}
	if f.Shape == Groups {
		if len(f.Groups) == 0 {
			return fieldErr("groups", "missing: a groups partition lists its groups, like [[\"n1\", \"n2\"], [\"n3\"]]")
		}
		seen := map[string]bool{}
		for _, g := range f.Groups {
			if len(g) == 0 {
				return fieldErr("groups", "a group is empty")
			}
			for _, n := range g {
				if !slices.Contains(nodes, n) {
					return fieldErr("groups", "%q names no node: %s", n, nodeRange(nodes))
				}
				if seen[n] {
					return fieldErr("groups", "%s is in two groups", n)
				}
				seen[n] = true
			}
		}
	} else if len(f.Groups) > 0 {
		return fieldErr("groups", "groups are for shape = \"groups\", not %q", f.Shape)
	}
	if f.Shape == Bridge && len(f.Target.Nodes) > 1 {
		return fieldErr("target", "a bridge is one node, got %d", len(f.Target.Nodes))
	}
	if f.OneWay {
		if f.Direction == "" {
			return fieldErr("direction", "a one-way partition needs a direction: \"out\" (the first side cannot reach the rest) or \"in\" (the rest cannot reach it)")
		}
		if f.Direction != In && f.Direction != Out {
			return fieldErr("direction", "a one-way partition cuts \"out\" or \"in\", not %q", f.Direction)
		}
		if f.Shape == MajoritiesRing || f.Shape == Bridge {
			return fieldErr("oneway", "a %s partition has no first side to cut one way", f.Shape)
		}
	} else if f.Direction != "" {
		return fieldErr("direction", "a partition cuts both ways unless oneway = true")
	}
	return nil
}

func joinShapes() string {
	s := make([]string, len(Shapes))
	for i, x := range Shapes {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}

// GST returns the global stabilisation time of the faults: the At of their
// timely fault, if any.
func GST(faults []Fault) (time.Duration, bool) {
	for _, f := range faults {
		if f.Kind == Timely {
			return f.At, true
		}
	}
	return 0, false
}

// CheckSet validates what concerns the faults together: a scenario has at
// most one timely fault, since it has one global stabilisation time. It
// returns the index of the offending fault and a *FieldError.
func CheckSet(faults []Fault) (int, error) {
	seen := -1
	for i, f := range faults {
		if f.Kind != Timely {
			continue
		}
		if seen >= 0 {
			return i, fieldErr("kind", "a second timely fault (faults[%d] is one): a run has one global stabilisation time", seen)
		}
		seen = i
	}
	return 0, nil
}

func (f *Fault) checkDisk() error {
	if f.DiskMode == "" {
		return fieldErr("mode", "missing: say what the disk does (corrupt, full, slow, eio)")
	}
	if !slices.Contains(DiskModes, f.DiskMode) {
		return fieldErr("mode", "unknown disk mode %q (known: corrupt, full, slow, eio)", f.DiskMode)
	}
	if f.Files != "" {
		if _, err := path.Match(strings.TrimSuffix(f.Files, "/**"), ""); err != nil {
			return fieldErr("files", "bad glob %q: %v", f.Files, err)
		}
	}
	only := func(key string, mode DiskMode, set bool) error {
		if set && f.DiskMode != mode {
			return fieldErr(key, "a parameter of mode = %q, not %q", mode, f.DiskMode)
		}
		return nil
	}
	for _, c := range []struct {
		key  string
		mode DiskMode
		set  bool
	}{{"bits", DiskCorrupt, f.Bits != 0}, {"zero", DiskCorrupt, f.Zero != 0}, {"truncate", DiskCorrupt, f.Truncate != 0},
		{"delay", DiskSlow, f.Delay != 0}, {"ops", DiskEIO, f.Ops != ""}} {
		if err := only(c.key, c.mode, c.set); err != nil {
			return err
		}
	}
	if f.Files != "" && f.DiskMode != DiskCorrupt && f.DiskMode != DiskEIO {
		return fieldErr("files", "a %s disk is the whole disk's: files are for corrupt and eio", f.DiskMode)
	}
	switch f.DiskMode {
	case DiskCorrupt:
		if f.Bits < 0 || f.Zero < 0 || f.Truncate < 0 {
			return fieldErr("bits", "bits, zero and truncate count bits and bytes: none may be negative")
		}
		set := 0
		for _, on := range []bool{f.Bits > 0, f.Zero > 0, f.Truncate > 0} {
			if on {
				set++
			}
		}
		if set != 1 {
			return fieldErr("bits", "a corrupt disk fault takes exactly one of bits (how many bits to flip), zero (how many bytes to zero) or truncate (how many bytes to cut off each file's end)")
		}
		if f.Bits > 1<<20 {
			return fieldErr("bits", "%d bits: at most %d", f.Bits, 1<<20)
		}
	case DiskSlow:
		if f.Delay <= 0 {
			return fieldErr("delay", "a slow disk needs delay, how long each write and each sync waits")
		}
	case DiskEIO:
		if f.Ops == "" {
			f.Ops = "both"
		}
		if !slices.Contains(eioOps, f.Ops) {
			return fieldErr("ops", "unknown operations %q (known: read, write, both)", f.Ops)
		}
	}
	return nil
}
