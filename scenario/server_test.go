package scenario

import (
	"errors"
	"strings"
	"testing"
)

const goodServer = `nodes = 3
duration = "2s"

[server]
command = ["./svc", "--id", "{{.ID}}", "--listen", "{{.Addr.peer}}", "--peer", "{{(index .Reach \"n2\").Addr.peer}}"]
ports = ["peer", "status"]
peer = ["peer"]

[[server.log]]
match = '(?P<self>n[0-9]+) became leader at term (?P<term>[0-9]+)'
role = "leader"

[[server.poll]]
http = "http://{{.Addr.status}}/status"
  [[server.poll.match]]
  match = '"role":"(?P<role>[a-z]+)"'

[[faults]]
kind = "partition"
shape = "isolate"
target = "n1"
at = "1s"
`

// A generic server description validates, with its defaults, and its
// templates render per node: its own address, and each peer's through
// the proxy (per-link addresses by default).
func TestServerScenario(t *testing.T) {
	s, err := Parse("svc.toml", goodServer)
	if err != nil {
		t.Fatal(err)
	}
	sv := s.Server
	if sv.Links != LinksAddress || sv.Ready != "peer" || sv.PollEvery.D != DefaultPollEvery || sv.StartTimeout.D != DefaultStartTimeout {
		t.Errorf("defaults: links %q ready %q poll_every %s start_timeout %s", sv.Links, sv.Ready, sv.PollEvery.D, sv.StartTimeout.D)
	}
	if s.Algorithm != "server" || s.Workload.Kind != WorkloadNone || s.Elects != "any" {
		t.Errorf("algorithm %q workload %q elects %q", s.Algorithm, s.Workload.Kind, s.Elects)
	}
	if got := s.NemesisFaults()[0].Cut; got != "stall" {
		t.Errorf("a server partition's cut is %q, want stall by default", got)
	}
	nodes := SampleServerNodes(s)
	r, err := sv.Render(nodes[0])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"./svc", "--id", "n1", "--listen", nodes[0].Host + ":10010", "--peer", "127.1.2.1:10020"}
	if strings.Join(r.Command, " ") != strings.Join(want, " ") {
		t.Errorf("n1's command %q, want %q", r.Command, want)
	}
	if r.Polls[0].HTTP != "http://"+nodes[0].Host+":10011/status" {
		t.Errorf("poll %q", r.Polls[0].HTTP)
	}
}

// Under process links every node reaches a peer at the same address, its
// own included, as etcd's cluster id requires.
func TestServerProcessLinks(t *testing.T) {
	s, err := Parse("etcd.toml", "nodes = 3\n[server]\npreset = \"etcd\"\n")
	if err != nil {
		t.Fatal(err)
	}
	nodes := SampleServerNodes(s)
	for _, n := range nodes {
		for _, m := range nodes {
			if n.Reach[m.ID].Addr["peer"] != nodes[0].Reach[m.ID].Addr["peer"] {
				t.Errorf("%s reaches %s at %s, n1 at %s", n.ID, m.ID, n.Reach[m.ID].Addr["peer"], nodes[0].Reach[m.ID].Addr["peer"])
			}
		}
	}
	r, err := s.Server.Render(nodes[1])
	if err != nil {
		t.Fatal(err)
	}
	if cmd := strings.Join(r.Command, " "); !strings.Contains(cmd, "n1=http://127.255.1.1:10011,n2=http://127.255.2.1:10021,n3=http://127.255.3.1:10031") {
		t.Errorf("etcd's initial cluster not the same proxy addresses: %s", cmd)
	}
}

// Bad server descriptions are refused with the key and its line.
func TestBadServerScenarios(t *testing.T) {
	tests := []struct {
		name, old, new string
		field, msg     string
	}{
		{"unknown preset", `[server]`, "[server]\npreset = \"etc\"", "server.preset", "unknown preset"},
		{"both command and server", `nodes = 3`, "nodes = 3\ncommand = [\"x\"]", "command", "not both"},
		{"peer not a port", `peer = ["peer"]`, `peer = ["gossip"]`, "server.peer", "not one of the ports"},
		{"unknown links", `peer = ["peer"]`, "peer = [\"peer\"]\nlinks = \"magic\"", "server.links", "unknown"},
		{"bad group", `role = "leader"`, "role = \"leader\"\n[[server.log]]\nmatch = '(?P<boss>x)'", "server.log[1].match", "means nothing"},
		{"bad regexp", `role = "leader"`, "role = \"leader\"\n[[server.log]]\nmatch = '('", "server.log[1].match", "not a regular expression"},
		{"bad role", `role = "leader"`, `role = "king"`, "server.log[0].role", "unknown role"},
		{"bad template", `ports = ["peer", "status"]`, "ports = [\"peer\", \"status\"]\nreplace = [\"{{.Nope}}\"]", "server.replace[0]", "Nope"},
		{"poll with two sources", `http = "http://{{.Addr.status}}/status"`, "http = \"http://x\"\n  file = \"f\"", "server.poll[0]", "exactly one"},
		{"clock fault", `kind = "partition"`, `kind = "clock"`, "faults[0].kind", "no meaning for real servers"},
		{"echo workload", `at = "1s"`, "at = \"1s\"\n[workload]\nkind = \"echo\"", "workload.kind", "is not served"},
		{"lin-kv workload", `at = "1s"`, "at = \"1s\"\n[workload]\nkind = \"lin-kv\"", "workload.kind", "needs their client"},
		{"mutex workload", `at = "1s"`, "at = \"1s\"\n[workload]\nkind = \"mutex\"", "workload.kind", "needs their client"},
		{"adapter beside a client", `peer = ["peer"]`, "peer = [\"peer\"]\nclient = \"etcd\"\nadapter = [\"./a\"]", "server.adapter", "already drives"},
		{"client processes without a client", `peer = ["peer"]`, "peer = [\"peer\"]\nclient_processes = true", "server.client_processes", "only for a built-in client"},
		{"bad adapter template", `peer = ["peer"]`, "peer = [\"peer\"]\nadapter = [\"./a\", \"{{.ID}}\"]", "server.adapter[1]", "ID"},
		{"empty adapter program", `peer = ["peer"]`, "peer = [\"peer\"]\nadapter = [\"\"]", "server.adapter", "empty"},
		{"holder without client processes", `peer = ["peer"]`, "peer = [\"peer\"]\nclient = \"etcd\"\n[[faults]]\nkind = \"pause\"\ntarget = \"holder\"\nat = \"1s\"\n[workload]\nkind = \"mutex\"", "faults[0].target", "processes of their own"},
		{"holder without a lock", `peer = ["peer"]`, "peer = [\"peer\"]\nadapter = [\"./a\"]\n[[faults]]\nkind = \"pause\"\ntarget = \"holder\"\nat = \"1s\"\n[workload]\nkind = \"lin-kv\"", "faults[0].target", "mutex workload"},
		{"too many client processes", `peer = ["peer"]`, "peer = [\"peer\"]\nadapter = [\"./a\"]\n[workload]\nkind = \"lin-kv\"\nclients = 65", "workload.clients", "at most 64"},
		{"holder crashed", `peer = ["peer"]`, "peer = [\"peer\"]\nadapter = [\"./a\"]\n[[faults]]\nkind = \"crash\"\ntarget = \"holder\"\nat = \"1s\"\n[workload]\nkind = \"mutex\"", "faults[0].target", "only a pause"},
		{"unknown client", `peer = ["peer"]`, "peer = [\"peer\"]\nclient = \"redis\"", "server.client", "unknown client"},
		{"reads without the etcd client", `peer = ["peer"]`, "peer = [\"peer\"]\nreads = \"serializable\"", "server.reads", "only for a client"},
		{"file escapes", `ports = ["peer", "status"]`, "ports = [\"peer\", \"status\"]\nfiles = { \"../x\" = \"y\" }", `server.files."../x"`, "inside the node's folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(goodServer, tt.old, tt.new, 1)
			if src == goodServer {
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
		})
	}
	// cut is for servers only.
	_, err := Parse("x.toml", "algorithm = \"bully\"\nnodes = 3\n[[faults]]\nkind = \"partition\"\nshape = \"halves\"\ncut = \"refuse\"\n")
	var e *Error
	if !errors.As(err, &e) || e.Field != "faults[0].cut" {
		t.Errorf("cut on protocol nodes: %v, want an error on faults[0].cut", err)
	}
}

// badKey parses src and wants an error on field at line.
func badKey(t *testing.T, file, src, field string, line int, msg string) {
	t.Helper()
	_, err := Parse(file, src)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a *scenario.Error", err)
	}
	if e.Field != field || e.Line != line || !strings.Contains(e.Msg, msg) {
		t.Errorf("got %s:%d: %s: %s, want line %d, %s: …%s…", e.File, e.Line, e.Field, e.Msg, line, field, msg)
	}
}

// A key of [server.files] must be a plain path of a file inside the
// node's folder: every other is refused, named as TOML writes it, at its
// line, before anything runs.
func TestServerFileKeys(t *testing.T) {
	tests := []struct{ key, field, msg string }{
		{`""`, `server.files.""`, "empty path"},
		{`"."`, `server.files."."`, "the node's folder itself"},
		{`".."`, `server.files.".."`, "outside it"},
		{`"/etc/passwd"`, `server.files."/etc/passwd"`, "absolute"},
		{`"a/../../b"`, `server.files."a/../../b"`, `".."`},
		{`"a/./b"`, `server.files."a/./b"`, `"."`},
		{`"a//b"`, `server.files."a//b"`, "empty part"},
		{`"conf/"`, `server.files."conf/"`, "a folder"},
		{`"data"`, `server.files.data`, "data folder"},
		{`"a\u0000b"`, `server.files."a\u0000b"`, "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			src := goodServer + "\n[server.files]\n\"ok.cfg\" = \"x\"\n" + tt.key + " = \"y\"\n"
			line := strings.Count(goodServer, "\n") + 4
			badKey(t, "svc.toml", src, tt.field, line, tt.msg)
		})
	}
	// Plain paths, nested ones included, are written.
	s, err := Parse("svc.toml", goodServer+"\n[server.files]\n\"zoo.cfg\" = \"x\"\n\"conf/a.b\" = \"y\"\n\"data/myid\" = \"1\"\n")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Server.Render(SampleServerNodes(s)[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != 3 || r.Files["conf/a.b"] != "y" {
		t.Errorf("files %v, want zoo.cfg, conf/a.b and data/myid", r.Files)
	}
}

// A key of [server.env] must be a variable's name: not empty, no '=' (it
// would end the name) and no NUL; a value holds no NUL either.
func TestServerEnvKeys(t *testing.T) {
	line := strings.Count(goodServer, "\n") + 4
	for _, tt := range []struct{ kv, field, msg string }{
		{`"" = "x"`, `server.env.""`, "empty name"},
		{`"A=B" = "x"`, `server.env."A=B"`, "'='"},
		{`"A\u0000" = "x"`, `server.env."A\u0000"`, "NUL"},
		{`B = "x\u0000y"`, `server.env.B`, "value may not hold a NUL"},
	} {
		t.Run(tt.field, func(t *testing.T) {
			badKey(t, "svc.toml", goodServer+"\n[server.env]\nOK = \"1\"\n"+tt.kv+"\n", tt.field, line, tt.msg)
		})
	}
	s, err := Parse("svc.toml", goodServer+"\n[server.env]\nOK = \"{{.ID}}\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Server.Render(SampleServerNodes(s)[1]); r.Env["OK"] != "n2" {
		t.Errorf("env %v, want OK=n2", r.Env)
	}
}
