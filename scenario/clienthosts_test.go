package scenario

import (
	"slices"
	"strings"
	"testing"
)

// clientsOn is goodServer with an adapter and a lin-kv workload of four
// clients, [workload] on as given ("" for none).
func clientsOn(on string) string {
	src := strings.Replace(goodServer, `peer = ["peer"]`, "peer = [\"peer\"]\nadapter = [\"./a\"]", 1)
	src += "\n[workload]\nkind = \"lin-kv\"\nclients = 4\n"
	if on != "" {
		src += "on = " + on + "\n"
	}
	return src
}

// [workload] on places each client on a host: one per host in turn by
// default and with "each", all on one named host, or in turn over a list.
func TestClientHosts(t *testing.T) {
	tests := []struct {
		on   string
		want []string // the hosts of c1…c4
	}{
		{"", []string{"n1", "n2", "n3", "n1"}},
		{`"each"`, []string{"n1", "n2", "n3", "n1"}},
		{`"n2"`, []string{"n2", "n2", "n2", "n2"}},
		{`["n3", "n1"]`, []string{"n3", "n1", "n3", "n1"}},
	}
	for _, tt := range tests {
		s, err := Parse("svc.toml", clientsOn(tt.on))
		if err != nil {
			t.Fatalf("on = %s: %v", tt.on, err)
		}
		var got []string
		for i := 1; i <= 4; i++ {
			got = append(got, s.Workload.On.HostOf(i))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("on = %s: hosts %v, want %v", tt.on, got, tt.want)
		}
		// Written back, the scenario places its clients the same way.
		back, err := Parse("svc.toml", string(s.Encode("")))
		if err != nil {
			t.Fatalf("on = %s, encoded: %v\n%s", tt.on, err, s.Encode(""))
		}
		if !slices.Equal(back.Workload.On.Names, s.Workload.On.Names) {
			t.Errorf("on = %s: encoded and read back %v, want %v", tt.on, back.Workload.On.Names, s.Workload.On.Names)
		}
	}
}

// A bad [workload] on is refused at its line, naming the key.
func TestBadClientHosts(t *testing.T) {
	line := strings.Count(clientsOn(""), "\n") + 1
	tests := []struct{ on, msg string }{
		{`"n9"`, "names no node"},
		{`["n1", "each"]`, "stands alone"},
		{`[]`, "an empty list"},
		{`3`, "a node's name"},
		{`["n1", 2]`, "as strings"},
	}
	for _, tt := range tests {
		badKey(t, "svc.toml", clientsOn(tt.on), "workload.on", line, tt.msg)
	}
	badKey(t, "svc.toml", "algorithm = \"bully\"\nnodes = 3\n[workload]\nkind = \"mutex\"\non = \"n1\"\n", "workload.on", 5, "only for real servers")
	badKey(t, "svc.toml", goodServer+"\n[workload]\non = \"n1\"\n", "workload.on", strings.Count(goodServer, "\n")+3, "only for kind")
}
