package scenario

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"latency", "latency", 0},
		{"latnecy", "latency", 1}, // a swap of neighbours is one edit
		{"tagret", "target", 1},
		{"chang-robert", "chang-roberts", 1},
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment, not Damerau: no edit of a swapped pair
		{"αβγ", "αγβ", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

// editDistance agrees with a plain recursive definition on random short
// words.
func TestEditDistanceAgainstNaive(t *testing.T) {
	var naive func(a, b []rune) int
	naive = func(a, b []rune) int {
		if len(a) == 0 {
			return len(b)
		}
		if len(b) == 0 {
			return len(a)
		}
		cost := 1
		if a[len(a)-1] == b[len(b)-1] {
			cost = 0
		}
		d := min(naive(a[:len(a)-1], b)+1, naive(a, b[:len(b)-1])+1, naive(a[:len(a)-1], b[:len(b)-1])+cost)
		if len(a) > 1 && len(b) > 1 && a[len(a)-1] == b[len(b)-2] && a[len(a)-2] == b[len(b)-1] {
			d = min(d, naive(a[:len(a)-2], b[:len(b)-2])+1)
		}
		return d
	}
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		n := rng.IntN(6)
		b := make([]rune, n)
		for i := range b {
			b[i] = rune('a' + rng.IntN(3))
		}
		return string(b)
	}
	for range 2000 {
		a, b := word(), word()
		if got, want := editDistance(a, b), naive([]rune(a), []rune(b)); got != want {
			t.Fatalf("editDistance(%q, %q) = %d, naive says %d", a, b, got, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	algos := []string{"bully", "chang-roberts", "hirschberg-sinclair", "lelann", "omega-etc"}
	tests := []struct {
		word  string
		known []string
		want  string
	}{
		{"chang-robert", algos, "chang-roberts"},
		{"Bully", algos, "bully"},
		{"bulli", algos, "bully"},
		{"lelan", algos, "lelann"},
		{"raft", algos, ""}, // nothing close
		{"b", algos, ""},    // too short to be more than one letter off bully
		{"explode", []string{"crash", "restart", "replace", "pause"}, ""},
		{"partiton", []string{"partition", "pause"}, "partition"},
		{"halfs", []string{"isolate", "halves", "bridge"}, "halves"},
		{"leadr", []string{"leader", "random", "one"}, "leader"},
		{"", algos, ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.word, tt.known); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

// A misspelt key, algorithm, check, fault kind, shape or target is met
// with the nearest known one.
func TestDidYouMean(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		field    string
		suggests string
	}{
		{"top-level key", `algoritm = "bully"` + "\nnodes = 3\n", "algoritm", "did you mean algorithm?"},
		{"key of a table", "algorithm = \"bully\"\nnodes = 3\n[network]\nlatnecy = \"1ms\"\n", "network.latnecy", "did you mean network.latency?"},
		{"key of a fault", faultBase + "kind = \"pause\"\ntagret = \"n1\"\n", "faults[0].tagret", "did you mean faults[0].target?"},
		{"key of the second fault", faultBase + "kind = \"pause\"\ntarget = \"n1\"\n[[faults]]\nkind = \"pause\"\ntarget = \"n2\"\nfro = \"5ms\"\n", "faults[1].fro", "did you mean faults[1].for?"},
		{"key in the wrong table", "algorithm = \"bully\"\nnodes = 3\nlatency = \"1ms\"\n", "latency", "did you mean network.latency?"},
		// A key that holds a known one's words, too far from it to be a
		// misspelling: at the top level as in a table, in any case.
		{"top-level key with a word more", "algorithm = \"bully\"\nnodes = 3\nrecovery_window = \"1s\"\n", "recovery_window", "did you mean recovery?"},
		{"top-level key in camel case", "algorithm = \"bully\"\nnodes = 3\nrecoveryWindow = \"1s\"\n", "recoveryWindow", "did you mean recovery?"},
		{"key of a table with a word more", "algorithm = \"bully\"\nnodes = 3\n[network]\nlatency_window = \"1ms\"\n", "network.latency_window", "did you mean network.latency?"},
		{"key of a fault with a word more", faultBase + "kind = \"pause\"\ntarget = \"n1\"\nfor_duration = \"5ms\"\n", "faults[0].for_duration", "did you mean faults[0].for?"},
		{"key in the wrong table, dashed", "algorithm = \"bully\"\nnodes = 3\nmax-messages = 3\n", "max-messages", "did you mean history.max_messages?"},
		{"key of a trigger", faultBase + "kind = \"replace\"\ntarget = \"n5\"\nwhen = { reprot = \"participant\" }\n", "faults[0].when.reprot", "did you mean faults[0].when.report?"},
		{"table", "algorithm = \"bully\"\nnodes = 3\n[netwrok]\nlatency = \"1ms\"\n", "netwrok", "did you mean network?"},
		{"algorithm", "algorithm = \"chang-robert\"\nnodes = 3\n", "algorithm", `did you mean "chang-roberts"?`},
		{"check", "algorithm = \"bully\"\nnodes = 3\n[checks]\nrun = [\"two-leader\"]\n", "checks.run", `did you mean "two-leaders"?`},
		{"expected violation", "algorithm = \"bully\"\nnodes = 3\n[expect]\nvalid = false\nviolations = [\"agrement\"]\n", "expect.violations", `did you mean "agreement"?`},
		{"fault kind", faultBase + "kind = \"partiton\"\n", "faults[0].kind", `did you mean "partition"?`},
		{"shape", faultBase + "kind = \"partition\"\nshape = \"halfs\"\n", "faults[0].shape", `did you mean "halves"?`},
		{"target pick", faultBase + "kind = \"pause\"\ntarget = \"leadr\"\n", "faults[0].target", `did you mean "leader"?`},
		{"target node", faultBase + "kind = \"pause\"\ntarget = \"N3\"\n", "faults[0].target", `did you mean "n3"?`},
		{"workload", "algorithm = \"bully\"\nnodes = 3\n[workload]\nkind = \"nnoe\"\n", "workload.kind", `did you mean "none"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.toml", tt.src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *scenario.Error", err)
			}
			if e.Field != tt.field || !strings.Contains(e.Msg, tt.suggests) {
				t.Errorf("got %q (field %q), want field %q and %q", e, e.Field, tt.field, tt.suggests)
			}
		})
	}
	// Nothing is suggested for a name far from every known one, nor for a
	// node beyond the scenario's.
	for _, src := range []string{
		"algorithm = \"raft\"\nnodes = 3\n",
		faultBase + "kind = \"pause\"\ntarget = \"n9\"\n",
		"algorithm = \"bully\"\nnodes = 3\nzzzzzz = 1\n",
		"algorithm = \"bully\"\nnodes = 3\n[network]\nwait_at_start = \"1s\"\n",
	} {
		_, err := Parse("bad.toml", src)
		if err == nil || strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%q: got %v, want an error with no suggestion", src, err)
		}
	}
}

// The keys are read off the structs' toml tags: every documented table is
// there, and a key added to a struct would be too.
func TestSchemaFromTags(t *testing.T) {
	for _, path := range []string{"name", "nodes", "seed", "network.latency", "network.fifo", "workload.rate",
		"faults.kind", "faults.target", "faults.when.report", "checks.termination", "checks.run", "expect.violations", "history.messages", "params"} {
		if _, ok := schema()[path]; !ok {
			t.Errorf("schema lacks %s", path)
		}
	}
	if _, ok := schema()["file"]; ok {
		t.Error("schema has file, a field the file does not set")
	}
	if got, want := strings.Join(childKeys("network"), ","), "fifo,jitter,latency"; got != want {
		t.Errorf("keys of network: %s, want %s", got, want)
	}
}
