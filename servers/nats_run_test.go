package servers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// NATS JetStream, its preset, with Debian's nats-server: three servers
// in one cluster, the stream made on all three before the cluster is
// watched; the run is ready once the stream's leader and both followers
// are seen (each server's /jsz names the same leader), and six clients
// publish for 2s, then read the stream back: every acknowledged publish
// is there (lost-writes true, with adds acknowledged), the routes cross
// coup's network or its proxies, and no nats-server is left.
func TestNatsPresetRuns(t *testing.T) {
	needsServer(t, "nats")
	src := `nodes = 3
duration = "3s"
recovery = "4s"

[server]
preset = "nats"

[workload]
kind = "set"
at = "500ms"
clients = 6
rate = 60
final_after = "1s"

[checks]
run = ["lost-writes", "two-leaders"]
`
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "nats.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %+v", err, res)
	}
	lost := res.Checks["lost-writes"]
	if lost.Valid != checks.True || !strings.Contains(lost.Explanation, "acknowledged and lost 0") || strings.Contains(lost.Explanation, "acknowledged and present 0,") {
		t.Errorf("lost-writes %s: %s; want acknowledged adds, all present", lost.Valid, lost.Explanation)
	}
	if res.Ready == nil || !res.Ready.Seen {
		t.Errorf("ready %+v: the stream's leader and followers were never seen", res.Ready)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	believe := map[string]string{}
	for _, e := range h.Events {
		if e.Kind == history.KindReport && e.What == history.ReportLeader {
			believe[e.Node] = e.Value
		}
	}
	leader := believe["n1"]
	if len(believe) != 3 || leader == "" || believe["n2"] != leader || believe["n3"] != leader || believe[leader] != leader {
		t.Errorf("the servers believe %v, want all three in one stream leader", believe)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "harness.log")); !strings.Contains(string(b), "JetStream's meta leader is") || !strings.Contains(string(b), "the stream coup (R3) was placed") {
		t.Errorf("harness.log names no meta leader, or no stream placed:\n%s", b)
	}
	// n2's route to n1 crosses coup: n1's proxy address on the proxy's
	// network, n1's own address on coup's network of namespaces.
	via := "nats-route://127.255.1."
	if res.Network == "namespaces" {
		via = "nats-route://10.77.0.1:"
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "n2", "nats.conf")); !strings.Contains(string(b), via) {
		t.Errorf("n2's route to n1 does not cross coup (%s network, want %s…):\n%s", res.Network, via, b)
	}
	all := pids(t, dir)
	if len(all) != 3 {
		t.Errorf("%d pids in the logs, want a nats-server on each of 3 hosts", len(all))
	}
	for _, pid := range all {
		if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
			t.Errorf("nats-server pid %d still running after the run", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
