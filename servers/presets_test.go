package servers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/coupharness/coup/internal/needs"
	"github.com/coupharness/coup/scenario"
)

// These tests start real etcd and ZooKeeper clusters with their presets,
// adapted by the scenario's keys, and read what the servers themselves
// say they were given. They are skipped where the servers are not
// installed (CI installs them: .ci/run).

func needsServer(t *testing.T, preset string) {
	t.Helper()
	switch preset {
	case "etcd":
		needs.Program(t, "etcd", "etcd-server")
	case "zookeeper":
		needs.File(t, "/usr/share/java/zookeeper.jar", "zookeeper")
		needs.File(t, "/usr/share/java/slf4j-simple.jar", "libslf4j-java")
		needs.Program(t, "java", "zookeeper")
	case "redis-sentinel":
		needs.Program(t, "redis-server", "redis-server")
		needs.Program(t, "redis-sentinel", "redis-sentinel")
	case "patroni":
		needs.Program(t, "etcd", "etcd-server")
		needs.Program(t, "patroni", "patroni")
		needs.File(t, "/usr/lib/postgresql/15/bin/postgres", "postgresql")
	case "nats":
		needs.Program(t, "nats-server", "nats-server")
	}
}

// runPreset runs a short scenario of three servers of the preset, with
// server's keys added to its [server] table, and returns the run's
// folder.
func runPreset(t *testing.T, preset, server string) string {
	t.Helper()
	src := "nodes = 3\nduration = \"1s\"\nrecovery = \"500ms\"\n[server]\npreset = \"" + preset + "\"\n" + server +
		"\n[checks]\nrun = [\"one-leader-per-term\"]\n"
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), preset+".toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.NotStarted() {
		t.Fatalf("not started: %s", res.Error)
	}
	return dir
}

var startLine = regexp.MustCompile(`(?m)^--- coup: incarnation [0-9]+, pid ([0-9]+): (.*)$`)

// started reads a server's log: the pid and the command of each of its
// starts, as coup wrote them.
func started(t *testing.T, dir, node string) (pids []int, commands []string, log string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, node+".log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range startLine.FindAllStringSubmatch(string(b), -1) {
		pid, _ := strconv.Atoi(m[1])
		pids = append(pids, pid)
		commands = append(commands, m[2])
	}
	if len(pids) == 0 {
		t.Fatalf("%s.log has no start line:\n%s", node, b)
	}
	return pids, commands, string(b)
}

// etcd's preset, adapted without copying its command: another program
// (a wrapper that says it ran, then runs etcd), --pre-vote at the end of
// the command, and etcd's own timeouts. etcd's log of its configuration
// says it got each.
func TestEtcdPresetAdapted(t *testing.T) {
	needsServer(t, "etcd")
	etcd, _ := exec.LookPath("etcd")
	wrapper := filepath.Join(t.TempDir(), "my-etcd")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\necho my-etcd wrapper ran >&2\nexec "+etcd+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := runPreset(t, "etcd", `program = "`+wrapper+`"
extra_args = ["--pre-vote"]
election_timeout = "1500ms"
heartbeat_every = "150ms"`)
	for _, n := range []string{"n1", "n2", "n3"} {
		_, commands, log := started(t, dir, n)
		if !strings.HasPrefix(commands[0], `["`+wrapper+`" "--name" "`+n+`"`) || !strings.HasSuffix(commands[0], `"--pre-vote"]`) {
			t.Errorf("%s's command %s, want the wrapper first and --pre-vote last", n, commands[0])
		}
		for _, want := range []string{"my-etcd wrapper ran", `"pre-vote":true`, `"election-timeout":"1.5s"`, `"heartbeat-interval":"150ms"`} {
			if !strings.Contains(log, want) {
				t.Errorf("%s.log does not say %s", n, want)
			}
		}
	}
}

// ZooKeeper's preset, adapted by a JVM flag that ZooKeeper logs (which
// must come before the main class, where the JVM reads it) and another
// tick, in one run (an ensemble takes seconds):
//   - the flag reaches ZooKeeper, which says so in its log, and the tick
//     is its tickTime;
//   - the run leaves nothing in /tmp: no JVM performance data file
//     (/tmp/hsperfdata_USER/PID, where HotSpot puts it whatever TMPDIR
//     says) for any of its servers' pids, although coup ends them with
//     SIGKILL, which leaves the file of a JVM that keeps one.
func TestZooKeeperPreset(t *testing.T) {
	needsServer(t, "zookeeper")
	dir := runPreset(t, "zookeeper", `extra_args = ["-Dzookeeper.closeSessionTxn.enabled=false"]
tick = "400ms"`)
	t.Run("adapted", func(t *testing.T) {
		for _, n := range []string{"n1", "n2", "n3"} {
			_, commands, log := started(t, dir, n)
			if !strings.Contains(commands[0], `"-Dzookeeper.closeSessionTxn.enabled=false" "org.apache.zookeeper.server.quorum.QuorumPeerMain"`) {
				t.Errorf("%s's command %s, want the flag just before the main class", n, commands[0])
			}
			for _, want := range []string{"zookeeper.closeSessionTxn.enabled = false", "tickTime set to 400", "minSessionTimeout set to 800"} {
				if !strings.Contains(log, want) {
					t.Errorf("%s.log does not say %q", n, want)
				}
			}
		}
	})
	t.Run("leaves-no-perf-data", func(t *testing.T) {
		for _, n := range []string{"n1", "n2", "n3"} {
			pids, _, _ := started(t, dir, n)
			for _, pid := range pids {
				left, _ := filepath.Glob(filepath.Join("/tmp", "hsperfdata_*", strconv.Itoa(pid)))
				if len(left) > 0 {
					t.Errorf("%s (pid %d) left %s behind", n, pid, strings.Join(left, ", "))
				}
			}
		}
	})
}
