package drivers

import (
	"strings"
	"testing"

	"github.com/coupharness/coup/scenario"
)

func TestChoose(t *testing.T) {
	machine := &scenario.Scenario{File: "m.toml", Algorithm: "bully"}
	program := &scenario.Scenario{File: "p.toml", Command: []string{"./node"}}
	server := &scenario.Scenario{File: "s.toml", Server: &scenario.Server{}}
	tests := []struct {
		name    string
		sc      *scenario.Scenario
		ask     string
		want    string
		wantErr string
	}{
		{"a state machine simulates by default", machine, "", Sim, ""},
		{"a state machine's real driver", machine, Real, Processes, ""},
		{"a state machine on processes", machine, Processes, Processes, ""},
		{"a program runs as processes", program, "", Processes, ""},
		{"a program is not simulated", program, Sim, "", "sim: p.toml runs on processes only"},
		{"servers by default", server, "", Servers, ""},
		{"servers are real", server, Real, Servers, ""},
		{"servers not as processes", server, Processes, "", "processes: s.toml runs on servers only"},
		{"an unknown name", machine, "simm", "", `"simm": want sim, processes or servers`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Choose(tt.sc, tt.ask)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("Choose(%q) = %v, %v; want the error %q", tt.ask, d, err, tt.wantErr)
				}
				return
			}
			if err != nil || d.Name != tt.want {
				t.Errorf("Choose(%q) = %q, %v; want %q", tt.ask, d.Name, err, tt.want)
			}
		})
	}
}

// Only real servers run as episodes.
func TestEpisodesOnlyOnServers(t *testing.T) {
	machine := &scenario.Scenario{File: "m.toml", Algorithm: "bully"}
	if _, err := (Driver{Name: Processes}).Runner(machine, Options{Episodes: true}); err == nil {
		t.Error("processes ran as episodes")
	}
}
