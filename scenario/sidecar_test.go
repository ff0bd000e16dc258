package scenario

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const goodHost = goodServer + `
[[server.sidecar]]
name = "agent"
command = ["./agent", "--listen", "{{.Addr.agent}}", "--server", "{{.Addr.status}}", "--peer", "{{(index .Reach \"n2\").Addr.gossip}}"]
ports = ["agent", "gossip"]
peer = ["gossip"]
ready = "agent"
roles = { primary = "leader" }

[[server.sidecar.poll]]
tcp = "{{.Addr.agent}}"
send = "WHO\r\n"
  [[server.sidecar.poll.match]]
  match = 'epoch (?P<term>[0-9]+)'
`

// A host's sidecar adds its ports (named on the host, beside the
// server's), its peer ports, its polls and its roles to the host's; its
// command renders with the same node as the server's.
func TestSidecarJoinsTheHost(t *testing.T) {
	s, err := Parse("svc.toml", goodHost)
	if err != nil {
		t.Fatal(err)
	}
	sv := s.Server
	if got, want := sv.Ports, []string{"peer", "status", "agent", "gossip"}; !slices.Equal(got, want) {
		t.Errorf("the host's ports %q, want %q", got, want)
	}
	if got := sv.OwnPorts(); !slices.Equal(got, []string{"peer", "status"}) {
		t.Errorf("the server's own ports %q", got)
	}
	if got, want := sv.Peer, []string{"peer", "gossip"}; !slices.Equal(got, want) {
		t.Errorf("the host's peer ports %q, want %q", got, want)
	}
	if len(sv.Poll) != 2 || sv.Poll[1].TCP != "{{.Addr.agent}}" {
		t.Errorf("the host's polls %+v, want the server's and then the sidecar's", sv.Poll)
	}
	if sv.RoleOf("primary") != RoleLeader {
		t.Errorf("the sidecar's role primary reads as %q", sv.RoleOf("primary"))
	}
	if sv.ReadyState != ReadyPort || sv.ReadyTimeout.D != sv.StartTimeout.D {
		t.Errorf("ready %q within %s, want port within the start timeout (%s)", sv.ReadyState, sv.ReadyTimeout.D, sv.StartTimeout.D)
	}
	nodes := SampleServerNodes(s)
	r, err := sv.Render(nodes[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sidecars) != 1 || r.Sidecars[0].Name != "agent" {
		t.Fatalf("rendered sidecars %+v", r.Sidecars)
	}
	want := []string{"./agent", "--listen", nodes[0].Addr["agent"], "--server", nodes[0].Addr["status"], "--peer", nodes[0].Reach["n2"].Addr["gossip"]}
	if !slices.Equal(r.Sidecars[0].Command, want) {
		t.Errorf("n1's sidecar command %q, want %q", r.Sidecars[0].Command, want)
	}
	if len(r.Polls) != 2 || r.Polls[1].TCP != nodes[0].Addr["agent"] {
		t.Errorf("rendered polls %+v", r.Polls)
	}
	if nodes[0].Majority != 2 {
		t.Errorf("the majority of 3 is %d", nodes[0].Majority)
	}
	// Encoded, the scenario reads back the same: the sidecar as written.
	back, err := Parse("svc.toml", string(s.Encode("")))
	if err != nil {
		t.Fatalf("the encoded scenario does not read back: %v\n%s", err, s.Encode(""))
	}
	if !slices.Equal(back.Server.Ports, sv.Ports) || len(back.Server.Sidecars) != 1 || len(back.Server.Poll) != 2 {
		t.Errorf("read back: ports %q, %d sidecars, %d polls", back.Server.Ports, len(back.Server.Sidecars), len(back.Server.Poll))
	}
}

// Bad sidecars and ready states are refused with their key.
func TestBadSidecars(t *testing.T) {
	tests := []struct {
		name, old, new string
		field, msg     string
	}{
		{"no name", `name = "agent"`, `name = ""`, "server.sidecar[0].name", "missing"},
		{"bad name", `name = "agent"`, `name = "../agent"`, "server.sidecar[0].name", "letters, digits"},
		{"no command", `command = ["./agent", "--listen", "{{.Addr.agent}}", "--server", "{{.Addr.status}}", "--peer", "{{(index .Reach \"n2\").Addr.gossip}}"]`, `command = []`, "server.sidecar[0].command", "missing"},
		{"a port of the server's", `ports = ["agent", "gossip"]`, `ports = ["agent", "status"]`, "server.sidecar[0].ports", "named twice on the host"},
		{"peer not its port", `peer = ["gossip"]`, `peer = ["peer"]`, "server.sidecar[0].peer", "not one of the sidecar's ports"},
		{"ready not its port", `ready = "agent"`, `ready = "status"`, "server.sidecar[0].ready", "not one of the sidecar's ports"},
		{"a role two ways", `roles = { primary = "leader" }`, "roles = { primary = \"leader\" }\n[server.roles]\nprimary = \"follower\"", "server.sidecar[0].roles.primary", "two roles"},
		{"bad role", `roles = { primary = "leader" }`, `roles = { primary = "boss" }`, "server.sidecar[0].roles.primary", "unknown role"},
		{"bad poll", `send = "WHO\r\n"`, "send = \"WHO\\r\\n\"\n  file = \"x\"", "server.sidecar[0].poll[0]", "exactly one"},
		{"bad poll template", `tcp = "{{.Addr.agent}}"`, `tcp = "{{.Addr.nope}}"`, "server.sidecar[0].poll[0].tcp", "nope"},
		{"bad command template", `"--listen", "{{.Addr.agent}}"`, `"--listen", "{{.Nope}}"`, "server.sidecar[0].command[2]", "Nope"},
		{"unknown ready state", `peer = ["peer"]`, "peer = [\"peer\"]\nready_state = \"elected\"", "server.ready_state", "unknown ready state"},
		{"bad ready timeout", `peer = ["peer"]`, "peer = [\"peer\"]\nready_timeout = \"0s\"", "server.ready_timeout", "more than zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(goodHost, tt.old, tt.new, 1)
			if src == goodHost {
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
			if e.Line == 0 {
				t.Errorf("%s: no line", e.Field)
			}
		})
	}
}
