package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Jepsen's set workload on real etcd and ZooKeeper, through their
// clients, to the end of a run: six clients add, every client reads the
// set after the heal, and lost-writes finds every acknowledged add there
// (both acknowledge a write only once a quorum has it).
func TestSetOnRealServers(t *testing.T) {
	for _, preset := range []string{"etcd", "zookeeper"} {
		t.Run(preset, func(t *testing.T) {
			needs(t, preset)
			file := filepath.Join(t.TempDir(), "set.toml")
			src := `nodes = 3
duration = "6s"
recovery = "5s"                  # the final reads, 2.5s after the heal, have time on a loaded machine
[server]
preset = "` + preset + `"
[workload]
kind = "set"
at = "3s"                       # once the servers have elected
clients = 6
rate = 100
`
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			r := coup(t, "run", file) // and no process is left behind
			if r.code != 0 {
				t.Fatalf("exit %d, want 0:\n%s%s", r.code, r.stdout, r.stderr)
			}
			res := readResults(t, filepath.Join(r.store, "set", "latest"))
			lw := checkResult(t, res, "lost-writes")
			fig := func(k string) float64 { n, _ := lw.Figures[k].(float64); return n }
			if lw.Valid != true || fig("acknowledged_present") == 0 || fig("final_reads") < 3 {
				t.Errorf("lost-writes %v with figures %v, want true, adds present, final reads by at least half the clients: %s", lw.Valid, lw.Figures, lw.Explanation)
			}
			if !strings.Contains(r.stdout, "lost-writes") {
				t.Errorf("the summary does not show lost-writes:\n%s", r.stdout)
			}
		})
	}
}
