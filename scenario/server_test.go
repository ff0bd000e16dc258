package scenario

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	if sv.Links != LinksAddress || sv.Ready.Port != "peer" || sv.PollEvery.D != DefaultPollEvery || sv.StartTimeout.D != DefaultStartTimeout {
		t.Errorf("defaults: links %q ready %q poll_every %s start_timeout %s", sv.Links, sv.Ready.Port, sv.PollEvery.D, sv.StartTimeout.D)
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

// network defaults to auto; on coup's network (namespaces) peer ports may
// be left out and packets may be duplicated, which the proxy refuses.
func TestServerNetwork(t *testing.T) {
	s, err := Parse("svc.toml", goodServer)
	if err != nil {
		t.Fatal(err)
	}
	if s.Server.Network != NetworkAuto {
		t.Errorf("network %q by default, want %q", s.Server.Network, NetworkAuto)
	}
	src := strings.Replace(goodServer, "peer = [\"peer\"]\n", "network = \"namespaces\"\n", 1)
	src = strings.Replace(src, "kind = \"partition\"\nshape = \"isolate\"\ntarget = \"n1\"", "kind = \"duplicate\"", 1)
	s, err = Parse("svc.toml", src)
	if err != nil {
		t.Fatalf("namespaces, no peer, a duplicate fault: %v", err)
	}
	if s.Server.Network != NetworkNamespaces || len(s.Server.Peer) != 0 {
		t.Errorf("network %q, peer %v", s.Server.Network, s.Server.Peer)
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
		{"unknown network", `peer = ["peer"]`, "peer = [\"peer\"]\nnetwork = \"ether\"", "server.network", "unknown \"ether\" (known: auto, namespaces, proxy)"},
		{"no peer on the proxy", "peer = [\"peer\"]\n", "", "server.peer", "network = \"namespaces\""},
		{"duplicate on the proxy", "kind = \"partition\"\nshape = \"isolate\"\ntarget = \"n1\"", `kind = "duplicate"`, "faults[0].kind", "no meaning for real servers"},
		{"bad group", `role = "leader"`, "role = \"leader\"\n[[server.log]]\nmatch = '(?P<boss>x)'", "server.log[1].match", "means nothing"},
		{"bad regexp", `role = "leader"`, "role = \"leader\"\n[[server.log]]\nmatch = '('", "server.log[1].match", "not a regular expression"},
		{"bad role", `role = "leader"`, `role = "king"`, "server.log[0].role", "unknown role"},
		{"bad template", `ports = ["peer", "status"]`, "ports = [\"peer\", \"status\"]\nreplace = [\"{{.Nope}}\"]", "server.replace[0]", "Nope"},
		{"poll with two sources", `http = "http://{{.Addr.status}}/status"`, "http = \"http://x\"\n  file = \"f\"", "server.poll[0]", "exactly one"},
		{"timely fault", `kind = "partition"`, `kind = "timely"`, "faults[0].kind", "no meaning for real servers"},
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
		{"unknown client", `peer = ["peer"]`, "peer = [\"peer\"]\nclient = \"mongodb\"", "server.client", "unknown client"},
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

// A preset is adapted by keys, without copying its command: another
// program, arguments added at the end (etcd) or where the preset says
// (ZooKeeper: before the main class, with the JVM's flags), the server's
// own timeouts written where it reads them, and files added to the
// preset's.
func TestServerPresetAdapted(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("etcd.toml", `nodes = 3
[server]
preset = "etcd"
program = "`+exe+`"
extra_args = ["--pre-vote", "--name-again={{.ID}}"]
election_timeout = "1500ms"
heartbeat_every = "150ms"
`)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Server.Render(SampleServerNodes(s)[1])
	if err != nil {
		t.Fatal(err)
	}
	cmd := r.Command
	if cmd[0] != exe || cmd[1] != "--name" || !slices.Equal(cmd[len(cmd)-2:], []string{"--pre-vote", "--name-again=n2"}) {
		t.Errorf("etcd's command %q, want the program first and the extra arguments last", cmd)
	}
	if j := strings.Join(cmd, " "); !strings.Contains(j, "--election-timeout 1500 --heartbeat-interval 150 ") {
		t.Errorf("etcd's command %q, want its timeouts in milliseconds", cmd)
	}
	// The preset's own values when the scenario gives none: etcd's defaults.
	s, err = Parse("etcd.toml", "nodes = 3\n[server]\npreset = \"etcd\"\n")
	if err != nil {
		t.Fatal(err)
	}
	r, _ = s.Server.Render(SampleServerNodes(s)[0])
	if j := strings.Join(r.Command, " "); !strings.Contains(j, "--election-timeout 1000 --heartbeat-interval 100 ") || r.Command[0] != "etcd" {
		t.Errorf("etcd's default command %q", r.Command)
	}

	s, err = Parse("zk.toml", `nodes = 3
[server]
preset = "zookeeper"
extra_args = ["-Dzookeeper.leaderServes=no"]
tick = "250ms"
[server.files]
"conf/extra.cfg" = "x"
`)
	if err != nil {
		t.Fatal(err)
	}
	r, err = s.Server.Render(SampleServerNodes(s)[0])
	if err != nil {
		t.Fatal(err)
	}
	main := slices.Index(r.Command, "org.apache.zookeeper.server.quorum.QuorumPeerMain")
	if main < 1 || r.Command[main-1] != "-Dzookeeper.leaderServes=no" || !strings.HasSuffix(r.Command[len(r.Command)-1], "/zoo.cfg") {
		t.Errorf("ZooKeeper's command %q, want the flag just before the main class and zoo.cfg last", r.Command)
	}
	if !strings.Contains(r.Files["zoo.cfg"], "tickTime=250\n") || r.Files["data/myid"] != "1\n" || r.Files["conf/extra.cfg"] != "x" {
		t.Errorf("ZooKeeper's files %q, want the preset's, with tickTime=250, and the scenario's", r.Files)
	}
	// Encoded and read back, the scenario says the same.
	back, err := Parse("zk.toml", string(s.Encode("")))
	if err != nil {
		t.Fatal(err)
	}
	if r2, _ := back.Server.Render(SampleServerNodes(back)[0]); !slices.Equal(r2.Command, r.Command) || !maps.Equal(r2.Files, r.Files) {
		t.Errorf("encoded and read back: %q %q, want %q %q", r2.Command, r2.Files, r.Command, r.Files)
	}
}

// A program given as a path is taken from the scenario's folder, and
// must be there, a file, and executable.
func TestServerProgram(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin", "folder"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "my-etcd"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "plain"), []byte("x"), 0o644)
	file := filepath.Join(dir, "etcd.toml")
	src := func(program string) string {
		return "nodes = 3\n[server]\npreset = \"etcd\"\nprogram = \"" + program + "\"\n"
	}
	s, err := Parse(file, src("bin/my-etcd"))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Server.Render(SampleServerNodes(s)[0]); r.Command[0] != filepath.Join(dir, "bin", "my-etcd") {
		t.Errorf("program %q, want it from the scenario's folder", r.Command[0])
	}
	// Written elsewhere (a shrunk scenario), it names the same program.
	back, err := Parse(filepath.Join(t.TempDir(), "shrunk.toml"), string(s.Encode("")))
	if err != nil {
		t.Fatal(err)
	}
	if back.Server.Program != filepath.Join(dir, "bin", "my-etcd") {
		t.Errorf("encoded and read from another folder, program %q", back.Server.Program)
	}
	for _, tt := range []struct{ program, msg string }{
		{"bin/nothing", "does not exist"},
		{"/nonexistent/etcd", "does not exist"},
		{"bin/folder", "is a folder"},
		{"bin/plain", "not executable"},
		{"no-such-program-coup", "not found on PATH"},
	} {
		t.Run(tt.program, func(t *testing.T) { badKey(t, file, src(tt.program), "server.program", 4, tt.msg) })
	}
}

// Bad adaptations are refused with the key and its line.
func TestServerBadAdaptations(t *testing.T) {
	etcd := "nodes = 3\n[server]\npreset = \"etcd\"\n"
	zk := "nodes = 3\n[server]\npreset = \"zookeeper\"\n"
	tests := []struct {
		name, src, field string
		line             int
		msg              string
	}{
		{"extra args not a list", etcd + "extra_args = \"--pre-vote\"\n", "server.extra_args", 4, "list of strings"},
		{"extra args not strings", etcd + "extra_args = [\"--pre-vote\", 3]\n", "server.extra_args", 4, "list of strings"},
		{"bad extra arg template", etcd + "extra_args = [\"--pre-vote\", \"{{.Nope}}\"]\n", "server.extra_args[1]", 4, "Nope"},
		{"extra args before nothing", etcd + "extra_args_before = \"--nope\"\n", "server.extra_args_before", 4, "not an element of the command"},
		{"extra args before the program", etcd + "extra_args_before = \"etcd\"\n", "server.extra_args_before", 4, "is the program"},
		{"tick on etcd", etcd + "tick = \"1s\"\n", "server.tick", 4, "its timeouts are election_timeout and heartbeat_every"},
		{"election timeout on ZooKeeper", zk + "election_timeout = \"1s\"\n", "server.election_timeout", 4, "its timeouts are tick"},
		{"timeout on a description without any", strings.Replace(goodServer, "peer = [\"peer\"]\n", "peer = [\"peer\"]\ntick = \"1s\"\n", 1), "server.tick", 8, "no timeouts of its own"},
		{"bad timeout", etcd + "heartbeat_every = \"fast\"\n", "server.heartbeat_every", 4, "bad duration"},
		{"zero timeout", etcd + "heartbeat_every = \"0s\"\n", "server.heartbeat_every", 4, "more than zero"},
		{"sub-millisecond timeout", zk + "tick = \"500500us\"\n", "server.tick", 4, "whole number of milliseconds"},
		{"etcd heartbeat too long", etcd + "heartbeat_every = \"300ms\"\n", "server.heartbeat_every", 4, "under 5 heartbeats"},
		{"etcd election timeout too short", etcd + "heartbeat_every = \"300ms\"\nelection_timeout = \"1s\"\n", "server.election_timeout", 5, "under 5 heartbeats"},
		{"etcd election timeout too long", etcd + "election_timeout = \"51s\"\n", "server.election_timeout", 4, "over 50s"},
		{"ZooKeeper session under 2 ticks", zk + "tick = \"2s\"\n[workload]\nkind = \"mutex\"\n", "server.tick", 4, "2 to 20 ticks"},
		{"ZooKeeper session over 20 ticks", zk + "tick = \"100ms\"\nlock_ttl = \"3s\"\n[workload]\nkind = \"mutex\"\n", "server.lock_ttl", 5, "2 to 20 ticks"},
		{"template writes an unset timeout", strings.Replace(goodServer, `"--id", "{{.ID}}"`, `"--id", "{{.ID}}", "--tick={{.Tick.Ms}}"`, 1), "server.command[3]", 5, "sets no tick"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { badKey(t, "svc.toml", tt.src, tt.field, tt.line, tt.msg) })
	}
	// The same keys within what the server takes are accepted.
	for _, src := range []string{
		etcd + "heartbeat_every = \"300ms\"\nelection_timeout = \"1500ms\"\n",
		zk + "tick = \"2s\"\nlock_ttl = \"4s\"\n[workload]\nkind = \"mutex\"\n",
		strings.Replace(strings.Replace(goodServer, `"--id", "{{.ID}}"`, `"--id", "{{.ID}}", "--tick={{.Tick.Ms}}"`, 1), "peer = [\"peer\"]\n", "peer = [\"peer\"]\ntick = \"1s\"\n", 1),
	} {
		if _, err := Parse("svc.toml", src); err != nil {
			t.Errorf("%v, for\n%s", err, src)
		}
	}
}

// The catalogue's pre-vote scenario adapts etcd's preset by extra_args
// alone: every member's command is the preset's, with --pre-vote last.
func TestCataloguePreVote(t *testing.T) {
	s, err := Load("../scenarios/etcd-leader-isolated-pre-vote.toml")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Parse("etcd.toml", "nodes = 3\n[server]\npreset = \"etcd\"\n")
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range SampleServerNodes(s) {
		r, err := s.Server.Render(n)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := plain.Server.Render(SampleServerNodes(plain)[i])
		if want := append(p.Command, "--pre-vote"); !slices.Equal(r.Command, want) {
			t.Errorf("%s's command %q, want the preset's with --pre-vote last", n.ID, r.Command)
		}
	}
}
