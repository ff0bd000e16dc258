package scenario

import (
	"errors"
	"strings"
	"testing"
)

func patroniScenario(server, workload string) string {
	return "nodes = 3\nduration = \"1s\"\n[server]\npreset = \"patroni\"\n" + server + "[workload]\nkind = \"" + workload + "\"\n"
}

// The patroni preset's client is the postgres client, for lin-kv and
// sets; a scenario's own Patroni settings go to patroni/scenario.yml,
// beside the preset's patroni/patroni.yml, which it leaves whole.
func TestPostgresClient(t *testing.T) {
	for _, kind := range []string{WorkloadSet, WorkloadLinKV} {
		s, err := Parse("patroni.toml", patroniScenario("[server.files]\n\"patroni/scenario.yml\" = \"bootstrap: {dcs: {synchronous_mode: true}}\\n\"\n", kind))
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if s.Server.Client != ClientPostgres {
			t.Errorf("%s: client %q, want %q", kind, s.Server.Client, ClientPostgres)
		}
		files := s.Server.Files
		if !strings.Contains(files["patroni/patroni.yml"], "scope: coup") || files["patroni/scenario.yml"] != "bootstrap: {dcs: {synchronous_mode: true}}\n" {
			t.Errorf("%s: files %q, want the preset's patroni.yml and the scenario's scenario.yml", kind, files)
		}
	}
}

func TestBadPostgresScenarios(t *testing.T) {
	for _, tt := range []struct {
		name, src, field, msg string
	}{
		{"locks", patroniScenario("", WorkloadMutex), "workload.kind", "not locks"},
		{"client processes", patroniScenario("client_processes = true\n", WorkloadSet), "server.client_processes", "inside coup only"},
		{"reads", patroniScenario("reads = \"sync\"\n", WorkloadSet), "server.reads", "one way to read"},
		{"no PostgreSQL port", "nodes = 3\n[server]\ncommand = [\"svc\"]\nports = [\"client\"]\npeer = [\"client\"]\nclient = \"postgres\"\n" +
			"[[server.log]]\nmatch = 'leader'\nrole = \"leader\"\n[workload]\nkind = \"set\"\n", "server.client", `port "postgres"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.toml", tt.src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *scenario.Error", err)
			}
			if e.Field != tt.field || !strings.Contains(e.Error(), tt.msg) || e.Line == 0 {
				t.Errorf("got %q (line %d, field %q), want field %q, a line, message with %q", e, e.Line, e.Field, tt.field, tt.msg)
			}
		})
	}
}
