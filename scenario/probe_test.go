package scenario

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// goodProbes is a host whose server is ready once a command exits 0,
// and whose two sidecars are ready once an HTTP GET answers a matching
// body and once their port accepts connections; the second starts after
// the server, not after the first.
const goodProbes = `nodes = 3
duration = "2s"

[server]
command = ["./svc", "--listen", "{{.Addr.peer}}"]
ports = ["peer", "status"]
peer = ["peer"]
ready = { command = ["./check", "{{.Addr.status}}"] }
isolation = "host"
user = "postgres"

[[server.log]]
match = '(?P<self>n[0-9]+) became leader at term (?P<term>[0-9]+)'
role = "leader"

[[server.sidecar]]
name = "agent"
command = ["./agent"]
ports = ["agent"]
ready = { http = "http://{{.Addr.agent}}/health", match = '"health":\s*"true"' }

[[server.sidecar]]
name = "watch"
command = ["./watch"]
ports = ["watch"]
after = "server"
`

// Probes, after, isolation and user read as written, render per node,
// and encode back to the same.
func TestProbesAndHostKeys(t *testing.T) {
	s, err := Parse("svc.toml", goodProbes)
	if err != nil {
		t.Fatal(err)
	}
	sv := s.Server
	if sv.Isolation != IsolationHost || sv.User != "postgres" {
		t.Errorf("isolation %q user %q", sv.Isolation, sv.User)
	}
	n := SampleServerNodes(s)[0]
	r, err := sv.Render(n)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Ready.Command, []string{"./check", n.Addr["status"]}) || r.Ready.Addr != "" {
		t.Errorf("the server's probe %+v", r.Ready)
	}
	agent, watch := r.Sidecars[0], r.Sidecars[1]
	if agent.Ready.HTTP != "http://"+n.Addr["agent"]+"/health" || agent.Ready.Match == nil || !agent.Ready.Match.MatchString(`{"health": "true"}`) || agent.After != "" {
		t.Errorf("the agent's probe %+v, after %q", agent.Ready, agent.After)
	}
	if watch.Ready.Addr != n.Addr["watch"] || watch.After != "server" || watch.Ready.What != "port watch" {
		t.Errorf("the watch's probe %+v (its port by default), after %q", watch.Ready, watch.After)
	}
	back, err := Parse("svc.toml", string(s.Encode("")))
	if err != nil {
		t.Fatalf("the encoded scenario does not read back: %v\n%s", err, s.Encode(""))
	}
	bs := back.Server
	if !slices.Equal(bs.Ready.Command, sv.Ready.Command) || bs.Sidecars[0].Ready.Match != sv.Sidecars[0].Ready.Match ||
		bs.Sidecars[1].After != "server" || bs.Isolation != IsolationHost || bs.User != "postgres" {
		t.Errorf("read back: %+v", bs)
	}
	// A port's name alone is the probe of today.
	plain, err := Parse("svc.toml", goodServer)
	if err != nil {
		t.Fatal(err)
	}
	if p := plain.Server.Ready; p.Port != "peer" || plain.Server.Isolation != IsolationAuto {
		t.Errorf("defaults: ready %+v, isolation %q", p, plain.Server.Isolation)
	}
}

// Bad probes, after, isolation and user are refused with their key,
// line and column.
func TestBadProbes(t *testing.T) {
	tests := []struct {
		name, old, new string
		field, msg     string
	}{
		{"two probes", `ready = { command = ["./check", "{{.Addr.status}}"] }`, `ready = { command = ["./check"], http = "http://x/" }`, "server.ready", "exactly one of port, command and http"},
		{"unknown probe key", `ready = { command = ["./check", "{{.Addr.status}}"] }`, `ready = { exec = ["./check"] }`, "server.ready", `unknown key "exec"`},
		{"not a port", `ready = { command = ["./check", "{{.Addr.status}}"] }`, `ready = "nope"`, "server.ready", "not one of the ports"},
		{"match on a port", `ready = { command = ["./check", "{{.Addr.status}}"] }`, `ready = { port = "peer", match = "x" }`, "server.ready", "a port gives none"},
		{"bad match", `match = '"health":\s*"true"'`, `match = '(('`, "server.sidecar[0].ready", "not a regular expression"},
		{"bad template", `"./check", "{{.Addr.status}}"`, `"./check", "{{.Addr.nope}}"`, "server.ready.command[1]", "nope"},
		{"a number", `ready = { command = ["./check", "{{.Addr.status}}"] }`, `ready = 5`, "server.ready", "want a port's name"},
		{"after a later sidecar", `after = "server"`, `after = "later"`, "server.sidecar[1].after", "written before this one"},
		{"after itself", `after = "server"`, `after = "watch"`, "server.sidecar[1].after", "is this sidecar"},
		{"unknown isolation", `isolation = "host"`, `isolation = "vm"`, "server.isolation", "unknown isolation"},
		{"bad user", `user = "postgres"`, `user = "post gres"`, "server.user", "not a user's name"},
		{"user in a namespace", `isolation = "host"`, `isolation = "namespace"`, "server.user", "needs root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(goodProbes, tt.old, tt.new, 1)
			if src == goodProbes {
				t.Fatalf("%q not found", tt.old)
			}
			_, err := Parse("svc.toml", src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *scenario.Error", err)
			}
			if e.Field != tt.field || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got %s: %s, want %s: …%s…", e.Field, e.Msg, tt.field, tt.msg)
			}
			if e.Line <= 1 {
				t.Errorf("%s: line %d", e.Field, e.Line)
			}
		})
	}
}

// --set gives a probe as a port's name or as an inline table.
func TestProbeSet(t *testing.T) {
	for _, tt := range []struct{ value, port, http string }{
		{"status", "status", ""},
		{`{ http = "http://{{.Addr.status}}/health", match = "ok" }`, "", "http://{{.Addr.status}}/health"},
	} {
		o, err := ParseSet("server.ready=" + tt.value)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse("svc.toml", goodServer, o)
		if err != nil {
			t.Fatalf("--set server.ready=%s: %v", tt.value, err)
		}
		if p := s.Server.Ready; p.Port != tt.port || p.HTTP != tt.http {
			t.Errorf("--set server.ready=%s: %+v", tt.value, p)
		}
	}
}
