package scenario

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/nodes"
)

// Explore is the [explore] table: the vocabulary `coup explore` draws
// fault schedules from, instead of (or besides) the schedule [[faults]]
// spells out. Every key is optional; Vocabulary fills in what the table
// leaves out, by the scenario's kind (docs/explore.md).
type Explore struct {
	// Kinds are the faults a schedule may hold (crash, restart, replace,
	// pause, clock, partition, loss, delay, duplicate, corrupt,
	// bandwidth, joker, disk). With disk, a drawn disk fault corrupts, fills, slows (real
	// servers only) or fails the disk, and a drawn crash is a power
	// failure (lose-unsynced or torn) half the time.
	Kinds []string `toml:"kinds"`
	// Targets are what a fault may hit: picks (leader, follower, one,
	// random, minority, majority, all, holder) or node names.
	Targets []string `toml:"targets"`
	// Shapes are the partitions' shapes (isolate, halves,
	// majorities-ring, bridge, ring-cut).
	Shapes []string `toml:"shapes"`
	// Cuts are how a real server's partition may cut its streams (stall,
	// refuse). Server scenarios only.
	Cuts []string `toml:"cuts"`
	// Triggers are what may start a fault: "time" (a time in the run),
	// "leader" (a node's belief in a leader changes), "participant" (a
	// node joins an election), "acquire" (the lock is granted), "release"
	// (it is released), "start" (a node process comes up, after a
	// restart), "crash" (a node process is killed), "in-flight" (a time
	// at which a client's operation was under way in an earlier run) and
	// "message" (a time at which a message reached a node in an earlier
	// run; protocol nodes only).
	Triggers []string `toml:"triggers"`
	// MaxFaults is the most faults a schedule holds, and so the most in
	// force at once (each fault occurs once).
	MaxFaults int `toml:"max_faults"`
	// At bounds when a fault starts, or its trigger is armed: [from, to].
	At []Duration `toml:"at"`
	// For bounds how long a fault lasts: [shortest, longest].
	For []Duration `toml:"for"`
	// Probability bounds a loss's, duplication's or corruption's
	// probability: [lowest, highest].
	Probability []float64 `toml:"probability"`
	// Delay bounds a delay fault's delay: [shortest, longest]; its jitter
	// is drawn up to the same bound.
	Delay []Duration `toml:"delay"`
	// Rate bounds a clock fault's rate: [slowest, fastest].
	Rate []float64 `toml:"rate"`
	// Bandwidth bounds a bandwidth fault's rate, in bytes a second:
	// [lowest, highest]. It is drawn on a log scale, with no burst.
	Bandwidth []float64 `toml:"bandwidth"`
	// Offset bounds a clock fault's jump, ahead or back: [smallest,
	// largest]. Real processes only (servers, a node program of one's
	// own): the simulator's clocks only run fast or slow.
	Offset []Duration `toml:"offset"`
}

// Trigger names what may start an explored fault.
type Trigger string

// The triggers of the vocabulary.
const (
	TriggerTime        Trigger = "time"
	TriggerLeader      Trigger = "leader"
	TriggerParticipant Trigger = "participant"
	TriggerAcquire     Trigger = "acquire"
	TriggerRelease     Trigger = "release"
	TriggerStart       Trigger = "start"
	TriggerCrash       Trigger = "crash"
	TriggerInFlight    Trigger = "in-flight"
	TriggerMessage     Trigger = "message"
)

// Triggers lists the vocabulary's triggers.
var Triggers = []Trigger{TriggerTime, TriggerLeader, TriggerParticipant, TriggerAcquire, TriggerRelease, TriggerStart, TriggerCrash, TriggerInFlight, TriggerMessage}

// When is the trigger of a fault that t starts, nil for a time (and for
// in-flight and message, which are times too: ones taken from an earlier
// run).
func (t Trigger) When() *When {
	switch t {
	case TriggerLeader:
		return &When{Report: "leader"}
	case TriggerParticipant:
		return &When{Report: "participant", Value: "true"}
	case TriggerAcquire:
		return &When{Op: "acquire"}
	case TriggerRelease:
		return &When{Op: "release"}
	case TriggerStart:
		return &When{Process: "start"}
	case TriggerCrash:
		return &When{Process: "crash"}
	}
	return nil
}

// exploreKinds are the faults a vocabulary may name: a timely fault has
// one time (the GST), not a schedule, and a resume only undoes a pause.
var exploreKinds = []nemesis.Kind{nemesis.Crash, nemesis.Restart, nemesis.Replace, nemesis.Pause, nemesis.Clock,
	nemesis.Partition, nemesis.Loss, nemesis.Delay, nemesis.Duplicate, nemesis.Corrupt, nemesis.Bandwidth, nemesis.Joker, nemesis.Disk}

// defaultOffset bounds the clock jumps explored on real processes: from
// a second, past a typical election timeout, to half a minute, past a
// typical lease or session.
var defaultOffset = [2]time.Duration{time.Second, 30 * time.Second}

// defaultBandwidth bounds the bandwidth faults explored, in bytes a
// second: from a link a heartbeat still crosses to one a replica's stream
// fills.
var defaultBandwidth = [2]float64{1e4, 1e6}

// DefaultMaxFaults is [explore] max_faults's default.
const DefaultMaxFaults = 3

// MaxExploreFaults bounds max_faults.
const MaxExploreFaults = 32

// Vocabulary is the [explore] table with its defaults filled in: what a
// schedule of `coup explore` may hold.
type Vocabulary struct {
	Kinds     []nemesis.Kind
	Targets   []string
	Shapes    []nemesis.Shape
	Cuts      []nemesis.CutKind
	Triggers  []Trigger
	MaxFaults int
	// At, For and Delay are [min, max]; Probability, Rate and Bandwidth
	// too.
	At, For, Delay               [2]time.Duration
	Probability, Rate, Bandwidth [2]float64
	// Offset bounds a clock fault's jump (its size; ahead or back is
	// drawn); zero when the scenario's clocks cannot jump.
	Offset [2]time.Duration
}

// Vocabulary is the scenario's vocabulary for `coup explore`: its
// [explore] table, or, for what the table leaves out (or when it has
// none), the defaults of the scenario's kind. The table was validated
// with the scenario.
func (s *Scenario) Vocabulary() Vocabulary {
	e := s.Explore
	if e == nil {
		e = &Explore{}
	}
	v := s.defaultVocabulary()
	if e.Kinds != nil {
		v.Kinds = typed[nemesis.Kind](e.Kinds)
	}
	if e.Targets != nil {
		v.Targets = slices.Clone(e.Targets)
	}
	if e.Shapes != nil {
		v.Shapes = typed[nemesis.Shape](e.Shapes)
	}
	if e.Cuts != nil {
		v.Cuts = typed[nemesis.CutKind](e.Cuts)
	}
	if e.Triggers != nil {
		v.Triggers = typed[Trigger](e.Triggers)
	}
	if e.MaxFaults != 0 {
		v.MaxFaults = e.MaxFaults
	}
	if len(e.At) == 2 {
		v.At = [2]time.Duration{e.At[0].D, e.At[1].D}
	}
	if len(e.For) == 2 {
		v.For = [2]time.Duration{e.For[0].D, e.For[1].D}
	}
	if len(e.Delay) == 2 {
		v.Delay = [2]time.Duration{e.Delay[0].D, e.Delay[1].D}
	}
	if len(e.Probability) == 2 {
		v.Probability = [2]float64{e.Probability[0], e.Probability[1]}
	}
	if len(e.Rate) == 2 {
		v.Rate = [2]float64{e.Rate[0], e.Rate[1]}
	}
	if len(e.Bandwidth) == 2 {
		v.Bandwidth = [2]float64{e.Bandwidth[0], e.Bandwidth[1]}
	}
	if len(e.Offset) == 2 {
		v.Offset = [2]time.Duration{e.Offset[0].D, e.Offset[1].D}
	}
	// What a kind cannot take is left out of the defaults, whatever the
	// table says of the kinds: a holder only for a pause.
	if !s.holderPossible() {
		v.Targets = slices.DeleteFunc(v.Targets, func(t string) bool { return t == string(nemesis.Holder) })
	}
	return v
}

// defaultVocabulary is the vocabulary of a scenario whose [explore] table
// says nothing: a real server's preset takes partitions (stalled or
// refused), pauses and crashes; a built-in algorithm its process faults,
// partitions, loss, delay and clock rates; real processes (a server's, a
// node program of one's own) clock jumps too. Every scenario may be hit at a time or
// at a change of leader; a built-in election also when a node joins an
// election, a lock when it is granted or released, a workload with
// clients while an operation is under way, and protocol nodes as a
// message reaches one.
func (s *Scenario) defaultVocabulary() Vocabulary {
	d := s.Duration.D
	v := Vocabulary{
		Targets:     []string{string(nemesis.Leader), string(nemesis.Follower), string(nemesis.One), string(nemesis.Minority)},
		Shapes:      []nemesis.Shape{nemesis.Isolate, nemesis.Halves},
		Triggers:    []Trigger{TriggerTime, TriggerLeader},
		MaxFaults:   DefaultMaxFaults,
		At:          [2]time.Duration{0, d},
		For:         [2]time.Duration{max(d/50, time.Millisecond), max(d/2, time.Millisecond)},
		Delay:       [2]time.Duration{max(s.Network.Latency.D, time.Millisecond), max(20*s.Network.Latency.D, 20*time.Millisecond)},
		Probability: [2]float64{0.1, 1},
		Rate:        [2]float64{0.5, 2},
		Bandwidth:   defaultBandwidth,
	}
	switch {
	case s.Server != nil:
		v.Kinds = []nemesis.Kind{nemesis.Partition, nemesis.Pause, nemesis.Crash, nemesis.Clock}
		v.Cuts = []nemesis.CutKind{nemesis.Stall, nemesis.Refuse}
		v.Offset = defaultOffset
	case s.StateMachine():
		v.Kinds = []nemesis.Kind{nemesis.Crash, nemesis.Replace, nemesis.Pause, nemesis.Partition, nemesis.Loss, nemesis.Delay, nemesis.Clock}
		if s.Kind() == nodes.KindElection {
			v.Triggers = append(v.Triggers, TriggerParticipant)
		}
	default:
		v.Kinds = []nemesis.Kind{nemesis.Crash, nemesis.Replace, nemesis.Pause, nemesis.Partition, nemesis.Loss, nemesis.Delay, nemesis.Clock}
		v.Offset = defaultOffset
	}
	if s.Workload.Kind == WorkloadMutex {
		v.Triggers = append(v.Triggers, TriggerAcquire, TriggerRelease)
		if s.holderPossible() {
			v.Targets = append(v.Targets, string(nemesis.Holder))
		}
	}
	if s.hasClients() {
		v.Triggers = append(v.Triggers, TriggerInFlight)
	}
	if s.Server == nil && s.RecordMessages() {
		v.Triggers = append(v.Triggers, TriggerMessage)
	}
	return v
}

// hasClients reports whether the workload has clients whose operations
// may be in flight.
func (s *Scenario) hasClients() bool {
	switch s.Workload.Kind {
	case WorkloadMutex, WorkloadLinKV, WorkloadSet, WorkloadEcho:
		return s.Server == nil || s.Server.Client != "" || len(s.Server.Adapter) > 0
	}
	return false
}

// holderPossible reports whether a pause may target the lock's holder.
func (s *Scenario) holderPossible() bool {
	return s.Server != nil && s.Server.ClientsAreProcesses() && s.Workload.Kind == WorkloadMutex
}

func typed[T ~string](xs []string) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = T(x)
	}
	return out
}

// validateExplore checks the [explore] table: every name known and
// possible for this scenario, every bound a pair in order.
func (s *Scenario) validateExplore() error {
	e := s.Explore
	if e == nil {
		return nil
	}
	for _, k := range e.Kinds {
		kind := nemesis.Kind(k)
		switch {
		case kind == nemesis.Timely || kind == nemesis.Resume:
			return s.errorf("explore.kinds", "%s cannot be explored: a timely fault has one time, the GST, and a resume only ends a pause (explore: %s)", k, names(exploreKinds))
		case !slices.Contains(exploreKinds, kind):
			return s.errorf("explore.kinds", "%s", unknownMsg("fault", k, names(exploreKinds)))
		case kind == nemesis.Disk && s.Server == nil && !s.machine:
			return s.errorf("explore.kinds", "disk faults (and the power failures they bring with them) need a disk that knows what was synced: real servers ([server]) or a Machine of the Go library")
		case kind == nemesis.Disk && s.Server != nil && s.Server.Disk == DiskDirect:
			return s.errorf("explore.kinds", "disk faults need the data folders on coup's storage layer, and [server] disk = %q keeps them plain", DiskDirect)
		case s.Server != nil && (kind == nemesis.Duplicate || kind == nemesis.Joker):
			return s.errorf("explore.kinds", "%s has no meaning for real servers' byte streams (they take crash, restart, replace, pause, clock, partition, loss, delay, corrupt and bandwidth)", k)
		}
	}
	if e.Kinds != nil && len(e.Kinds) == 0 {
		return s.errorf("explore.kinds", "empty: name the faults to explore, or leave the key out for the scenario's defaults")
	}
	for _, t := range e.Targets {
		pick := nemesis.Pick(t)
		switch {
		case slices.Contains(nemesis.Picks, pick):
			if pick == nemesis.Holder && !s.holderPossible() {
				return s.errorf("explore.targets", "\"holder\" is the client that holds the lock: it needs a mutex workload whose clients run as processes of their own (a real server's client_processes, or an adapter)")
			}
		case !slices.Contains(s.NodeNames(), t):
			return s.errorf("explore.targets", "%q is neither a pick (%s) nor a node: this scenario has %s%s", t, joinQuoted(names(nemesis.Picks)), s.nodeRange(), s.suggestNode(t, names(nemesis.Picks)))
		}
	}
	if e.Targets != nil && len(e.Targets) == 0 {
		return s.errorf("explore.targets", "empty: name picks or nodes, or leave the key out for the defaults")
	}
	for _, sh := range e.Shapes {
		shape := nemesis.Shape(sh)
		if shape == nemesis.Groups || !slices.Contains(nemesis.Shapes, shape) {
			known := slices.DeleteFunc(names(nemesis.Shapes), func(x string) bool { return x == string(nemesis.Groups) })
			return s.errorf("explore.shapes", "%s", unknownMsg("shape", sh, known))
		}
	}
	if len(e.Cuts) > 0 && s.Server == nil {
		return s.errorf("explore.cuts", "only real servers' streams are cut one way or another ([server]); a protocol node's cut message is dropped")
	}
	for _, c := range e.Cuts {
		if !slices.Contains(nemesis.CutKinds, nemesis.CutKind(c)) {
			return s.errorf("explore.cuts", "%s", unknownMsg("cut", c, names(nemesis.CutKinds)))
		}
	}
	for _, t := range e.Triggers {
		tr := Trigger(t)
		switch {
		case !slices.Contains(Triggers, tr):
			return s.errorf("explore.triggers", "%s", unknownMsg("trigger", t, names(Triggers)))
		case (tr == TriggerAcquire || tr == TriggerRelease) && s.Workload.Kind != WorkloadMutex:
			return s.errorf("explore.triggers", "%q watches the lock: it needs a mutex workload, not %q", t, s.Workload.Kind)
		case tr == TriggerInFlight && !s.hasClients():
			return s.errorf("explore.triggers", "\"in-flight\" aims at client operations under way: this scenario's workload (%q) has no clients", s.Workload.Kind)
		case tr == TriggerMessage && s.Server != nil:
			return s.errorf("explore.triggers", "\"message\" aims at messages between protocol nodes: real servers' byte streams have none")
		case tr == TriggerMessage && !s.RecordMessages():
			return s.errorf("explore.triggers", "\"message\" aims at the messages a history records: set [history] messages = true, or leave it out")
		}
	}
	if e.Triggers != nil && len(e.Triggers) == 0 {
		return s.errorf("explore.triggers", "empty: name at least \"time\", or leave the key out for the defaults")
	}
	if e.MaxFaults < 0 || e.MaxFaults > MaxExploreFaults {
		return s.errorf("explore.max_faults", "must be from 1 to %d, got %d", MaxExploreFaults, e.MaxFaults)
	}
	if err := s.durationRange("explore.at", e.At, false); err != nil {
		return err
	}
	if len(e.At) == 2 && e.At[1].D > s.Duration.D {
		return s.errorf("explore.at", "%s is past the run's duration (%s): faults start within it", e.At[1].D, s.Duration.D)
	}
	if err := s.durationRange("explore.for", e.For, true); err != nil {
		return err
	}
	if err := s.durationRange("explore.delay", e.Delay, true); err != nil {
		return err
	}
	if err := s.floatRange("explore.probability", e.Probability, 0, 1, true); err != nil {
		return err
	}
	if err := s.floatRange("explore.bandwidth", e.Bandwidth, nemesis.MinBandwidth, math.Inf(1), true); err != nil {
		return err
	}
	if err := s.durationRange("explore.offset", e.Offset, true); err != nil {
		return err
	}
	if len(e.Offset) > 0 && s.Server == nil && s.Command == nil {
		return s.errorf("explore.offset", "a clock jump is made to real processes (a server's, or a node program of your own): the built-in nodes' clocks only run fast or slow (rate)")
	}
	return s.floatRange("explore.rate", e.Rate, 0, math.Inf(1), false)
}

// durationRange checks a [min, max] pair of durations.
func (s *Scenario) durationRange(path string, r []Duration, positive bool) error {
	if r == nil {
		return nil
	}
	if len(r) != 2 {
		return s.errorf(path, "want two durations, the least and the most, like [\"10ms\", \"200ms\"]; got %d", len(r))
	}
	for i := range r {
		if err := s.duration(path, &r[i], 0, positive); err != nil {
			return err
		}
	}
	if r[0].D > r[1].D {
		return s.errorf(path, "[%q, %q]: the least is more than the most", r[0].Raw, r[1].Raw)
	}
	return nil
}

// floatRange checks a [min, max] pair of numbers within [lo, hi] (above lo
// when lo is not allowed).
func (s *Scenario) floatRange(path string, r []float64, lo, hi float64, loAllowed bool) error {
	if r == nil {
		return nil
	}
	if len(r) != 2 {
		return s.errorf(path, "want two numbers, the least and the most, like [0.1, 0.9]; got %d", len(r))
	}
	for _, x := range r {
		if math.IsNaN(x) || x > hi || x < lo || (!loAllowed && x == lo) {
			if math.IsInf(hi, 1) {
				return s.errorf(path, "must be more than %g, got %g", lo, x)
			}
			return s.errorf(path, "must be between %g and %g, got %g", lo, hi, x)
		}
	}
	if r[0] > r[1] {
		return s.errorf(path, "[%g, %g]: the least is more than the most", r[0], r[1])
	}
	return nil
}

func joinQuoted(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", x)
	}
	return out
}

// encodeExplore writes the [explore] table as the file wrote it, if it
// has one.
func (s *Scenario) encodeExplore(b *bytes.Buffer) {
	e := s.Explore
	if e == nil {
		return
	}
	b.WriteString("\n[explore]\n")
	kv := func(key string, v any) { fmt.Fprintf(b, "%s = %s\n", key, value(v)) }
	for _, l := range []struct {
		key   string
		names []string
	}{{"kinds", e.Kinds}, {"targets", e.Targets}, {"shapes", e.Shapes}, {"cuts", e.Cuts}, {"triggers", e.Triggers}} {
		if l.names != nil {
			kv(l.key, l.names)
		}
	}
	if e.MaxFaults != 0 {
		kv("max_faults", e.MaxFaults)
	}
	pair := func(key string, lo, hi any) { kv(key, rawTOML("["+value(lo)+", "+value(hi)+"]")) }
	for _, r := range []struct {
		key string
		d   []Duration
	}{{"at", e.At}, {"for", e.For}, {"delay", e.Delay}} {
		if len(r.d) == 2 {
			pair(r.key, r.d[0].D, r.d[1].D)
		}
	}
	for _, r := range []struct {
		key string
		x   []float64
	}{{"probability", e.Probability}, {"rate", e.Rate}, {"bandwidth", e.Bandwidth}} {
		if len(r.x) == 2 {
			pair(r.key, r.x[0], r.x[1])
		}
	}
}
