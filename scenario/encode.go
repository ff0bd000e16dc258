package scenario

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/nodes/algorithms"
)

// Encode writes the scenario as a scenario file: TOML that Parse reads
// back to the same scenario. It writes what the file must say and leaves
// out what validation would fill in anyway (default ids, checks, elects,
// initiators, clients, targets, rate), so that a tool that changes a
// scenario (the simulator's shrinker removes nodes and faults) writes
// one that stays valid. Durations are written when the file set them;
// a tool that sets one sets Duration.Set too. The file name is not
// written; header, when not empty, is written first as comment lines.
func (s *Scenario) Encode(header string) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		if header != "" {
			b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
		}
	}
	kv := func(key string, v any) { fmt.Fprintf(&b, "%s = %s\n", key, value(v)) }
	dur := func(key string, d Duration) {
		if d.Set {
			kv(key, d.D)
		}
	}
	if s.Name != "" {
		kv("name", s.Name)
	}
	if s.Description != "" {
		kv("description", s.Description)
	}
	if (s.Algorithm != "" || !s.foreign()) && !s.algorithmFromServer {
		kv("algorithm", s.Algorithm)
	}
	if s.Command != nil {
		kv("command", s.Command)
	}
	dur("init_timeout", s.InitTimeout)
	if s.DeferStart {
		kv("defer_start", true)
	}
	kv("nodes", s.Nodes)
	if !defaultIDs(s.IDs) {
		kv("ids", s.IDs)
	}
	kv("seed", s.Seed)
	dur("duration", s.Duration)
	dur("recovery", s.Recovery)
	if s.Checksums != nil {
		kv("checksums", *s.Checksums)
	}
	if s.Elects != "" && s.Elects != s.defaultElects() {
		kv("elects", s.Elects)
	}
	if s.written != nil {
		b.WriteString("\n")
		b.Write(encodeServer(s.written))
	}
	if len(s.Params) > 0 {
		b.WriteString("\n[params]\n")
		b.Write(params(s.Params))
	}
	if s.Network.Latency.Set || s.Network.Jitter.Set || s.Network.FIFO != nil {
		b.WriteString("\n[network]\n")
		dur("latency", s.Network.Latency)
		dur("jitter", s.Network.Jitter)
		if s.Network.FIFO != nil {
			kv("fifo", *s.Network.FIFO)
		}
	}
	s.encodeWorkload(&b)
	for _, f := range s.Faults {
		b.WriteString("\n[[faults]]\n")
		f.encode(kv, dur)
	}
	s.encodeExplore(&b)
	c := &s.Checks
	if (c.Run != nil && !slices.Equal(c.Run, checks.Defaults(s.Kind()))) || c.Termination.Set || c.Stabilisation.Set || c.Progress.Set || c.StaleLeader.Set {
		b.WriteString("\n[checks]\n")
		if c.Run != nil && !slices.Equal(c.Run, checks.Defaults(s.Kind())) {
			kv("run", c.Run)
		}
		dur("termination", c.Termination)
		dur("stabilisation", c.Stabilisation)
		dur("progress", c.Progress)
		dur("stale_leader", c.StaleLeader)
	}
	if s.History.Messages != nil {
		b.WriteString("\n[history]\n")
		kv("messages", *s.History.Messages)
	}
	b.WriteString("\n[expect]\n")
	kv("valid", s.Expect.ExpectValid())
	if len(s.Expect.Violations) > 0 {
		kv("violations", s.Expect.Violations)
	}
	if len(s.Expect.Exits) > 0 {
		kv("exits", s.Expect.Exits)
	}
	if len(s.Expect.Either) > 0 {
		kv("either", s.Expect.Either)
	}
	return b.Bytes()
}

// encodeWorkload writes the [workload] table, if any key differs from
// what validation would fill in.
func (s *Scenario) encodeWorkload(b *bytes.Buffer) {
	w := &s.Workload
	all := s.NodeNames()
	var lines bytes.Buffer
	put := func(key string, v any) { fmt.Fprintf(&lines, "%s = %s\n", key, value(v)) }
	dur := func(key string, d Duration) {
		if d.Set {
			put(key, d.D)
		}
	}
	defaultKind := "election"
	switch {
	case s.Server != nil:
		defaultKind = WorkloadNone
	case s.Kind() == "mutex":
		defaultKind = "mutex"
	}
	if w.Kind != "" && w.Kind != defaultKind {
		put("kind", w.Kind)
	}
	switch {
	case w.Initiators == nil:
	case len(all) > 1 && slices.Equal(w.Initiators, all):
		put("initiators", []string{"all"})
	case !slices.Equal(w.Initiators, []string{NodeName(0)}):
		put("initiators", w.Initiators)
	}
	dur("at", w.At)
	dur("timeout", w.Timeout)
	if w.Clients != 0 && w.Clients != s.Nodes {
		put("clients", w.Clients)
	}
	if w.Targets != nil && !slices.Equal(w.Targets, all) {
		put("targets", w.Targets)
	}
	if on := w.On.encode(all); on != nil {
		put("on", on)
	}
	if w.Rate != 0 && w.Rate != DefaultRate {
		put("rate", w.Rate)
	}
	dur("hold", w.Hold)
	if w.Keys != 0 && w.Keys != DefaultKeys {
		put("keys", w.Keys)
	}
	if w.Values != 0 && w.Values != DefaultValues {
		put("values", w.Values)
	}
	if w.Mix != nil {
		put("mix", rawTOML(fmt.Sprintf("{ read = %s, write = %s, cas = %s }", value(w.Mix.Read), value(w.Mix.Write), value(w.Mix.Cas))))
	}
	if w.FinalReads != "" {
		put("final_reads", w.FinalReads)
	}
	dur("final_after", w.FinalAfter)
	if lines.Len() > 0 {
		b.WriteString("\n[workload]\n")
		b.Write(lines.Bytes())
	}
}

func (f *Fault) encode(kv func(string, any), dur func(string, Duration)) {
	kv("kind", f.Kind)
	if f.Target.Set {
		if len(f.Target.Names) == 1 {
			kv("target", f.Target.Names[0])
		} else {
			kv("target", f.Target.Names)
		}
	}
	dur("at", f.At)
	dur("for", f.For)
	dur("every", f.Every)
	if f.Random != nil {
		kv("random", *f.Random)
	}
	if w := f.When; w != nil {
		var parts []string
		for _, p := range []struct{ k, v string }{{"report", w.Report}, {"process", w.Process}, {"op", w.Op}, {"value", w.Value}, {"node", w.Node}} {
			if p.v != "" {
				parts = append(parts, p.k+" = "+value(p.v))
			}
		}
		kv("when", rawTOML("{ "+strings.Join(parts, ", ")+" }"))
	}
	if f.Probability != nil {
		kv("probability", *f.Probability)
	}
	dur("delay", f.Delay)
	dur("jitter", f.Jitter)
	if f.Distribution != "" {
		kv("distribution", f.Distribution)
	}
	if f.Direction != "" {
		kv("direction", f.Direction)
	}
	if f.Shape != "" {
		kv("shape", f.Shape)
	}
	if f.Groups != nil {
		kv("groups", f.Groups)
	}
	if f.OneWay != nil {
		kv("oneway", *f.OneWay)
	}
	if f.Mode != "" {
		kv("mode", f.Mode)
	}
	if f.Cut != "" {
		kv("cut", f.Cut)
	}
	if f.Rate != nil {
		kv("rate", *f.Rate)
	}
	if f.Burst != nil {
		kv("burst", *f.Burst)
	}
	dur("offset", f.Offset)
	if f.Clocks != "" {
		kv("clocks", f.Clocks)
	}
	if f.Reset != nil {
		kv("reset", *f.Reset)
	}
	dur("delta", f.Delta)
	for _, p := range []struct{ k, v string }{{"disk", f.Disk}, {"files", f.Files}, {"ops", f.Ops}} {
		if p.v != "" {
			kv(p.k, p.v)
		}
	}
	if f.Bits != nil {
		kv("bits", *f.Bits)
	}
	if f.Zero != nil {
		kv("zero", *f.Zero)
	}
	if f.Truncate != nil {
		kv("truncate", *f.Truncate)
	}
}

// defaultElects is the elects rule validation fills in.
func (s *Scenario) defaultElects() string {
	if spec, ok := algorithms.Lookup(s.Algorithm); ok && !s.foreign() && spec.Elects != "" {
		return spec.Elects
	}
	return "any"
}

func defaultIDs(ids []int) bool {
	for i, id := range ids {
		if id != i+1 {
			return false
		}
	}
	return true
}

// rawTOML is a value written as it is.
type rawTOML string

// value writes a value in TOML.
func value(v any) string {
	switch x := v.(type) {
	case rawTOML:
		return string(x)
	case string:
		return quote(x)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") { // "n": NaN and Inf are not written by scenarios
			s += ".0"
		}
		return s
	case time.Duration:
		return quote(x.String())
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = quote(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []int:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = strconv.Itoa(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case [][]string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = value(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	panic(fmt.Sprintf("scenario: cannot encode %T", v)) // every field's type is listed above
}

// quote writes a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// params writes the algorithm's parameters, whatever TOML types they
// have, as key = value lines.
func params(p map[string]any) []byte {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(p); err != nil {
		panic(fmt.Sprintf("scenario: encode params: %v", err)) // values decoded from TOML encode
	}
	return b.Bytes()
}
