package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const goodKV = `command = ["./kvnode"]
nodes = 3
duration = "500ms"
recovery = "400ms"

[workload]
kind = "lin-kv"
timeout = "200ms"
`

// A foreign node with a lin-kv workload gets the workload's defaults and
// kv-linearizable, not the election checks; with echo, the echo check.
func TestKVDefaults(t *testing.T) {
	s, err := Parse("kv.toml", goodKV)
	if err != nil {
		t.Fatal(err)
	}
	w := s.Workload
	if w.Clients != 3 || w.Rate != DefaultRate || w.Keys != DefaultKeys || w.Values != DefaultValues || w.Mix != nil || w.Timeout.D != 200*time.Millisecond {
		t.Errorf("workload %+v: want 3 clients, rate %v, %d keys, %d values, no mix, timeout 200ms", w, DefaultRate, DefaultKeys, DefaultValues)
	}
	if got, want := strings.Join(w.Targets, ","), "n1,n2,n3"; got != want {
		t.Errorf("targets %s, want %s", got, want)
	}
	if got, want := strings.Join(s.Checks.Run, ","), "kv-linearizable"; got != want {
		t.Errorf("checks %s, want %s", got, want)
	}
	if s.Kind() != "lin-kv" {
		t.Errorf("Kind() = %q, want lin-kv", s.Kind())
	}
	e, err := Parse("echo.toml", strings.Replace(goodKV, `kind = "lin-kv"`, "kind = \"echo\"\nclients = 2\nrate = 50", 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.Checks.Run, ","); got != "echo" || e.Kind() != "echo" || e.Workload.Clients != 2 || e.Workload.Rate != 50 {
		t.Errorf("echo: checks %s, kind %q, workload %+v", got, e.Kind(), e.Workload)
	}
	m, err := Parse("mix.toml", goodKV+"keys = 10\nvalues = 3\nmix = { read = 2, write = 1 }\n")
	if err != nil {
		t.Fatal(err)
	}
	if w := m.Workload; w.Keys != 10 || w.Values != 3 || w.Mix == nil || w.Mix.Read != 2 || w.Mix.Write != 1 || w.Mix.Cas != 0 {
		t.Errorf("workload %+v, mix %+v", w, w.Mix)
	}
	// Encoded and parsed again, the keys survive.
	back, err := Parse("mix.toml", string(m.Encode("")))
	if err != nil {
		t.Fatal(err)
	}
	if w := back.Workload; w.Kind != "lin-kv" || w.Keys != 10 || w.Values != 3 || w.Mix == nil || *w.Mix != *m.Workload.Mix {
		t.Errorf("encoded and parsed again: %+v\n%s", w, m.Encode(""))
	}
}

func TestBadKVScenarios(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		line  int
		field string
		msg   string
	}{
		{"a built-in algorithm", strings.Replace(goodKV, `command = ["./kvnode"]`, `algorithm = "bully"`, 1), 7, "workload.kind", "served by a node program of your own (command)"},
		{"hold", goodKV + "hold = \"5ms\"\n", 9, "workload.hold", `only for kind = "mutex" (this workload is "lin-kv")`},
		{"initiators", goodKV + "initiators = [\"n1\"]\n", 9, "workload.initiators", `only for kind = "election"`},
		{"keys for echo", strings.Replace(goodKV, `"lin-kv"`, `"echo"`, 1) + "keys = 4\n", 9, "workload.keys", `only for kind = "lin-kv" (this workload is "echo")`},
		{"keys for a lock", strings.Replace(goodKV, `"lin-kv"`, `"mutex"`, 1) + "mix = { read = 1 }\n", 9, "workload.mix", `only for kind = "lin-kv"`},
		{"clients for an election", strings.Replace(goodKV, `"lin-kv"`, `"election"`, 1) + "clients = 2\n", 9, "workload.clients", `only for kind = "mutex", "lin-kv", "set" or "echo"`},
		{"no keys", goodKV + "keys = -1\n", 9, "workload.keys", "from 1 to"},
		{"no values", goodKV + "values = -3\n", 9, "workload.values", "from 1 to"},
		{"a negative weight", goodKV + "mix = { read = 1, write = -1 }\n", 9, "workload.mix.write", "0 or more"},
		{"every weight zero", goodKV + "mix = { read = 0 }\n", 9, "workload.mix", "every weight is 0"},
		{"only reads", goodKV + "mix = { read = 1 }\n", 9, "workload.mix", "only reads"},
		{"a misspelt weight", goodKV + "mix = { raed = 1 }\n", 9, "workload.mix.raed", "did you mean workload.mix.read"},
		{"a misspelt kind", strings.Replace(goodKV, `"lin-kv"`, `"linkv"`, 1), 7, "workload.kind", `did you mean "lin-kv"`},
		{"a negative rate", goodKV + "rate = -1\n", 9, "workload.rate", "positive number of operations per second"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.toml", tt.src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *scenario.Error", err)
			}
			if e.Line != tt.line || e.Field != tt.field || !strings.Contains(e.Error(), tt.msg) {
				t.Errorf("got %q (line %d, field %q), want line %d, field %q, message with %q", e, e.Line, e.Field, tt.line, tt.field, tt.msg)
			}
		})
	}
}
