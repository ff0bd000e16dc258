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

// Redis with Sentinel, its preset: three hosts, each a redis-server and
// a redis-sentinel; once both replicas have synced, the master's host is
// cut off for 4s. The two other Sentinels promote a replica, and the old
// master, alone, goes on believing it is the master: two masters at once
// (two-leaders false), in different epochs (one-leader-per-term true), the
// terms coming from the Sentinels. No redis process is left afterwards.
func TestRedisSentinelFindsTwoMasters(t *testing.T) {
	needsServer(t, "redis-sentinel")
	src := `nodes = 3
duration = "6s"
recovery = "1s"

[server]
preset = "redis-sentinel"

[[faults]]
kind = "partition"
shape = "isolate"
target = "leader"
at = "500ms"
for = "5s"

[checks]
run = ["two-leaders", "one-leader-per-term"]

[expect]
valid = false
violations = ["two-leaders"]
`
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "redis.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %+v", err, res)
	}
	two := res.Checks["two-leaders"]
	if two.Valid != checks.False || !strings.Contains(two.Explanation, "n1 and ") {
		t.Errorf("two-leaders %s: %s; want the old master n1 beside a new one", two.Valid, two.Explanation)
	}
	if one := res.Checks["one-leader-per-term"]; one.Valid != checks.True || !strings.Contains(one.Explanation, "term 0 n1, term 1 ") {
		t.Errorf("one-leader-per-term %s: %s; want n1 in epoch 0 and the new master in epoch 1", one.Valid, one.Explanation)
	}
	if res.Ready == nil || !res.Ready.Seen || len(res.Ready.FaultsBefore) != 0 {
		t.Errorf("ready %+v: the fault must wait until both replicas have synced", res.Ready)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	terms := map[int64]bool{}
	for _, e := range h.Events {
		if e.Kind == history.KindReport && e.Term != nil {
			terms[*e.Term] = true
		}
	}
	if !terms[0] || !terms[1] {
		t.Errorf("the reports' terms %v, want Sentinel's epochs 0 and 1", terms)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "n*.sentinel.log"))
	if len(logs) != 3 {
		t.Errorf("%d Sentinel logs, want one per host", len(logs))
	}
	all := pids(t, dir)
	if len(all) != 6 {
		t.Errorf("%d pids in the logs, want a redis-server and a redis-sentinel on each of 3 hosts", len(all))
	}
	for _, pid := range all {
		if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
			t.Errorf("redis pid %d still running after the run", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "n2.sentinel.log")); !strings.Contains(string(b), "+switch-master coup") {
		t.Errorf("n2's Sentinel never switched masters:\n%s", b)
	}
}
