package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/nemesis"
)

const good = `name = "t"
algorithm = "chang-roberts"
nodes = 5
duration = "300ms"
recovery = "200ms"

[network]
latency = "2ms"

[workload]
initiators = ["n2"]

[[faults]]
kind = "crash"
target = "n4"
at = "50ms"

[expect]
valid = false
violations = ["termination"]
`

func TestGoodScenarioHasDefaults(t *testing.T) {
	s, err := Parse("good.toml", good)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Network.Latency.D, 2*time.Millisecond; got != want {
		t.Errorf("latency %s, want %s", got, want)
	}
	if got, want := s.Checks.Termination.D, 200*time.Millisecond; got != want {
		t.Errorf("termination bound %s, want the recovery window %s", got, want)
	}
	if got := s.IDs; len(got) != 5 || got[0] != 1 || got[4] != 5 {
		t.Errorf("default ids %v, want 1..5", got)
	}
	if s.Seed != 1 || !s.ChecksumsOn() || !s.RecordMessages() || !s.Network.IsFIFO() {
		t.Errorf("defaults: seed %d checksums %v messages %v fifo %v", s.Seed, s.ChecksumsOn(), s.RecordMessages(), s.Network.IsFIFO())
	}
	if s.Workload.Kind != "election" {
		t.Errorf("workload kind %q, want election", s.Workload.Kind)
	}
}

// replace returns good with one line replaced (or, with old "", a line
// appended).
func replace(t *testing.T, old, new string) string {
	t.Helper()
	if old == "" {
		return good + new + "\n"
	}
	if !strings.Contains(good, old) {
		t.Fatalf("good scenario has no %q", old)
	}
	return strings.Replace(good, old, new, 1)
}

func TestBadScenarios(t *testing.T) {
	tests := []struct {
		name  string
		old   string // a line of good to replace ("" appends)
		new   string
		line  int
		field string
		msg   string // part of the message
	}{
		{"misspelt key", `latency = "2ms"`, `latnecy = "2ms"`, 8, "network.latnecy", "unknown key"},
		{"misspelt top key", `nodes = 5`, `node = 5`, 3, "node", "unknown key"},
		{"misspelt fault key", `target = "n4"`, `tagret = "n4"`, 15, "faults[0].tagret", "unknown key"},
		{"bad duration", `duration = "300ms"`, `duration = "300 ms"`, 4, "duration", "bad duration"},
		{"duration without unit", `latency = "2ms"`, `latency = 2`, 8, "network.latency", "bad duration"},
		{"negative duration", `at = "50ms"`, `at = "-5ms"`, 16, "faults[0].at", "negative"},
		{"duration too long", "", "[checks]\nstabilisation = \"2562047h\"", 22, "checks.stabilisation", "longer than the 1000h0m0s"},
		{"no nodes", `nodes = 5`, `nodes = 0`, 3, "nodes", "at least 1"},
		{"nodes not a number", `nodes = 5`, `nodes = "five"`, 3, "nodes", "incompatible types"},
		{"unknown algorithm", `algorithm = "chang-roberts"`, `algorithm = "chang-robert"`, 2, "algorithm", "unknown algorithm"},
		{"target names no node", `target = "n4"`, `target = "n9"`, 15, "faults[0].target", "names no node"},
		{"unknown fault", `kind = "crash"`, `kind = "explode"`, 14, "faults[0].kind", "unknown fault"},
		{"fault after the run", `at = "50ms"`, `at = "5s"`, 16, "faults[0].at", "not within"},
		{"initiator names no node", `initiators = ["n2"]`, `initiators = ["n2", "x"]`, 11, "workload.initiators", "names no node"},
		{"unknown check expected", `violations = ["termination"]`, `violations = ["terminaton"]`, 20, "expect.violations", "not among the checks"},
		{"expected exit names no node", `violations = ["termination"]`, "violations = [\"termination\"]\nexits = [\"n7\"]", 21, "expect.exits", "names no node"},
		{"expected exit twice", `violations = ["termination"]`, "violations = [\"termination\"]\nexits = [\"n2\", \"c1\", \"n2\"]", 21, "expect.exits", "listed twice"},
		{"ids of the wrong length", `nodes = 5`, "nodes = 5\nids = [1, 2]", 4, "ids", "2 ids for 5 nodes"},
		{"ids twice", `nodes = 5`, "nodes = 5\nids = [1, 2, 3, 2, 5]", 4, "ids", "given twice"},
		{"unknown param", "", "[params]\nspeed = 3", 22, "params.speed", "unknown parameter"},
		{"syntax error", `nodes = 5`, `nodes = = 5`, 3, "nodes", "expected value"},
		{"termination beyond recovery", "", "[checks]\ntermination = \"1s\"", 22, "checks.termination", "longer than the recovery"},
		{"bad stale-leader bound", "", "[checks]\nrun = [\"stale-leader\"]\nstale_leader = \"50\"", 23, "checks.stale_leader", "bad duration"},
		{"zero stale-leader bound", "", "[checks]\nrun = [\"stale-leader\"]\nstale_leader = \"0s\"", 23, "checks.stale_leader", "more than zero"},
		{"stale-leader bound without the check", "", "[checks]\nstale_leader = \"50ms\"", 22, "checks.stale_leader", "add \"stale-leader\" to checks.run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.toml", replace(t, tt.old, tt.new))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *scenario.Error", err)
			}
			if e.File != "bad.toml" || e.Line != tt.line || e.Field != tt.field || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got %q (line %d, field %q), want line %d, field %q, message with %q", e, e.Line, e.Field, tt.line, tt.field, tt.msg)
			}
			if !strings.HasPrefix(e.Error(), "bad.toml:") {
				t.Errorf("message %q does not start with the file", e)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.toml"))
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Error(), "nope.toml: cannot read") {
		t.Errorf("got %v", err)
	}
}

// Every scenario of the catalogue loads.
func TestCatalogueLoads(t *testing.T) {
	files, _ := filepath.Glob("../scenarios/*.toml")
	if len(files) == 0 {
		t.Fatal("no scenarios found")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Error(err)
		}
	}
}

func TestLocator(t *testing.T) {
	src := `a = 1
s = """
b = 2
"""
arr = [
  1,
  2,
]
[t]
"quoted key" = 3
x = {y = 1, z = 2}
[[f]]
k = 1
[[f]]
k = 2
[g]
"zoo.cfg" = "a"
"." = "b"
"" = "c"
'A=B' = "d"
h = { "a.b" = 1, "=" = 2 }
`
	l := newLocator(src)
	tests := []struct {
		path string
		line int
	}{
		{"a", 1}, {"s", 2}, {"arr", 5}, {"t", 9}, {`t."quoted key"`, 10}, {"t.x", 11},
		{"t.x.z", 11}, {"f[0].k", 13}, {"f[1].k", 15}, {"f[1].nothing", 14},
		// Quoted keys are found as TOML writes them (keyPath), dots and all.
		{`g."zoo.cfg"`, 17}, {`g."."`, 18}, {`g.""`, 19}, {`g."A=B"`, 20}, {`g.h."a.b"`, 21}, {`g.h."="`, 21},
	}
	for _, tt := range tests {
		pos, ok := l.find(tt.path)
		if !ok || pos.Line != tt.line {
			t.Errorf("find(%q) = line %d (%v), want %d", tt.path, pos.Line, ok, tt.line)
		}
	}
	if _, ok := l.keys["b"]; ok {
		t.Error("a key inside a multi-line string was taken for a key")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(good)
	f.Add("nodes = [")
	f.Add("[[faults]]\nkind = 1")
	f.Add(faultBase + "kind = \"partition\"\ngroups = [[\"n1\"], [\"n2\"]]\noneway = true\ndirection = \"in\"\n")
	f.Add(faultBase + "kind = \"replace\"\ntarget = [\"n5\"]\nwhen = { report = \"participant\", value = \"true\" }\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse("fuzz.toml", src)
		if err == nil && s.Nodes < 1 {
			t.Errorf("accepted %d nodes", s.Nodes)
		}
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Errorf("error %v is not a *scenario.Error", err)
		}
	})
}

// faultBase is a scenario whose one fault starts at line 6.
const faultBase = `algorithm = "chang-roberts"
nodes = 5
duration = "1s"

[[faults]]
`

// Bad fault specs are reported at the line and field that is wrong.
func TestBadFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault string // the fault's keys, from line 6
		line  int
		field string
		msg   string
	}{
		{"missing kind", "target = \"n1\"", 5, "faults[0].kind", "missing"},
		{"unknown kind", "kind = \"explode\"\ntarget = \"n1\"", 6, "faults[0].kind", "unknown fault"},
		{"target names no node", "kind = \"pause\"\ntarget = \"n6\"", 7, "faults[0].target", "names no node"},
		{"target list names no node", "kind = \"pause\"\ntarget = [\"n1\", \"x\"]", 7, "faults[0].target", "names no node"},
		{"target of the wrong type", "kind = \"pause\"\ntarget = 3", 7, "faults[0].target", "want a node name"},
		{"pick inside a list", "kind = \"pause\"\ntarget = [\"n1\", \"leader\"]", 7, "faults[0].target", "only target"},
		{"missing target", "kind = \"crash\"\nat = \"1ms\"", 5, "faults[0].target", "missing"},
		{"negative duration", "kind = \"pause\"\ntarget = \"n1\"\nfor = \"-20ms\"", 8, "faults[0].for", "negative duration"},
		{"negative every", "kind = \"pause\"\ntarget = \"n1\"\nevery = \"-1s\"", 8, "faults[0].every", "negative duration"},
		{"probability above 1", "kind = \"loss\"\nprobability = 1.5", 7, "faults[0].probability", "between 0 and 1"},
		{"one-way partition without a direction", "kind = \"partition\"\nshape = \"isolate\"\ntarget = \"n1\"\noneway = true", 5, "faults[0].direction", "needs a direction"},
		{"direction of a two-way partition", "kind = \"partition\"\nshape = \"isolate\"\ntarget = \"n1\"\ndirection = \"in\"", 9, "faults[0].direction", "unless oneway"},
		{"unknown shape", "kind = \"partition\"\nshape = \"star\"", 7, "faults[0].shape", "unknown shape"},
		{"group names no node", "kind = \"partition\"\ngroups = [[\"n1\"], [\"n2\", \"n9\"]]", 7, "faults[0].groups", "names no node"},
		{"parameter of another kind", "kind = \"crash\"\ntarget = \"n1\"\nprobability = 0.5", 8, "faults[0].probability", "not a parameter of a crash fault"},
		{"clock without rate", "kind = \"clock\"\ntarget = \"n1\"", 5, "faults[0].rate", "needs a rate"},
		{"clock of unknown clocks", "kind = \"clock\"\ntarget = \"n1\"\noffset = \"-5s\"\nclocks = \"tai\"", 9, "faults[0].clocks", "unknown clocks"},
		{"clock offset not a duration", "kind = \"clock\"\ntarget = \"n1\"\noffset = \"-5\"", 8, "faults[0].offset", "bad duration"},
		{"reset with a rate", "kind = \"clock\"\ntarget = \"n1\"\nreset = true\nrate = 2", 9, "faults[0].rate", "no rate"},
		{"unknown distribution", "kind = \"delay\"\ndelay = \"5ms\"\ndistribution = \"pareto\"", 8, "faults[0].distribution", "unknown distribution"},
		{"unknown corruption", "kind = \"corrupt\"\nmode = \"scramble\"", 7, "faults[0].mode", "unknown corruption mode"},
		{"trigger names no node", "kind = \"replace\"\ntarget = \"n5\"\nwhen = { report = \"participant\", node = \"n8\" }", 8, "faults[0].when.node", "names no node"},
		{"trigger key misspelt", "kind = \"replace\"\ntarget = \"n5\"\nwhen = { reprot = \"participant\" }", 8, "faults[0].when.reprot", "unknown key"},
		{"overlapping occurrences", "kind = \"pause\"\ntarget = \"one\"\nfor = \"100ms\"\nevery = \"50ms\"", 8, "faults[0].for", "not shorter"},
		{"second timely", "kind = \"timely\"\ndelta = \"5ms\"\n[[faults]]\nkind = \"timely\"\ndelta = \"5ms\"", 9, "faults[1].kind", "second timely"},
		{"timely without delta", "kind = \"timely\"\nat = \"100ms\"", 5, "faults[0].delta", "needs delta"},
		{"start after the run", "kind = \"loss\"\nat = \"2s\"", 7, "faults[0].at", "not within"},
		{"clock param of a foreign node's crash", "kind = \"crash\"\ntarget = \"n1\"\noffset = \"1s\"", 8, "faults[0].offset", "not a parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := faultBase + tt.fault + "\n"
			if strings.Contains(tt.name, "foreign") {
				src = "command = [\"./mynode\"]\n" + strings.TrimPrefix(src, "algorithm = \"chang-roberts\"\n")
			}
			_, err := Parse("bad.toml", src)
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

// Every fault kind of the documentation's examples loads, and converts with
// its defaults.
func TestGoodFaults(t *testing.T) {
	src := faultBase + `kind = "partition"
shape = "isolate"
target = "leader"
oneway = true
direction = "out"
at = "100ms"
for = "200ms"

[[faults]]
kind = "loss"
probability = 0.25
target = ["n1", "n2"]

[[faults]]
kind = "timely"
at = "400ms"
delta = "5ms"
target = "n3"

[[faults]]
kind = "replace"
target = "n5"
when = { report = "participant", value = "true" }

[checks]
stabilisation = "500ms"
`
	s, err := Parse("good.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	fs := s.NemesisFaults()
	if len(fs) != 4 {
		t.Fatalf("%d faults", len(fs))
	}
	if fs[0].Target.Pick != nemesis.Leader || !fs[0].OneWay || fs[0].Direction != nemesis.Out || fs[0].For != 200*time.Millisecond {
		t.Errorf("partition: %+v", fs[0])
	}
	if fs[1].Probability != 0.25 || fs[1].Direction != nemesis.Both || len(fs[1].Target.Nodes) != 2 {
		t.Errorf("loss: %+v", fs[1])
	}
	if gst, ok := s.GST(); !ok || gst != 400*time.Millisecond || fs[2].Direction != nemesis.Out {
		t.Errorf("GST %v %v, timely %+v", gst, ok, fs[2])
	}
	if fs[3].When == nil || fs[3].When.Report != "participant" || fs[3].When.Value != "true" {
		t.Errorf("trigger: %+v", fs[3].When)
	}
	if s.Checks.Stabilisation.D != 500*time.Millisecond {
		t.Errorf("stabilisation %s", s.Checks.Stabilisation.D)
	}
}

// Every example of docs/scenarios.md from its Faults section on loads
// (faults and workloads), and together the fault examples show
// every fault kind.
func TestDocumentedFaultsLoad(t *testing.T) {
	b, err := os.ReadFile("../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "## Faults")
	if i < 0 {
		t.Fatal("docs/scenarios.md has no Faults section")
	}
	kinds := map[nemesis.Kind]bool{}
	blocks := strings.Split(doc[i:], "```toml\n")[1:]
	for _, block := range blocks {
		block = block[:strings.Index(block, "```")]
		node := "algorithm = \"chang-roberts\"\n"
		if strings.Contains(block, `kind = "lin-kv"`) || strings.Contains(block, `kind = "echo"`) || strings.Contains(block, `kind = "set"`) {
			node = "command = [\"./mynode\"]\n" // served by a node of one's own
		}
		if strings.Contains(block, "cut = ") || strings.Contains(block, `kind = "disk"`) || strings.Contains(block, "disk = ") {
			block += "\n[server]\npreset = \"etcd\"\n" // a cut is for real servers' streams, a disk for their data folders
		}
		s, err := Parse("example.toml", node+"nodes = 5\nduration = \"2s\"\n"+block)
		if err != nil {
			t.Errorf("%v in\n%s", err, block)
			continue
		}
		for _, f := range s.NemesisFaults() {
			kinds[f.Kind] = true
		}
	}
	for _, k := range nemesis.Kinds {
		if !kinds[k] {
			t.Errorf("no example of a %s fault", k)
		}
	}
}

const goodMutex = `algorithm = "ricart-agrawala"
nodes = 4
duration = "500ms"
recovery = "400ms"

[workload]
hold = "5ms"
`

// A mutual-exclusion algorithm gets the lock workload and the mutex checks
// by default.
func TestMutexDefaults(t *testing.T) {
	s, err := Parse("mutex.toml", goodMutex)
	if err != nil {
		t.Fatal(err)
	}
	w := s.Workload
	if w.Kind != "mutex" || w.Clients != 4 || w.Rate != DefaultRate || w.Hold.D != 5*time.Millisecond || w.Timeout.D != DefaultOpTimeout {
		t.Errorf("workload %+v: want kind mutex, 4 clients, rate %v, hold 5ms, timeout %s", w, DefaultRate, DefaultOpTimeout)
	}
	if got, want := strings.Join(w.Targets, ","), "n1,n2,n3,n4"; got != want {
		t.Errorf("targets %s, want %s", got, want)
	}
	if got, want := strings.Join(s.Checks.Run, ","), "mutex-linearizable,mutex-cs,mutex-progress,mutex-fairness,mutex-measures"; got != want {
		t.Errorf("checks %s, want %s", got, want)
	}
	if got, want := s.Checks.Progress.D, 400*time.Millisecond; got != want {
		t.Errorf("progress bound %s, want the recovery window %s (shorter than the timeout)", got, want)
	}
	if s.Kind() != "mutex" {
		t.Errorf("Kind() = %q", s.Kind())
	}
	// A foreign node is a mutex node when its workload is.
	f, err := Parse("foreign.toml", "command = [\"./lock\"]\nnodes = 2\n[workload]\nkind = \"mutex\"\ntimeout = \"200ms\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind() != "mutex" || f.Checks.Run[0] != "mutex-linearizable" || f.Checks.Progress.D != 200*time.Millisecond {
		t.Errorf("foreign lock: kind %q, checks %v, progress %s", f.Kind(), f.Checks.Run, f.Checks.Progress.D)
	}
}

func TestBadMutexScenarios(t *testing.T) {
	tests := []struct {
		name  string
		old   string // a line of goodMutex to replace
		new   string
		line  int
		field string
		msg   string
	}{
		{"clients for an election", `hold = "5ms"`, "kind = \"election\"\nclients = 3", 8, "workload.clients", "only for kind = \"mutex\""},
		{"hold for an election", `hold = "5ms"`, "kind = \"none\"\nhold = \"5ms\"", 8, "workload.hold", "only for kind = \"mutex\""},
		{"initiators for a lock", `hold = "5ms"`, `initiators = ["n1"]`, 7, "workload.initiators", "only for kind = \"election\""},
		{"unknown kind", `hold = "5ms"`, `kind = "locks"`, 7, "workload.kind", "known: election, mutex, lin-kv, set, echo, none"},
		{"no clients", `hold = "5ms"`, `clients = -1`, 7, "workload.clients", "from 1 to"},
		{"negative rate", `hold = "5ms"`, `rate = -2.5`, 7, "workload.rate", "positive"},
		{"target names no node", `hold = "5ms"`, `targets = ["n1", "n7"]`, 7, "workload.targets", "names no node"},
		{"no targets", `hold = "5ms"`, `targets = []`, 7, "workload.targets", "empty"},
		{"bad hold", `hold = "5ms"`, `hold = "5"`, 7, "workload.hold", "bad duration"},
		{"zero timeout", `hold = "5ms"`, `timeout = "0s"`, 7, "workload.timeout", "more than zero"},
		{"progress beyond recovery", `hold = "5ms"`, "[checks]\nprogress = \"1s\"", 8, "checks.progress", "longer than the recovery"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(goodMutex, tt.old, tt.new, 1)
			_, err := Parse("bad.toml", src)
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

func TestStaleLeaderBound(t *testing.T) {
	s, err := Parse("terms.toml", "command = [\"./mynode\"]\nnodes = 3\n[checks]\nrun = [\"one-leader-per-term\", \"stale-leader\"]\nstale_leader = \"50ms\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Checks.StaleLeader.D, 50*time.Millisecond; got != want {
		t.Errorf("stale-leader bound %s, want %s", got, want)
	}
	s, err = Parse("terms.toml", "command = [\"./mynode\"]\nnodes = 3\n[checks]\nrun = [\"stale-leader\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	if s.Checks.StaleLeader.D != 0 {
		t.Errorf("stale-leader bound %s without the key, want none", s.Checks.StaleLeader.D)
	}
}

func TestElects(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{"algorithm = \"chang-roberts\"\nnodes = 3\n", "max"},
		{"algorithm = \"omega-etc\"\nnodes = 3\n[workload]\nkind = \"none\"\n", "min"},
		{"command = [\"./mynode\"]\nnodes = 3\n", ""},
		{"command = [\"./mynode\"]\nnodes = 3\nelects = \"max\"\n", "max"},
		{"algorithm = \"chang-roberts\"\nnodes = 3\nelects = \"any\"\n", ""},
	}
	for _, tt := range tests {
		s, err := Parse("e.toml", tt.src)
		if err != nil {
			t.Fatalf("%q: %v", tt.src, err)
		}
		if got := s.ElectsRule(); got != tt.want {
			t.Errorf("%q: elects rule %q, want %q", tt.src, got, tt.want)
		}
	}
	_, err := Parse("e.toml", "algorithm = \"chang-roberts\"\nnodes = 3\nelects = \"highest\"\n")
	var e *Error
	if !errors.As(err, &e) || e.Line != 3 || e.Field != "elects" {
		t.Errorf("a bad elects gave %v, want an error at line 3, field elects", err)
	}
}

// expect.exits names nodes and clients that may exit on their own, and
// the scenario written back keeps them.
func TestExpectedExits(t *testing.T) {
	s, err := Parse("exits.toml", replace(t, `violations = ["termination"]`, "violations = [\"termination\"]\nexits = [\"n2\", \"c1\"]"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Expect.Exits, ","); got != "n2,c1" {
		t.Errorf("exits %q, want n2,c1", got)
	}
	back, err := Parse("back.toml", string(s.Encode("")))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(back.Expect.Exits, ","); got != "n2,c1" {
		t.Errorf("written back, exits %q, want n2,c1", got)
	}
}
