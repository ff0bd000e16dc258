package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustSet(t *testing.T, args ...string) []Override {
	t.Helper()
	var out []Override
	for _, a := range args {
		o, err := ParseSet(a)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// Overrides set any scalar key over the file's, and the scenario is
// validated with them as if the file said so.
func TestOverrides(t *testing.T) {
	s, err := Parse("good.toml", good, mustSet(t,
		"nodes=9", "network.latency=5ms", "checks.termination=150ms", "seed=3",
		"faults[0].at=100ms", "faults.0.target=n7", "workload.initiators=[\"n8\"]", "checksums=false",
		"name=with space", "network.latency=7ms")...)
	if err != nil {
		t.Fatal(err)
	}
	if s.Nodes != 9 || s.Seed != 3 || s.ChecksumsOn() || s.Name != "with space" {
		t.Errorf("nodes %d seed %d checksums %v name %q; want 9, 3, false, \"with space\"", s.Nodes, s.Seed, s.ChecksumsOn(), s.Name)
	}
	if s.Network.Latency.D != 7*time.Millisecond {
		t.Errorf("latency %s, want the last override's 7ms", s.Network.Latency.D)
	}
	if s.Checks.Termination.D != 150*time.Millisecond {
		t.Errorf("termination %s, want 150ms", s.Checks.Termination.D)
	}
	f := s.NemesisFaults()[0]
	if f.At != 100*time.Millisecond || f.Target.Nodes[0] != "n7" {
		t.Errorf("fault at %s on %v, want 100ms on n7", f.At, f.Target)
	}
	if len(s.IDs) != 9 || s.Workload.Initiators[0] != "n8" {
		t.Errorf("ids %v, initiators %v", s.IDs, s.Workload.Initiators)
	}
	// The file's other keys stay.
	if s.Recovery.D != 200*time.Millisecond || s.Algorithm != "chang-roberts" {
		t.Errorf("recovery %s algorithm %s: the file's keys were lost", s.Recovery.D, s.Algorithm)
	}

	// Rates are floats; an integer will do.
	m, err := Parse("mutex.toml", goodMutex, mustSet(t, "workload.rate=50", "params.x=1")[:1]...)
	if err != nil || m.Workload.Rate != 50 {
		t.Errorf("rate: %v, %v", m.Workload.Rate, err)
	}
	// A parameter of the algorithm is typed by its value.
	b, err := Parse("bully.toml", "algorithm = \"bully\"\nnodes = 3\n", mustSet(t, "params.t_trans=20ms", "params.probe_every=40ms")...)
	if err != nil || b.Params["t_trans"] != "20ms" {
		t.Errorf("params %v, %v", b.Params, err)
	}
	// Without an override or a seed in the file, the seed is 1.
	if d, _ := Parse("good.toml", good, mustSet(t, "nodes=6")...); d.Seed != 1 {
		t.Errorf("seed %d, want 1", d.Seed)
	}
}

// A bad override is refused with the flag named: first its key and
// syntax, then its value, by the validation a file's value gets.
func TestBadOverrides(t *testing.T) {
	syntax := []struct{ arg, want string }{
		{"nodes", "--set nodes: want key=value"},
		{"=3", "--set =3: no key"},
		{"nodes=five", `--set nodes=five: want an integer, got "five"`},
		{"checksums=yes", `--set checksums=yes: want true or false`},
		{"workload.rate=fast", `--set workload.rate=fast: want a number`},
		{"workload.rate=NaN", `--set workload.rate=NaN: want a number`},
		{"network.latncy=5ms", "--set network.latncy=5ms: unknown key network.latncy (did you mean network.latency?)"},
		{"fautls[0].at=5ms", "did you mean faults[0].at?"},
		{"latency=5ms", "did you mean network.latency?"},
		{"recovery_window=1s", "--set recovery_window=1s: unknown key recovery_window (did you mean recovery?)"},
		{"network=5ms", "--set network=5ms: network is a table: set one of its keys (fifo, jitter, latency)"},
		{"faults.at=5ms", "faults is an array of tables"},
		{"nodes.x=1", "nodes holds a value"},
		{"ids=3", "want an array"},
		{"faults[x].at=1s", "bad index"},
		{"params=1", "set one key of params"},
	}
	for _, tt := range syntax {
		_, err := ParseSet(tt.arg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSet(%q) = %v, want an error with %q", tt.arg, err, tt.want)
		}
	}
	values := []struct{ arg, want string }{
		{"network.latency=5xs", `--set network.latency=5xs: bad duration "5xs": write a number with a unit, like "150ms" or "2s" (scenario good.toml)`},
		{"nodes=0", "--set nodes=0: must be at least 1, got 0"},
		{"checks.termination=2s", "--set checks.termination=2s: 2s is longer than the recovery window"},
		{"algorithm=bulli", `--set algorithm=bulli: unknown algorithm "bulli" (did you mean "bully"?`},
		{"faults[0].kind=partiton", `--set faults[0].kind=partiton: unknown fault "partiton" (did you mean "partition"?`},
		{"faults[3].at=5ms", "--set faults[3].at=5ms: faults[3] is not in the file, which has only faults[0]"},
		{"ids=[\"a\"]", "--set ids=[\"a\"]:"},
		{"params.speed=3", "--set params.speed=3: unknown parameter"},
	}
	for _, tt := range values {
		_, err := Parse("good.toml", good, mustSet(t, tt.arg)...)
		var e *Error
		if !errors.As(err, &e) || e.Flag != "--set "+tt.arg || !strings.Contains(e.Error(), tt.want) {
			t.Errorf("--set %s: got %v, want an error naming the flag with %q", tt.arg, err, tt.want)
		}
	}
	// An error elsewhere in the file says which overrides were in force.
	_, err := Parse("good.toml", good, mustSet(t, "nodes=3")...)
	if err == nil || !strings.Contains(err.Error(), `good.toml:15:1: faults[0].target: "n4" names no node`) || !strings.Contains(err.Error(), "(with --set nodes=3)") {
		t.Errorf("got %v, want the target's line and the override named", err)
	}
}

// Every example of docs/scenarios.md's overrides loads.
func TestDocumentedOverridesLoad(t *testing.T) {
	b, err := os.ReadFile("../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Overriding keys from the command line")
	if !ok {
		t.Fatal("docs/scenarios.md has no section on overrides")
	}
	_, block, _ := strings.Cut(sec, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		words := shellWords(line)
		var sets []Override
		file := ""
		for i := 2; i < len(words); i++ {
			switch words[i] {
			case "--set":
				i++
				o, err := ParseSet(words[i])
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				sets = append(sets, o)
			case "--seed":
				i++
				o, err := NewOverride("seed", words[i], "--seed "+words[i])
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				sets = append(sets, o)
			default:
				file = words[i]
			}
		}
		if _, err := Load(filepath.Join("..", file), sets...); err != nil {
			t.Errorf("%s: %v", line, err)
		}
		n++
	}
	if n < 3 {
		t.Errorf("%d examples, want some", n)
	}
}

// shellWords splits a line at spaces, keeping single-quoted words whole.
func shellWords(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// No key or value given on the command line makes the scenario package
// panic, and a scenario accepted with overrides is a valid one.
func FuzzOverride(f *testing.F) {
	for _, s := range []string{"nodes=9", "network.latency=5ms", "faults[0].at=1ms", "faults.0.when.node=n1",
		"params.x=[1", "ids=[1,2,3,4,5]", "faults[9].at=1s", "checks.run=[\"two-leaders\"]", "a.b.c.d=1", "faults[0]x.at=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		o, err := ParseSet(arg)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--set ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		s, err := Parse("good.toml", good, o)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a *scenario.Error", err)
			}
			return
		}
		if s.Nodes < 1 || len(s.IDs) != s.Nodes {
			t.Fatalf("accepted %d nodes with ids %v", s.Nodes, s.IDs)
		}
	})
}
