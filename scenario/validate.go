package scenario

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/algorithms"
)

// Defaults for keys a scenario leaves out.
const (
	DefaultDuration = time.Second
	DefaultRecovery = time.Second
	DefaultLatency  = time.Millisecond
	// DefaultOpTimeout is how long a client waits for an answer before it
	// records the operation as info (indeterminate).
	DefaultOpTimeout = time.Second
	// DefaultRate and DefaultHold are the lock workload's defaults.
	DefaultRate = 100.0
	DefaultHold = 10 * time.Millisecond
	// MaxClients bounds the clients of the mutex, lin-kv, set and echo
	// workloads.
	MaxClients = 1000
	// MaxClientProcesses bounds the clients of a workload whose clients
	// run as processes of their own (a real server's client adapters).
	MaxClientProcesses = 64
	// DefaultKeys and DefaultValues are the lin-kv workload's defaults:
	// few keys, so that operations meet on them, and Maelstrom's five
	// values, so that a cas often finds its from.
	DefaultKeys   = 3
	DefaultValues = 5
	// MaxKeys and MaxValues bound them.
	MaxKeys   = 1 << 20
	MaxValues = 1 << 30
	// MaxNodes bounds the number of node processes of one run; `coup
	// bench` measures a run of this many. Real servers are bounded lower
	// (MaxServers, and the files coup holds for them: limits.go).
	MaxNodes = 1000
)

// validate checks every field in file order and fills in defaults. It
// returns the first problem.
func (s *Scenario) validate() error {
	if s.Server != nil && s.Command != nil {
		return s.errorf("command", "a scenario runs either a node program (command) or real servers ([server]), not both")
	}
	if !s.foreign() {
		if s.Algorithm == "" {
			return s.errorf("algorithm", "missing: name a built-in algorithm (%s) or give a command", strings.Join(algorithms.Names(), ", "))
		}
		if _, ok := algorithms.Lookup(s.Algorithm); !ok {
			return s.errorf("algorithm", "%s", unknownMsg("algorithm", s.Algorithm, algorithms.Names()))
		}
	} else if s.Command != nil && (len(s.Command) == 0 || s.Command[0] == "") {
		return s.errorf("command", "empty: give the program and its arguments, like [\"./mynode\", \"--flag\"]")
	}
	s.resolveCommand()
	if s.DeferStart && s.Command == nil {
		what := "a built-in algorithm always starts on coup's start message"
		if s.Server != nil {
			what = "real servers get no init and no start message"
		}
		return s.errorf("defer_start", "for a node program of your own (command) only: %s", what)
	}
	if s.Nodes < 1 {
		return s.errorf("nodes", "must be at least 1, got %d", s.Nodes)
	}
	if s.Nodes > MaxNodes {
		return s.errorf("nodes", "at most %d, got %d", MaxNodes, s.Nodes)
	}
	if err := s.validateIDs(); err != nil {
		return err
	}
	if s.Server != nil {
		if err := s.validateServer(); err != nil {
			return err
		}
	}
	if err := s.validateElects(); err != nil {
		return err
	}
	if err := s.duration("duration", &s.Duration, DefaultDuration, true); err != nil {
		return err
	}
	if err := s.duration("recovery", &s.Recovery, DefaultRecovery, false); err != nil {
		return err
	}
	if err := s.duration("init_timeout", &s.InitTimeout, 0, true); err != nil {
		return err
	}
	if err := s.validateParams(); err != nil {
		return err
	}
	if err := s.duration("network.latency", &s.Network.Latency, DefaultLatency, false); err != nil {
		return err
	}
	if err := s.duration("network.jitter", &s.Network.Jitter, 0, false); err != nil {
		return err
	}
	if err := s.validateWorkload(); err != nil {
		return err
	}
	if err := s.validateServerCount(); err != nil {
		return err
	}
	s.nemesis = nil
	for i := range s.Faults {
		if err := s.validateFault(i); err != nil {
			return err
		}
	}
	if i, err := nemesis.CheckSet(s.nemesis); err != nil {
		var fe *nemesis.FieldError
		errors.As(err, &fe)
		return s.errorf(fmt.Sprintf("faults[%d].%s", i, fe.Field), "%s", fe.Msg)
	}
	if err := s.validateExplore(); err != nil {
		return err
	}
	if err := s.validateChecks(); err != nil {
		return err
	}
	if m := s.History.MaxMessages; m != nil && *m < 1 {
		return s.errorf("history.max_messages", "must be at least 1, got %d (to record no message, set history.messages = false)", *m)
	}
	return s.validateExpect()
}

// duration checks a duration field and fills in its default.
func (s *Scenario) duration(path string, d *Duration, def time.Duration, positive bool) error {
	if !d.Set {
		d.D = def
		return nil
	}
	if d.err != nil {
		switch d.err.Error() {
		case "negative":
			return s.errorf(path, "negative duration %q", d.Raw)
		case "too long":
			return s.errorf(path, "duration %q is longer than the %s a scenario may give", d.Raw, MaxDuration)
		}
		return s.errorf(path, "bad duration %q: write a number with a unit, like \"150ms\" or \"2s\"", d.Raw)
	}
	if positive && d.D <= 0 {
		return s.errorf(path, "must be more than zero, got %q", d.Raw)
	}
	return nil
}

func (s *Scenario) validateIDs() error {
	if s.IDs == nil {
		s.IDs = make([]int, s.Nodes)
		for i := range s.IDs {
			s.IDs[i] = i + 1
		}
		return nil
	}
	if len(s.IDs) != s.Nodes {
		return s.errorf("ids", "%d ids for %d nodes: give one per node, in ring order", len(s.IDs), s.Nodes)
	}
	seen := map[int]int{}
	for i, id := range s.IDs {
		if j, ok := seen[id]; ok {
			return s.errorf("ids", "id %d is given twice (to %s and %s): ids must be distinct", id, NodeName(j), NodeName(i))
		}
		seen[id] = i
	}
	return nil
}

func (s *Scenario) validateParams() error {
	if s.foreign() {
		return nil // a foreign node, a real server, or the caller's machine, validates its own
	}
	spec, _ := algorithms.Lookup(s.Algorithm)
	if _, err := spec.New(nodes.NewParams(s.Params)); err != nil {
		var pe *nodes.ParamError
		if errors.As(err, &pe) {
			return s.errorf("params."+pe.Key, "%s", pe.Err)
		}
		return s.errorf("params", "%v", err)
	}
	return nil
}

// node checks that name is one of the scenario's nodes.
func (s *Scenario) node(path, name string) error {
	for _, n := range s.NodeNames() {
		if n == name {
			return nil
		}
	}
	return s.errorf(path, "%q names no node: this scenario has %s%s", name, s.nodeRange(), s.suggestNode(name, nil))
}

// suggestNode is a did-you-mean for a name that is no node, among the
// node names and extra words: "N2" may mean n2, but "n9" in a scenario of
// five nodes is no misspelling.
func (s *Scenario) suggestNode(name string, extra []string) string {
	known := append(slices.Clone(extra), s.NodeNames()...)
	if nodeLike.MatchString(name) {
		known = extra
	}
	return DidYouMean(name, known)
}

var nodeLike = regexp.MustCompile(`^n[0-9]+$`)

// clientName is the name of a client (c1, c2, …), which expect.exits may
// name for a client's own process.
var clientName = regexp.MustCompile(`^c[1-9][0-9]*$`)

func (s *Scenario) nodeRange() string {
	if s.Nodes == 1 {
		return "only n1"
	}
	return fmt.Sprintf("n1 to %s", NodeName(s.Nodes-1))
}

// Kind is the problem the scenario's nodes solve: nodes.KindMutex or
// nodes.KindElection for a built-in algorithm, by the algorithm. A foreign
// node's is told by its workload: nodes.KindMutex, nodes.KindLinKV,
// nodes.KindSet or nodes.KindEcho for those workloads, else
// nodes.KindElection.
func (s *Scenario) Kind() string {
	if !s.foreign() {
		if spec, ok := algorithms.Lookup(s.Algorithm); ok && spec.IsMutex() {
			return nodes.KindMutex
		}
		return nodes.KindElection
	}
	switch s.Workload.Kind {
	case WorkloadMutex:
		return nodes.KindMutex
	case WorkloadLinKV:
		return nodes.KindLinKV
	case WorkloadSet:
		return nodes.KindSet
	case WorkloadEcho:
		return nodes.KindEcho
	}
	return nodes.KindElection
}

// The workload kinds.
const (
	WorkloadElection = "election"
	WorkloadMutex    = "mutex"
	WorkloadLinKV    = "lin-kv"
	WorkloadSet      = "set"
	WorkloadEcho     = "echo"
	WorkloadNone     = "none"
)

var workloadKinds = []string{WorkloadElection, WorkloadMutex, WorkloadLinKV, WorkloadSet, WorkloadEcho, WorkloadNone}

// The final reads' readers, besides a client's name.
const (
	FinalReadsAll  = "all"
	FinalReadsNone = "none"
)

// Workload keys that only some kinds take.
var workloadKeys = []struct {
	key   string
	kinds []string
	set   func(w *Workload) bool
}{
	{"initiators", []string{WorkloadElection}, func(w *Workload) bool { return len(w.Initiators) > 0 }},
	{"clients", []string{WorkloadMutex, WorkloadLinKV, WorkloadSet, WorkloadEcho}, func(w *Workload) bool { return w.Clients != 0 }},
	{"targets", []string{WorkloadMutex, WorkloadLinKV, WorkloadSet, WorkloadEcho}, func(w *Workload) bool { return w.Targets != nil }},
	{"on", []string{WorkloadMutex, WorkloadLinKV, WorkloadSet, WorkloadEcho}, func(w *Workload) bool { return w.On.Set }},
	{"rate", []string{WorkloadMutex, WorkloadLinKV, WorkloadSet, WorkloadEcho}, func(w *Workload) bool { return w.Rate != 0 }},
	{"hold", []string{WorkloadMutex}, func(w *Workload) bool { return w.Hold.Set }},
	{"keys", []string{WorkloadLinKV}, func(w *Workload) bool { return w.Keys != 0 }},
	{"values", []string{WorkloadLinKV}, func(w *Workload) bool { return w.Values != 0 }},
	{"mix", []string{WorkloadLinKV}, func(w *Workload) bool { return w.Mix != nil }},
	{"final_reads", []string{WorkloadLinKV, WorkloadSet}, func(w *Workload) bool { return w.FinalReads != "" }},
	{"final_after", []string{WorkloadLinKV, WorkloadSet}, func(w *Workload) bool { return w.FinalAfter.Set }},
}

func (s *Scenario) validateWorkload() error {
	w := &s.Workload
	switch w.Kind {
	case "":
		w.Kind = WorkloadElection
		if s.Kind() == nodes.KindMutex {
			w.Kind = WorkloadMutex
		}
	case WorkloadElection, WorkloadMutex, WorkloadNone:
	case WorkloadLinKV, WorkloadSet, WorkloadEcho:
		if !s.foreign() {
			return s.errorf("workload.kind", "%q is served by a node program of your own (command): no built-in algorithm serves it", w.Kind)
		}
	default:
		return s.errorf("workload.kind", "%s", unknownMsg("workload", w.Kind, workloadKinds))
	}
	if err := s.duration("workload.at", &w.At, 0, false); err != nil {
		return err
	}
	if w.At.D >= s.Duration.D {
		return s.errorf("workload.at", "%s is not within the run's duration (%s)", w.At.D, s.Duration.D)
	}
	if err := s.duration("workload.timeout", &w.Timeout, DefaultOpTimeout, true); err != nil {
		return err
	}
	for _, k := range workloadKeys {
		if k.set(w) && !slices.Contains(k.kinds, w.Kind) {
			return s.errorf("workload."+k.key, "only for kind = %s (this workload is %q)", orQuoted(k.kinds), w.Kind)
		}
	}
	switch w.Kind {
	case WorkloadMutex:
		if err := s.validateClients(); err != nil {
			return err
		}
		return s.duration("workload.hold", &w.Hold, DefaultHold, false)
	case WorkloadLinKV:
		if err := s.validateClients(); err != nil {
			return err
		}
		if err := s.validateKV(); err != nil {
			return err
		}
		return s.validateFinal()
	case WorkloadSet:
		if err := s.validateClients(); err != nil {
			return err
		}
		return s.validateFinal()
	case WorkloadEcho:
		return s.validateClients()
	case WorkloadElection:
		if len(w.Initiators) == 0 {
			w.Initiators = []string{NodeName(0)}
		}
		if len(w.Initiators) == 1 && w.Initiators[0] == "all" {
			w.Initiators = s.NodeNames()
			return nil
		}
		for _, n := range w.Initiators {
			if err := s.node("workload.initiators", n); err != nil {
				return err
			}
		}
	}
	return nil
}

// orQuoted writes kinds as `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
func orQuoted(kinds []string) string {
	q := make([]string, len(kinds))
	for i, k := range kinds {
		q[i] = fmt.Sprintf("%q", k)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// validateClients checks the keys of a workload with clients bound to
// nodes (mutex, lin-kv, echo) and fills in their defaults.
func (s *Scenario) validateClients() error {
	w := &s.Workload
	switch {
	case w.Clients == 0:
		w.Clients = s.Nodes
	case w.Clients < 0 || w.Clients > MaxClients:
		return s.errorf("workload.clients", "must be from 1 to %d, got %d", MaxClients, w.Clients)
	case s.Server != nil && s.Server.ClientsAreProcesses() && w.Clients > MaxClientProcesses:
		return s.errorf("workload.clients", "%d clients, each a process of its own (client_processes or adapter): at most %d", w.Clients, MaxClientProcesses)
	}
	if w.Targets == nil {
		w.Targets = s.NodeNames()
	}
	if len(w.Targets) == 0 {
		return s.errorf("workload.targets", "empty: name the nodes the clients talk to, or leave it out for every node")
	}
	for _, n := range w.Targets {
		if err := s.node("workload.targets", n); err != nil {
			return err
		}
	}
	switch {
	case w.Rate == 0:
		w.Rate = DefaultRate
	case w.Rate < 0 || math.IsNaN(w.Rate) || math.IsInf(w.Rate, 0):
		return s.errorf("workload.rate", "must be a positive number of %s per second, got %v", rateUnit(w.Kind), w.Rate)
	}
	return s.validateClientHosts()
}

func rateUnit(kind string) string {
	switch kind {
	case WorkloadMutex:
		return "acquires"
	case WorkloadEcho:
		return "echoes"
	}
	return "operations"
}

// validateKV checks the lin-kv workload's own keys and fills in their
// defaults.
func (s *Scenario) validateKV() error {
	w := &s.Workload
	switch {
	case w.Keys == 0:
		w.Keys = DefaultKeys
	case w.Keys < 0 || w.Keys > MaxKeys:
		return s.errorf("workload.keys", "must be from 1 to %d, got %d", MaxKeys, w.Keys)
	}
	switch {
	case w.Values == 0:
		w.Values = DefaultValues
	case w.Values < 0 || w.Values > MaxValues:
		return s.errorf("workload.values", "must be from 1 to %d, got %d", MaxValues, w.Values)
	}
	if w.Mix == nil {
		return nil
	}
	for _, m := range []struct {
		key string
		v   float64
	}{{"read", w.Mix.Read}, {"write", w.Mix.Write}, {"cas", w.Mix.Cas}} {
		if m.v < 0 || math.IsNaN(m.v) || math.IsInf(m.v, 0) {
			return s.errorf("workload.mix."+m.key, "a weight must be a number, 0 or more, got %v", m.v)
		}
	}
	if w.Mix.Read+w.Mix.Write+w.Mix.Cas == 0 {
		return s.errorf("workload.mix", "every weight is 0: give read, write or cas a positive weight")
	}
	if w.Mix.Write+w.Mix.Cas == 0 {
		return s.errorf("workload.mix", "only reads: nothing would ever be written, so there would be nothing to judge; give write or cas a weight")
	}
	return nil
}

// validateFinal checks the final reads of a set or lin-kv workload and
// fills in their defaults.
func (s *Scenario) validateFinal() error {
	w := &s.Workload
	switch {
	case w.FinalReads == "" && (w.Kind == WorkloadSet || slices.Contains(s.Checks.Run, "lost-writes")):
		w.FinalReads = FinalReadsAll
	case w.FinalReads == "":
		w.FinalReads = FinalReadsNone
	case w.FinalReads == FinalReadsAll, w.FinalReads == FinalReadsNone:
	default:
		var i int
		if _, err := fmt.Sscanf(w.FinalReads, "c%d", &i); err != nil || fmt.Sprintf("c%d", i) != w.FinalReads {
			return s.errorf("workload.final_reads", "%q: say \"all\" (every client), \"none\", or one client, \"c1\" to \"c%d\"", w.FinalReads, w.Clients)
		}
		if i < 1 || i > w.Clients {
			return s.errorf("workload.final_reads", "%q names no client: this workload has c1 to c%d", w.FinalReads, w.Clients)
		}
	}
	if err := s.duration("workload.final_after", &w.FinalAfter, s.Recovery.D/2, false); err != nil {
		return err
	}
	if w.FinalReads != FinalReadsNone && w.FinalAfter.D >= s.Recovery.D {
		if !w.FinalAfter.Set {
			return s.errorf("recovery", "%s: the final reads (final_reads = %q) come after the heal, in the recovery window: give it time for them", s.Recovery.D, w.FinalReads)
		}
		return s.errorf("workload.final_after", "%s is not within the recovery window (%s): the final reads would never be made", w.FinalAfter.D, s.Recovery.D)
	}
	return nil
}

// FinalReaders are the clients that make the final reads: nil for every
// client, none when there are no final reads (FinalReads "none").
func (w *Workload) FinalReaders() (readers []string, any bool) {
	switch w.FinalReads {
	case "", FinalReadsNone:
		return nil, false
	case FinalReadsAll:
		return nil, true
	}
	return []string{w.FinalReads}, true
}

func (s *Scenario) validateFault(i int) error {
	f := &s.Faults[i]
	at := fmt.Sprintf("faults[%d]", i)
	if f.Kind == "" {
		return s.errorf(at+".kind", "missing: say which fault (%s)", kindNames())
	}
	kind := nemesis.Kind(f.Kind)
	if !slices.Contains(nemesis.Kinds, kind) {
		return s.errorf(at+".kind", "%s", unknownMsg("fault", f.Kind, kindList()))
	}
	if s.Server != nil {
		switch {
		case kind == nemesis.Duplicate && s.Server.Network == NetworkNamespaces:
			// coup's network duplicates packets (TCP drops the copies,
			// a datagram arrives twice).
		case kind == nemesis.Duplicate, kind == nemesis.Joker, kind == nemesis.Timely:
			return s.errorf(at+".kind", "%s has no meaning for real servers' byte streams (they take crash, restart, replace, pause, resume, clock, disk, partition, loss, delay, corrupt and bandwidth)", kind)
		}
	}
	if f.Offset.Set && f.Offset.err != nil && f.Offset.err.Error() == "negative" {
		// An offset may be negative: a jump back.
		f.Offset.err = nil
		if f.Offset.D < -MaxDuration {
			return s.errorf(at+".offset", "duration %q is longer than the %s a scenario may give", f.Offset.Raw, MaxDuration)
		}
	}
	if err := s.duration(at+".offset", &f.Offset, 0, false); err != nil {
		return err
	}
	for _, d := range []struct {
		key string
		d   *Duration
	}{{"at", &f.At}, {"for", &f.For}, {"every", &f.Every}, {"delay", &f.Delay}, {"jitter", &f.Jitter}, {"delta", &f.Delta}} {
		if err := s.duration(at+"."+d.key, d.d, 0, false); err != nil {
			return err
		}
	}
	if f.Target.err != "" {
		return s.errorf(at+".target", "%s", f.Target.err)
	}
	params := nemesis.Params(kind)
	for _, key := range f.written() {
		if !slices.Contains(params, key) {
			takes := "none"
			if len(params) > 0 {
				takes = strings.Join(params, ", ")
			}
			return s.errorf(at+"."+key, "not a parameter of a %s fault (its own: %s)", kind, takes)
		}
	}
	if f.Cut != "" && s.Server == nil {
		return s.errorf(at+".cut", "only real servers' streams are cut one way or another ([server]); a protocol node's cut message is dropped")
	}
	nf, err := f.convert()
	if err != nil {
		return s.errorf(at+".target", "%v", err)
	}
	if nf.Target.Pick == nemesis.Holder {
		switch {
		case s.Server == nil || !s.Server.ClientsAreProcesses():
			return s.errorf(at+".target", "\"holder\" pauses the client that holds the lock, which needs clients that run as processes of their own: a real server's client with [server] client_processes = true, or an adapter")
		case s.Workload.Kind != WorkloadMutex:
			return s.errorf(at+".target", "\"holder\" is the client that holds the lock: it needs a mutex workload, not %q", s.Workload.Kind)
		}
	}
	if nf.Kind == nemesis.Partition && nf.Cut == "" && s.Server != nil {
		nf.Cut = nemesis.Stall
	}
	if err := nf.Check(s.NodeNames(), s.Duration.D); err != nil {
		var fe *nemesis.FieldError
		if errors.As(err, &fe) {
			return s.errorf(at+"."+fe.Field, "%s%s", fe.Msg, s.faultSuggestion(f, fe.Field))
		}
		return s.errorf(at, "%v", err)
	}
	if nf.OnDisk() {
		if err := s.diskFor(at, &nf); err != nil {
			return err
		}
	}
	s.nemesis = append(s.nemesis, nf)
	return nil
}

// diskFor refuses a power failure or a disk fault where the nodes have no
// disk coup knows: real servers' data folders go through coup's storage
// layer ([server] disk = "fuse", the default where a fault needs it), a
// Machine of the Go library persists through its Storage; built-in
// algorithms and foreign nodes under the pipe driver keep no state coup
// sees.
func (s *Scenario) diskFor(at string, nf *nemesis.Fault) error {
	key := at + ".disk"
	if nf.Kind == nemesis.Disk {
		key = at + ".kind"
	}
	switch {
	case s.Server != nil && s.Server.Disk == DiskDirect:
		return s.errorf(key, "a %s needs the data folders mounted through coup's storage layer, and [server] disk = %q keeps them plain: leave disk out, or set it to %q",
			storageFault(nf), DiskDirect, DiskFUSE)
	case s.machine && nf.DiskMode == nemesis.DiskSlow:
		return s.errorf(at+".mode", "a slow disk needs real time, and the simulator's Storage syncs at once on its virtual clock: slow is for real servers")
	case s.Server != nil, s.machine:
		return nil
	}
	return s.errorf(key, "a %s needs a disk that knows what was synced: real servers ([server], their data folders through coup's storage layer) or a Machine of the Go library (its Storage); these nodes keep no state coup sees",
		storageFault(nf))
}

func storageFault(nf *nemesis.Fault) string {
	if nf.Kind == nemesis.Crash {
		return "power failure (disk = \"" + string(nf.PowerFail) + "\")"
	}
	return "disk fault"
}

func kindNames() string { return strings.Join(kindList(), ", ") }

func kindList() []string { return names(nemesis.Kinds) }

// names converts a list of string-like values.
func names[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// faultSuggestion is a did-you-mean for the value of a fault's field that
// the nemesis refused, or "".
func (s *Scenario) faultSuggestion(f *Fault, field string) string {
	switch field {
	case "shape":
		return DidYouMean(f.Shape, names(nemesis.Shapes))
	case "distribution":
		return DidYouMean(f.Distribution, names(nemesis.Distributions))
	case "mode":
		if f.Kind == string(nemesis.Disk) {
			return DidYouMean(f.Mode, names(nemesis.DiskModes))
		}
		return DidYouMean(f.Mode, names(nemesis.Modes))
	case "disk":
		return DidYouMean(f.Disk, names(nemesis.PowerFails))
	case "cut":
		return DidYouMean(f.Cut, names(nemesis.CutKinds))
	case "clocks":
		return DidYouMean(f.Clocks, names(nemesis.ClockSets))
	case "direction":
		return DidYouMean(f.Direction, []string{"both", "out", "in"})
	case "target":
		for _, n := range f.Target.Names {
			if !slices.Contains(s.NodeNames(), n) {
				return s.suggestNode(n, names(nemesis.Picks))
			}
		}
	case "when.node":
		if f.When != nil {
			return s.suggestNode(f.When.Node, nil)
		}
	case "groups":
		for _, g := range f.Groups {
			for _, n := range g {
				if !slices.Contains(s.NodeNames(), n) {
					return s.suggestNode(n, nil)
				}
			}
		}
	}
	return ""
}

// written lists the kind-specific keys the fault sets.
func (f *Fault) written() []string {
	var out []string
	add := func(key string, set bool) {
		if set {
			out = append(out, key)
		}
	}
	add("probability", f.Probability != nil)
	add("delay", f.Delay.Set)
	add("jitter", f.Jitter.Set)
	add("distribution", f.Distribution != "")
	add("direction", f.Direction != "")
	add("shape", f.Shape != "")
	add("groups", f.Groups != nil)
	add("oneway", f.OneWay != nil)
	add("mode", f.Mode != "")
	add("cut", f.Cut != "")
	add("rate", f.Rate != nil)
	add("burst", f.Burst != nil)
	add("offset", f.Offset.Set)
	add("clocks", f.Clocks != "")
	add("reset", f.Reset != nil)
	add("delta", f.Delta.Set)
	add("disk", f.Disk != "")
	add("files", f.Files != "")
	add("bits", f.Bits != nil)
	add("zero", f.Zero != nil)
	add("truncate", f.Truncate != nil)
	add("ops", f.Ops != "")
	return out
}

// convert turns the fault as written into the nemesis's terms.
func (f *Fault) convert() (nemesis.Fault, error) {
	nf := nemesis.Fault{
		Kind: nemesis.Kind(f.Kind), At: f.At.D, For: f.For.D, Every: f.Every.D,
		Random: f.Random != nil && *f.Random, Probability: 1,
		Delay: f.Delay.D, Jitter: f.Jitter.D, Distribution: nemesis.Distribution(f.Distribution),
		Direction: nemesis.Direction(f.Direction), Shape: nemesis.Shape(f.Shape), Groups: f.Groups,
		OneWay: f.OneWay != nil && *f.OneWay, Mode: nemesis.Mode(f.Mode), Delta: f.Delta.D,
		Cut: nemesis.CutKind(f.Cut), Offset: f.Offset.D, Clocks: nemesis.Clocks(f.Clocks),
		Reset: f.Reset != nil && *f.Reset,
	}
	if f.Probability != nil {
		nf.Probability = *f.Probability
	}
	nf.PowerFail, nf.Files, nf.Ops = nemesis.PowerFail(f.Disk), f.Files, f.Ops
	if nf.Kind == nemesis.Disk {
		nf.DiskMode, nf.Mode = nemesis.DiskMode(f.Mode), ""
	}
	if f.Bits != nil {
		nf.Bits = *f.Bits
	}
	if f.Zero != nil {
		nf.Zero = *f.Zero
	}
	if f.Truncate != nil {
		nf.Truncate = *f.Truncate
	}
	if f.Rate != nil {
		nf.Rate = *f.Rate
	}
	if f.Burst != nil {
		nf.Burst = *f.Burst
	}
	if f.When != nil {
		nf.When = &nemesis.Trigger{Report: f.When.Report, Process: f.When.Process, Op: f.When.Op, Value: f.When.Value, Node: f.When.Node}
	}
	if f.Target.Set {
		t, err := nemesis.ParseTarget(f.Target.Names)
		if err != nil {
			return nf, err
		}
		nf.Target = t
	}
	return nf, nil
}

func (s *Scenario) validateChecks() error {
	c := &s.Checks
	if c.Run == nil {
		c.Run = checks.Defaults(s.Kind())
	}
	for _, name := range c.Run {
		if _, ok := checks.Lookup(name); !ok {
			return s.errorf("checks.run", "%s", unknownMsg("check", name, checkNames()))
		}
	}
	if slices.Contains(c.Run, "lost-writes") {
		switch w := &s.Workload; {
		case w.Kind != WorkloadSet && w.Kind != WorkloadLinKV:
			return s.errorf("checks.run", "lost-writes judges a set or lin-kv workload's writes, and this workload is %q", w.Kind)
		case w.FinalReads == FinalReadsNone:
			return s.errorf("workload.final_reads", "\"none\", but lost-writes needs the final reads: leave final_reads out, or name a client")
		}
	}
	if err := s.duration("checks.termination", &c.Termination, s.Recovery.D, true); err != nil {
		return err
	}
	if err := s.duration("checks.stabilisation", &c.Stabilisation, 0, true); err != nil {
		return err
	}
	if c.Termination.D > s.Recovery.D {
		return s.errorf("checks.termination", "%s is longer than the recovery window (%s), so termination could never be judged", c.Termination.D, s.Recovery.D)
	}
	if err := s.duration("checks.progress", &c.Progress, min(s.Workload.Timeout.D, s.Recovery.D), true); err != nil {
		return err
	}
	if c.Progress.D > s.Recovery.D {
		return s.errorf("checks.progress", "%s is longer than the recovery window (%s), so the last acquires could never be judged", c.Progress.D, s.Recovery.D)
	}
	if err := s.duration("checks.stale_leader", &c.StaleLeader, 0, true); err != nil {
		return err
	}
	if c.StaleLeader.Set && !slices.Contains(c.Run, "stale-leader") {
		return s.errorf("checks.stale_leader", "a bound for the stale-leader check, which this scenario does not run: add \"stale-leader\" to checks.run")
	}
	return nil
}

func (s *Scenario) validateExpect() error {
	e := &s.Expect
	for _, v := range e.Violations {
		found := false
		for _, r := range s.Checks.Run {
			found = found || r == v
		}
		if !found {
			return s.errorf("expect.violations", "%q is not among the checks this scenario runs (%s)%s", v, strings.Join(s.Checks.Run, ", "), DidYouMean(v, s.Checks.Run))
		}
	}
	for _, v := range e.Either {
		if !slices.Contains(s.Checks.Run, v) {
			return s.errorf("expect.either", "%q is not among the checks this scenario runs (%s)%s", v, strings.Join(s.Checks.Run, ", "), DidYouMean(v, s.Checks.Run))
		}
		if slices.Contains(e.Violations, v) {
			return s.errorf("expect.either", "%q is listed in expect.violations too: a check either must fail or may go either way", v)
		}
	}
	for i, name := range e.Exits {
		if !clientName.MatchString(name) {
			if err := s.node("expect.exits", name); err != nil {
				return err
			}
		}
		if slices.Contains(e.Exits[:i], name) {
			return s.errorf("expect.exits", "%q is listed twice", name)
		}
	}
	if e.ExpectValid() && len(e.Violations) > 0 {
		return s.errorf("expect.valid", "true, but expect.violations lists checks that must fail: set valid = false")
	}
	return nil
}

func checkNames() []string {
	var out []string
	for _, c := range checks.All() {
		out = append(out, c.Name)
	}
	return out
}

// validateElects checks the elects key and fills in its default.
func (s *Scenario) validateElects() error {
	switch s.Elects {
	case "":
		s.Elects = "any"
		s.Elects = s.defaultElects()
	case "max", "min", "any":
	default:
		return s.errorf("elects", "%s", unknownMsg("rule", s.Elects, []string{"max", "min", "any"}))
	}
	return nil
}

// ElectsRule is the elects rule as the history's meta event writes it:
// "max", "min", or "" for any live leader.
func (s *Scenario) ElectsRule() string {
	if s.Elects == "any" {
		return ""
	}
	return s.Elects
}
