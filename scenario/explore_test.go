package scenario

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/nemesis"
)

// An election of a built-in algorithm with no faults, to explore.
const explorable = `name = "e"
algorithm = "bully"
nodes = 5
duration = "1s"
recovery = "500ms"

[explore]
kinds = ["replace", "pause", "partition"]
targets = ["leader", "n5"]
triggers = ["time", "participant"]
max_faults = 2
for = ["5ms", "200ms"]
probability = [0.2, 0.8]
`

func TestExploreVocabulary(t *testing.T) {
	s, err := Parse("e.toml", explorable)
	if err != nil {
		t.Fatal(err)
	}
	v := s.Vocabulary()
	if !slices.Equal(v.Kinds, []nemesis.Kind{nemesis.Replace, nemesis.Pause, nemesis.Partition}) {
		t.Errorf("kinds %v", v.Kinds)
	}
	if !slices.Equal(v.Targets, []string{"leader", "n5"}) || !slices.Equal(v.Triggers, []Trigger{TriggerTime, TriggerParticipant}) {
		t.Errorf("targets %v, triggers %v", v.Targets, v.Triggers)
	}
	if v.MaxFaults != 2 || v.For != [2]time.Duration{5 * time.Millisecond, 200 * time.Millisecond} || v.Probability != [2]float64{0.2, 0.8} {
		t.Errorf("max %d, for %v, probability %v", v.MaxFaults, v.For, v.Probability)
	}
	// What the table leaves out is the default.
	if v.At != [2]time.Duration{0, time.Second} || v.Rate != [2]float64{0.5, 2} || len(v.Shapes) == 0 {
		t.Errorf("defaults: at %v, rate %v, shapes %v", v.At, v.Rate, v.Shapes)
	}
}

// Without an [explore] table, the vocabulary follows the scenario's kind.
func TestExploreDefaults(t *testing.T) {
	tests := []struct {
		name, src    string
		kinds        []nemesis.Kind
		has, hasNot  []Trigger
		holder, cuts bool
	}{
		{"built-in election", "algorithm = \"bully\"\nnodes = 3\n",
			[]nemesis.Kind{nemesis.Crash, nemesis.Replace, nemesis.Pause, nemesis.Partition, nemesis.Loss, nemesis.Delay, nemesis.Clock},
			[]Trigger{TriggerTime, TriggerLeader, TriggerParticipant, TriggerMessage}, []Trigger{TriggerAcquire, TriggerInFlight}, false, false},
		{"built-in mutex", "algorithm = \"centralised\"\nnodes = 3\n",
			nil, []Trigger{TriggerAcquire, TriggerRelease, TriggerInFlight}, []Trigger{TriggerParticipant}, false, false},
		{"node of one's own", "command = [\"./mynode\"]\nnodes = 3\n",
			[]nemesis.Kind{nemesis.Crash, nemesis.Replace, nemesis.Pause, nemesis.Partition, nemesis.Loss, nemesis.Delay, nemesis.Clock},
			[]Trigger{TriggerTime, TriggerLeader}, []Trigger{TriggerParticipant, TriggerInFlight}, false, false},
		{"real servers", "nodes = 3\n[server]\npreset = \"etcd\"\nclient = \"etcd\"\nclient_processes = true\n[workload]\nkind = \"mutex\"\nclients = 2\n",
			[]nemesis.Kind{nemesis.Partition, nemesis.Pause, nemesis.Crash, nemesis.Clock},
			[]Trigger{TriggerAcquire, TriggerInFlight}, []Trigger{TriggerParticipant, TriggerMessage}, true, true},
	}
	for _, tt := range tests {
		s, err := Parse("d.toml", tt.src)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		v := s.Vocabulary()
		if tt.kinds != nil && !slices.Equal(v.Kinds, tt.kinds) {
			t.Errorf("%s: kinds %v, want %v", tt.name, v.Kinds, tt.kinds)
		}
		for _, tr := range tt.has {
			if !slices.Contains(v.Triggers, tr) {
				t.Errorf("%s: triggers %v lack %s", tt.name, v.Triggers, tr)
			}
		}
		for _, tr := range tt.hasNot {
			if slices.Contains(v.Triggers, tr) {
				t.Errorf("%s: triggers %v hold %s", tt.name, v.Triggers, tr)
			}
		}
		if got := slices.Contains(v.Targets, "holder"); got != tt.holder {
			t.Errorf("%s: targets %v: holder %v, want %v", tt.name, v.Targets, got, tt.holder)
		}
		if got := len(v.Cuts) > 0; got != tt.cuts {
			t.Errorf("%s: cuts %v", tt.name, v.Cuts)
		}
		if v.MaxFaults != DefaultMaxFaults || v.For[0] <= 0 || v.For[1] < v.For[0] || v.At[1] != s.Duration.D {
			t.Errorf("%s: max %d, for %v, at %v", tt.name, v.MaxFaults, v.For, v.At)
		}
	}
}

// A bad [explore] table names the file, the line and the field, with a
// suggestion where one is close.
func TestBadExplore(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		line     int
		field    string
		msg      string
	}{
		{"misspelt key", `max_faults = 2`, `max_fault = 2`, 11, "explore.max_fault", "did you mean explore.max_faults?"},
		{"unknown kind", `kinds = ["replace", "pause", "partition"]`, `kinds = ["replace", "paus"]`, 8, "explore.kinds", `did you mean "pause"?`},
		{"timely", `kinds = ["replace", "pause", "partition"]`, `kinds = ["timely"]`, 8, "explore.kinds", "cannot be explored"},
		{"no kinds", `kinds = ["replace", "pause", "partition"]`, `kinds = []`, 8, "explore.kinds", "empty"},
		{"target no node", `targets = ["leader", "n5"]`, `targets = ["leader", "n9"]`, 9, "explore.targets", "neither a pick"},
		{"target misspelt", `targets = ["leader", "n5"]`, `targets = ["leder"]`, 9, "explore.targets", `did you mean "leader"?`},
		{"holder without client processes", `targets = ["leader", "n5"]`, `targets = ["holder"]`, 9, "explore.targets", "client that holds the lock"},
		{"unknown trigger", `triggers = ["time", "participant"]`, `triggers = ["time", "leadr"]`, 10, "explore.triggers", `did you mean "leader"?`},
		{"acquire without a lock", `triggers = ["time", "participant"]`, `triggers = ["acquire"]`, 10, "explore.triggers", "mutex workload"},
		{"in-flight without clients", `triggers = ["time", "participant"]`, `triggers = ["in-flight"]`, 10, "explore.triggers", "no clients"},
		{"too many faults", `max_faults = 2`, `max_faults = 99`, 11, "explore.max_faults", "from 1 to 32"},
		{"one duration", `for = ["5ms", "200ms"]`, `for = ["5ms"]`, 12, "explore.for", "want two durations"},
		{"durations reversed", `for = ["5ms", "200ms"]`, `for = ["200ms", "5ms"]`, 12, "explore.for", "the least is more than the most"},
		{"bad duration", `for = ["5ms", "200ms"]`, `for = ["5ms", "2 s"]`, 12, "explore.for", "bad duration"},
		{"zero for", `for = ["5ms", "200ms"]`, `for = ["0s", "200ms"]`, 12, "explore.for", "more than zero"},
		{"at past the run", `for = ["5ms", "200ms"]`, `at = ["0s", "2s"]`, 12, "explore.at", "past the run's duration"},
		{"probability above 1", `probability = [0.2, 0.8]`, `probability = [0.2, 1.5]`, 13, "explore.probability", "between 0 and 1"},
		{"zero rate", `probability = [0.2, 0.8]`, `rate = [0.0, 2.0]`, 13, "explore.rate", "more than 0"},
		{"groups shape", `max_faults = 2`, `shapes = ["groups"]`, 11, "explore.shapes", "unknown shape"},
		{"cut without servers", `max_faults = 2`, `cuts = ["stall"]`, 11, "explore.cuts", "only real servers"},
		{"for not a list", `for = ["5ms", "200ms"]`, `for = "5ms"`, 12, "explore.for", `must be a list of durations, like ["100ms", "1s"], not the string "5ms"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(explorable, tt.old) {
				t.Fatalf("no %q", tt.old)
			}
			_, err := Parse("bad.toml", strings.Replace(explorable, tt.old, tt.new, 1))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *scenario.Error", err)
			}
			if e.Line != tt.line || e.Field != tt.field || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got %q (line %d, field %q), want line %d, field %q, message with %q", e, e.Line, e.Field, tt.line, tt.field, tt.msg)
			}
		})
	}
}

// Messages are moments only where the history records them.
func TestExploreMessageTrigger(t *testing.T) {
	src := strings.Replace(explorable, `recovery = "500ms"`, "recovery = \"500ms\"\nhistory = { messages = false }", 1)
	src = strings.Replace(src, `triggers = ["time", "participant"]`, `triggers = ["message"]`, 1)
	_, err := Parse("m.toml", src)
	var e *Error
	if !errors.As(err, &e) || e.Line != 11 || e.Field != "explore.triggers" || !strings.Contains(e.Msg, "set [history] messages = true") {
		t.Errorf("got %v", err)
	}
	s, err := Parse("m.toml", strings.Replace(src, `triggers = ["message"]`, "", 1))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(s.Vocabulary().Triggers, TriggerMessage) {
		t.Error("message among the default triggers of a history without messages")
	}
}

// The [explore] table is written back as it was written, so that a
// schedule saved as a scenario file can be explored again.
func TestExploreEncodes(t *testing.T) {
	s, err := Parse("e.toml", explorable)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("e.toml", string(s.Encode("")))
	if err != nil {
		t.Fatalf("%v in\n%s", err, s.Encode(""))
	}
	if a, b := s.Vocabulary(), back.Vocabulary(); !slices.Equal(a.Kinds, b.Kinds) || !slices.Equal(a.Targets, b.Targets) ||
		!slices.Equal(a.Triggers, b.Triggers) || a.For != b.For || a.Probability != b.Probability || a.MaxFaults != b.MaxFaults {
		t.Errorf("vocabulary %+v, read back %+v", a, b)
	}
	if !strings.Contains(string(s.Encode("")), "[explore]") {
		t.Error("no [explore] table written")
	}
	plain, _ := Parse("p.toml", "algorithm = \"bully\"\nnodes = 3\n")
	if strings.Contains(string(plain.Encode("")), "[explore]") {
		t.Error("an [explore] table written for a scenario without one")
	}
}

// --set reaches the table's keys.
func TestExploreOverride(t *testing.T) {
	o, err := ParseSet(`explore.for=["1ms", "2ms"]`)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseSet("explore.max_faults=4")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("e.toml", explorable, o, m)
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Vocabulary(); v.For != [2]time.Duration{time.Millisecond, 2 * time.Millisecond} || v.MaxFaults != 4 {
		t.Errorf("for %v, max %d", v.For, v.MaxFaults)
	}
}
