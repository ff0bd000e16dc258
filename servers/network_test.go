package servers

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/needs"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers/hostnet"
)

// A run on coup's network: each host's server starts inside its own
// namespace (it binds its namespace's address, which exists nowhere
// else), its ready port is dialled from inside, its datagrams to the
// other host cross coup's network and a partition cuts them, the run
// says which network it had, and no namespace is left after.
func TestRunOnCoupsNetwork(t *testing.T) {
	if err := hostnet.Available(); err != nil {
		t.Skipf("coup's network cannot be made here: %v (runs get the proxy)", err)
	}
	needs.Program(t, "python3", "python3")
	src := `nodes = 2
duration = "3s"
recovery = "500ms"
[server]
network = "namespaces"
# Each server listens on its port (TCP, for ready) and sends a datagram
# to the other host every 20ms.
command = ["python3", "-c", """
import socket, time
s = socket.socket(); s.bind(("{{.Host}}", {{.Port.up}})); s.listen()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("{{.Host}}", 0))
print("{{.ID}} {{if eq .ID "n1"}}leads{{else}}idle{{end}}", flush=True)
while True:
    {{range .Nodes}}{{if ne .ID $.ID}}u.sendto(b"x", ("{{.Host}}", 9))
    {{end}}{{end}}time.sleep(0.02)
"""]
ports = ["up"]
[[server.log]]
match = '^(?P<self>n1) leads'
role = "leader"
[[faults]]
kind = "partition"
shape = "isolate"
target = "n1"
at = "1s"
for = "1s"
[checks]
run = ["two-leaders"]
`
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "net.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.NotStarted() {
		t.Fatalf("the run did not start: %s", res.Error)
	}
	if res.Network != scenario.NetworkNamespaces {
		t.Errorf("results say network %q, want %q", res.Network, scenario.NetworkNamespaces)
	}
	c := res.Stats.Counts
	// About 150 datagrams each way in 3s, less the 50 of the cut.
	for _, key := range []string{history.CountNetLink + ".n1>n2.packets", history.CountNetLink + ".n2>n1.packets"} {
		if c[key] < 20 {
			t.Errorf("%s = %d: the hosts' datagrams did not cross coup's network", key, c[key])
		}
	}
	if c[history.CountNetCut] < 10 {
		t.Errorf("%s = %d: the partition cut no datagram", history.CountNetCut, c[history.CountNetCut])
	}
	if _, ok := c[history.CountLinkConns]; ok {
		t.Errorf("a run on coup's network counted proxy connections: %v", c)
	}
	if left := hostnet.Ours(); len(left) > 0 {
		t.Errorf("namespaces left after the run: %v", left)
	}
}
