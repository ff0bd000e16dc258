package scenario

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// comparable is what a scenario means, with what only its text carries
// (the written form of durations, the file) taken out.
func comparable(s *Scenario) Scenario {
	c := *s
	c.File, c.loc = "", nil
	clear := func(d *Duration) { d.Raw, d.err = "", nil }
	for _, d := range []*Duration{&c.Duration, &c.Recovery, &c.InitTimeout, &c.Network.Latency, &c.Network.Jitter,
		&c.Workload.At, &c.Workload.Timeout, &c.Workload.Hold, &c.Checks.Termination, &c.Checks.Stabilisation, &c.Checks.Progress, &c.Checks.StaleLeader} {
		clear(d)
	}
	c.Faults = append([]Fault(nil), s.Faults...)
	for i := range c.Faults {
		f := &c.Faults[i]
		for _, d := range []*Duration{&f.At, &f.For, &f.Every, &f.Delay, &f.Jitter, &f.Delta, &f.Offset} {
			clear(d)
		}
	}
	return c
}

// Every scenario of the catalogue, encoded and parsed again, is the same
// scenario, and encoding it again gives the same text.
func TestEncodeRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../scenarios/sim/*.toml")
	files = append(files, more...)
	if len(files) < 20 {
		t.Fatalf("only %d scenarios found", len(files))
	}
	for _, file := range files {
		s, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		text := s.Encode("a header\nof two lines")
		back, err := Parse(file, string(text))
		if err != nil {
			t.Errorf("%s: the encoded scenario does not parse: %v\n%s", file, err, text)
			continue
		}
		if got, want := comparable(back), comparable(s); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: encoded and parsed again:\n%+v\nwant\n%+v\ntext:\n%s", file, got, want, text)
		}
		if again := back.Encode("a header\nof two lines"); string(again) != string(text) {
			t.Errorf("%s: encoding is not stable:\n%s\nthen\n%s", file, text, again)
		}
		if !strings.HasPrefix(string(text), "# a header\n# of two lines\n") {
			t.Errorf("%s: no header:\n%s", file, text)
		}
	}
}

// A changed scenario is written with its changes: fewer nodes drop the
// defaults that depended on the count, and a duration set by a tool is
// written.
func TestEncodeChanged(t *testing.T) {
	s, err := Parse("t.toml", `algorithm = "ricart-agrawala"
nodes = 5
[workload]
kind = "mutex"
[[faults]]
kind = "crash"
target = "n5"
at = "100ms"
`)
	if err != nil {
		t.Fatal(err)
	}
	s.Nodes = 3
	s.IDs = []int{1, 2, 3}
	s.Workload.Clients, s.Workload.Targets = 3, s.NodeNames()
	s.Faults[0].Target.Names = []string{"n3"}
	s.Faults[0].For = Duration{D: 50 * time.Millisecond, Set: true}
	s.Duration = Duration{D: 400 * time.Millisecond, Set: true}
	text := string(s.Encode(""))
	back, err := Parse("t.toml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if back.Nodes != 3 || back.Workload.Clients != 3 || len(back.Workload.Targets) != 3 || back.Duration.D != 400*time.Millisecond {
		t.Errorf("got %d nodes, %d clients, targets %v, duration %s:\n%s", back.Nodes, back.Workload.Clients, back.Workload.Targets, back.Duration.D, text)
	}
	if f := back.NemesisFaults()[0]; f.For != 50*time.Millisecond || f.Target.Nodes[0] != "n3" {
		t.Errorf("fault %+v:\n%s", f, text)
	}
	for _, absent := range []string{"ids", "clients", "targets", "kind = \"mutex\""} {
		if strings.Contains(text, absent) {
			t.Errorf("%q is written although it is the default:\n%s", absent, text)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, s := range []string{`plain`, `a "quoted" \ word`, "tab\tnew\nline\x01"} {
		src := "algorithm = \"bully\"\nnodes = 2\ndescription = " + quote(s) + "\n"
		sc, err := Parse("q.toml", src)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if sc.Description != s {
			t.Errorf("quote(%q) read back as %q", s, sc.Description)
		}
	}
}

// A clock jump back is written as it was given, and read back the same.
func TestEncodeClockJumpBack(t *testing.T) {
	s, err := Parse("t.toml", "algorithm = \"bully\"\nnodes = 3\n[[faults]]\nkind = \"clock\"\ntarget = \"n1\"\noffset = \"-5s\"\nclocks = \"realtime\"\n[[faults]]\nkind = \"clock\"\ntarget = \"n1\"\nreset = true\nat = \"500ms\"\n")
	if err != nil {
		t.Fatal(err)
	}
	text := string(s.Encode(""))
	back, err := Parse("t.toml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	f := back.NemesisFaults()
	if len(f) != 2 || f[0].Offset != -5*time.Second || f[0].Clocks != "realtime" || !f[1].Reset {
		t.Fatalf("read back %+v from\n%s", f, text)
	}
}
