package slurmtest

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The cluster runs a job; its daemons' namespace has loopback and nothing
// else; and when the test ends no process of it is left, a job still
// running included, and no file.
func TestClusterRunsAJobAndLeavesNothing(t *testing.T) {
	var c *Cluster
	t.Run("cluster", func(t *testing.T) {
		c = Start(t)
		if ours, _ := os.Readlink("/proc/self/ns/net"); ours == "" || ours == readlink(c.netns) {
			t.Errorf("the daemons' network namespace is the test's (%s)", ours)
		}
		if ifaces := interfaces(t, filepath.Join(filepath.Dir(c.netns), "..", "net", "dev")); len(ifaces) != 1 || ifaces[0] != "lo" {
			t.Errorf("the daemons' namespace has interfaces %v, want lo alone", ifaces)
		}
		out := filepath.Join(t.TempDir(), "hello.txt")
		id, err := c.Command("sbatch", "--parsable", "--output="+out, "--wrap", "echo hello from $SLURM_JOB_ID").Output()
		if err != nil {
			t.Fatal(err)
		}
		jobs := c.Wait(30*time.Second, strings.TrimSpace(string(id)))
		if len(jobs) != 1 || jobs[0].State != "COMPLETED" || jobs[0].ExitCode != "0:0" {
			t.Errorf("the job: %v, want COMPLETED exit 0:0", jobs)
		}
		if b, err := os.ReadFile(out); err != nil || string(b) != "hello from "+jobs[0].ID+"\n" {
			t.Errorf("the job's output: %q (%v)", b, err)
		}
		// A job still running when the test ends is cancelled with it.
		if b, err := c.Command("sbatch", "--parsable", "--output=/dev/null", "--wrap", "sleep 300").CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		c.await(30*time.Second, "a running job", func() bool {
			out, err := c.Command("squeue", "-h", "-t", "RUNNING", "-o", "%i").Output()
			return err == nil && len(strings.TrimSpace(string(out))) > 0
		})
	})
	if c == nil {
		return
	}
	if left := Tagged(c.tag); len(left) > 0 {
		t.Errorf("left after the cluster: %s", describe(left))
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("the cluster's folder %s is left (%v)", c.Dir, err)
	}
}

func readlink(p string) string {
	s, _ := os.Readlink(p)
	return s
}

// interfaces lists the network interfaces of a /proc/PID/net/dev file.
func interfaces(t *testing.T, dev string) []string {
	t.Helper()
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, _, ok := strings.Cut(sc.Text(), ":"); ok && !strings.Contains(name, "|") {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}
