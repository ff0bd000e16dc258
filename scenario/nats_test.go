package scenario

import (
	"errors"
	"strings"
	"testing"
)

// natsScenario is a scenario of the nats preset with extra keys in its
// [server] table, and a set workload.
func natsScenario(server string) string {
	return "nodes = 3\nduration = \"2s\"\n[server]\npreset = \"nats\"\n" + server + "[workload]\nkind = \"set\"\n"
}

// The nats preset reads as a [server] of the generic form: its poll is
// read by the nats reader, its client is nats, and a version names the
// nats-server coup builds; encoded and read again, it is the same.
func TestNatsPreset(t *testing.T) {
	s, err := Parse("nats.toml", natsScenario("version = \"v2.15.2\"\n[server.files]\n\"sync.conf\" = \"sync_interval: always\\n\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	sv := s.Server
	if sv.Client != ClientNats || len(sv.Poll) != 1 || sv.Poll[0].Read != PollReadNats || sv.Links != LinksProcess {
		t.Errorf("client %q, polls %+v, links %q; want the nats client, one poll read by the nats reader, process links", sv.Client, sv.Poll, sv.Links)
	}
	if sv.Version != "2.15.2" {
		t.Errorf("version %q, want 2.15.2 (the v dropped)", sv.Version)
	}
	rd, err := sv.Render(SampleServerNodes(s)[1])
	if err != nil {
		t.Fatal(err)
	}
	conf := rd.Files["nats.conf"]
	for _, want := range []string{"server_name: n2", "include \"sync.conf\"", "advertise: 127.255.2.1:", "nats-route://127.255.1.1:", "nats-route://127.255.3.1:", "no_advertise: true"} {
		if !strings.Contains(conf, want) {
			t.Errorf("n2's nats.conf has no %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "nats-route://127.255.2.1:") {
		t.Errorf("n2's routes name n2 itself:\n%s", conf)
	}
	if rd.Files["sync.conf"] != "sync_interval: always\n" {
		t.Errorf("sync.conf %q, want the scenario's", rd.Files["sync.conf"])
	}
	back, err := Parse("nats.toml", string(s.Encode("")))
	if err != nil {
		t.Fatalf("encoded and read again: %v\n%s", err, s.Encode(""))
	}
	if back.Server.Version != "2.15.2" || back.Server.Poll[0].Read != PollReadNats {
		t.Errorf("encoded and read again: version %q, poll %+v", back.Server.Version, back.Server.Poll[0])
	}
}

func TestBadNatsScenarios(t *testing.T) {
	for _, tt := range []struct {
		name, src, field, msg string
	}{
		{"sync_interval on Debian's", natsScenario("[server.files]\n\"sync.conf\" = \"sync_interval: always\\n\"\n"), `server.files."sync.conf"`, "knows no sync_interval"},
		{"a version that is none", natsScenario("version = \"latest\"\n"), "server.version", "not a release's version"},
		{"a version and a program", natsScenario("version = \"2.15.2\"\nprogram = \"sh\"\n"), "server.version", "not both"},
		{"a version of another preset", strings.Replace(natsScenario("version = \"3.5.0\"\n"), "\"nats\"", "\"etcd\"", 1), "server.version", "only for nats"},
		{"too many nodes", strings.Replace(natsScenario(""), "nodes = 3", "nodes = 7", 1), "nodes", "at most 5"},
		{"a lin-kv workload", strings.Replace(natsScenario(""), "kind = \"set\"", "kind = \"lin-kv\"", 1), "workload.kind", "carries the set workload"},
		{"client processes", natsScenario("client_processes = true\n"), "server.client_processes", "inside coup only"},
		{"an unknown reader", natsScenario("[[server.poll]]\nhttp = \"http://{{.Addr.monitor}}/jsz\"\nread = \"kafka\"\n"), "server.poll[0].read", "unknown reader"},
		{"a reader of a tcp answer", natsScenario("[[server.poll]]\ntcp = \"{{.Addr.monitor}}\"\nread = \"nats\"\n"), "server.poll[0].read", "reads an HTTP answer"},
		{"a reader and patterns", natsScenario("[[server.poll]]\nhttp = \"http://{{.Addr.monitor}}/jsz\"\nread = \"nats\"\n  [[server.poll.match]]\n  match = 'x'\n"), "server.poll[0].match", "not both"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.toml", tt.src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *scenario.Error", err)
			}
			if e.Field != tt.field || !strings.Contains(e.Error(), tt.msg) || e.Line == 0 && tt.field != "nodes" {
				t.Errorf("got %q (line %d, field %q), want field %q, a line, message with %q", e, e.Line, e.Field, tt.field, tt.msg)
			}
		})
	}
}
