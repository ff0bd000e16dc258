package servers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers/hostnet"
)

// Patroni's preset starts a cluster of three hosts (etcd and Patroni,
// which runs PostgreSQL as postgres), waits until the primary and both
// replicas are seen, carries the postgres client's set workload (every
// acknowledged add in every final read, each answer naming the host
// that served it), and leaves nothing when the run ends: no process of
// the run (etcd, Patroni, the postmaster and every backend it forked), no
// cgroup, no network namespace.
func TestPatroniPreset(t *testing.T) {
	needsServer(t, "patroni")
	if err := hostnet.Available(); err != nil {
		t.Skipf("the preset runs on coup's network, which cannot be made here: %v", err)
	}
	if _, err := user.Lookup("postgres"); err != nil {
		t.Skipf("the preset runs as postgres: %v", err)
	}
	// The hosts run as postgres, who must reach the node folders: a
	// test's temporary folders are its (root's) alone. The store's path
	// is 100 characters long: PostgreSQL's sockets are in each host's
	// socket folder, so their paths stay short (a socket's path has at
	// most 107 bytes, which the host's own folder would pass).
	top := t.TempDir()
	store := filepath.Join(top, strings.Repeat("s", 100-len(top)-1))
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(top), top, store} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if len(store) != 100 {
		t.Fatalf("the store's path has %d characters, want 100", len(store))
	}
	// The postgres client's set workload: its adds begin once the
	// cluster is ready, its final reads after the end.
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "patroni.toml"), `nodes = 3
duration = "25s"
recovery = "3s"
[server]
preset = "patroni"
[workload]
kind = "set"
clients = 3
rate = 30
timeout = "2s"
[checks]
run = ["one-leader-per-term"]
`)
	if err != nil {
		t.Fatal(err)
	}
	res, dir, err := Run(context.Background(), sc, Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if res.NotStarted() {
		t.Fatalf("not started: %s", res.Error)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	primaries, replicas := 0, 0
	for e := range h.All() {
		if e.Kind != history.KindReport || e.What != history.ReportLeader || e.Term == nil {
			continue
		}
		switch e.Value {
		case e.Node:
			primaries++
		case "":
		default:
			replicas++
		}
	}
	if primaries == 0 || replicas < 2 {
		t.Errorf("the history has %d primaries' and %d replicas' reports with a timeline, want one and two at least", primaries, replicas)
	}

	// Every add acknowledged is in every final read, each served by a
	// host of the run (the primary, found among them all).
	acked := map[string]bool{}
	reads := 0
	for e := range h.All() {
		if e.Kind != history.KindOp || e.Type != history.OpOK {
			continue
		}
		if e.Served == "" || !strings.HasPrefix(e.Served, "n") {
			t.Errorf("an operation served by %q, want a node: %+v", e.Served, e)
		}
		switch e.F {
		case "add":
			acked[e.Value] = true
		case "read":
			reads++
			var got []int64
			if err := json.Unmarshal([]byte(e.Value), &got); err != nil {
				t.Fatalf("a read of the set %q: %v", e.Value, err)
			}
			in := map[string]bool{}
			for _, g := range got {
				in[fmt.Sprint(g)] = true
			}
			for a := range acked {
				if !in[a] {
					t.Errorf("%s's final read lacks the acknowledged add of %s", e.Process, a)
				}
			}
		}
	}
	if len(acked) == 0 || reads != 3 {
		t.Errorf("%d adds acknowledged and %d final reads, want some and 3", len(acked), reads)
	}

	// Every process of the run had its working folder or its command in
	// the run's folder (PostgreSQL's backends retitle themselves, but
	// work in the data folder).
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range pids {
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		if strings.HasPrefix(cwd, dir) || strings.Contains(string(cmd), dir) {
			t.Errorf("process %s (%s) is left after the run", filepath.Base(p), strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	if left, _ := filepath.Glob(fmt.Sprintf("/run/netns/coup-%d-*", os.Getpid())); len(left) > 0 {
		t.Errorf("network namespaces left after the run: %s", strings.Join(left, ", "))
	}
	if mount, err := proc.CgroupMount(); err == nil {
		if own, err := ownCgroup(); err == nil {
			if left, _ := filepath.Glob(filepath.Join(mount, own, fmt.Sprintf("coup-%d-*", os.Getpid()))); len(left) > 0 {
				t.Errorf("cgroups left after the run: %s", strings.Join(left, ", "))
			}
		}
	}
}
