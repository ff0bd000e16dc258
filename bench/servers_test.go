package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/internal/needs"
)

// The servers part runs one round of each installed server program on
// both paths, prints a row with figures for each, and leaves no server
// behind.
func TestServersPartRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real etcd and ZooKeeper clusters")
	}
	installed := 0
	for _, k := range serverKinds {
		sc, err := serverScenario(k, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if missingProgram(sc) == "" {
			installed++
		}
	}
	if installed == 0 {
		needs.Skip(t, "etcd-server", "neither etcd nor ZooKeeper is installed")
	}
	dir := t.TempDir()
	res, err := Run(context.Background(), Config{Coup: []string{"unused"}, Parts: []string{PartServers}, Rounds: 1, Dir: dir})
	if left := serversLeft(dir); len(left) > 0 {
		t.Errorf("servers outlived the part: %q", left)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Servers) != len(serverKinds) {
		t.Fatalf("%d server cases, want %d", len(res.Servers), len(serverKinds))
	}
	var b bytes.Buffer
	res.Print(&b)
	out := squash(b.String())
	for _, c := range res.Servers {
		row := c.Kind + ", 3 servers: start to leader"
		if c.Skipped != "" {
			if !strings.Contains(out, row+" not measured: ") {
				t.Errorf("the table lacks %q, not measured:\n%s", row, out)
			}
			continue
		}
		for p := range serverPaths {
			if len(c.Runs[p]) != 1 || c.Runs[p][0] <= 0 {
				t.Errorf("%s, %s: runs %v, failed %q: want one time", c.Kind, serverPathNames[p], c.Runs[p], c.Failed[p])
			}
		}
		num := `[0-9.]+(ms|s)`
		if !regexp.MustCompile(regexp.QuoteMeta(row) + " " + num + " " + num + ` \([0-9.]+×\)`).MatchString(out) {
			t.Errorf("the table lacks %q with both times and their ratio:\n%s", row, out)
		}
	}
}

// serversLeft lists the command lines of etcd and ZooKeeper processes
// whose arguments name a path under dir.
func serversLeft(dir string) []string {
	var left []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		argv := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(argv, dir) && (strings.Contains(argv, "etcd") || strings.Contains(argv, "QuorumPeerMain")) {
			left = append(left, argv)
		}
	}
	return left
}

// The start's length is read from harness.log's "nodes up after" line, as
// the real-server driver writes it; a log without one is an error.
func TestNodesUpAt(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "harness.log")
	text := "start+0.000631s starting 3 servers (etcd)\n" +
		"start+0.007863s n1: started incarnation 1, pid 25941\n" +
		"    0.000208s nodes up after 75ms; running for 12s\n" +
		"    5.000218s nemesis: faults[0]#1 partition start [n1] (due at 5s)\n"
	if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := nodesUpAt(log); err != nil || got != 75*time.Millisecond {
		t.Errorf("nodesUpAt = %s, %v; want 75ms", got, err)
	}
	if err := os.WriteFile(log, []byte("start+0.000631s starting 3 servers (etcd)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := nodesUpAt(log); err == nil {
		t.Error("a log without its nodes-up line gave a time")
	}
}
