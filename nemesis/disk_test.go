package nemesis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// diskCluster is a cluster whose nodes have disks: it records each call.
type diskCluster struct{ fakeCluster }

func (c *diskCluster) PowerFail(nodes []string, mode PowerFail, fault string) error {
	c.calls = append(c.calls, fmt.Sprintf("powerfail %s %s %s", strings.Join(nodes, ","), mode, fault))
	return nil
}

func (c *diskCluster) Disk(node string, d DiskFault, start bool) error {
	c.calls = append(c.calls, fmt.Sprintf("disk %s %s start=%v files=%q bits=%d delay=%s %s", node, d.Mode, start, d.Files, d.Bits, d.Delay, d.Fault))
	return nil
}

func runAll(t *testing.T, faults []Fault, c Cluster) {
	t.Helper()
	nodes := []string{"n1", "n2", "n3"}
	for i := range faults {
		if err := faults[i].Check(nodes, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	n := New(Config{Nodes: nodes, Faults: faults, Duration: time.Second, Seed: 1})
	var acts []Action
	acts = append(acts, n.Due(time.Second)...)
	acts = append(acts, n.Heal(time.Second)...)
	for _, a := range acts {
		if err := n.Apply(a, c); err != nil {
			t.Fatal(err)
		}
	}
}

// A power failure of two nodes is one call, both nodes at once, and its
// end restarts them; a disk fault starts and ends on each node, and a
// corruption only starts.
func TestStorageFaultsReachTheCluster(t *testing.T) {
	c := &diskCluster{}
	runAll(t, []Fault{
		{Kind: Crash, PowerFail: Torn, Target: Target{Nodes: []string{"n1", "n2"}}, At: 100 * time.Millisecond, For: 200 * time.Millisecond},
		{Kind: Disk, DiskMode: DiskSlow, Delay: 5 * time.Millisecond, Target: Target{Nodes: []string{"n3"}}, At: 100 * time.Millisecond, For: 100 * time.Millisecond},
		{Kind: Disk, DiskMode: DiskCorrupt, Bits: 2, Files: "*.wal", Target: Target{Nodes: []string{"n3"}}, At: 500 * time.Millisecond},
	}, c)
	want := []string{
		"powerfail n1,n2 torn faults[0]#1",
		`disk n3 slow start=true files="" bits=0 delay=5ms faults[1]#1`,
		`disk n3 slow start=false files="" bits=0 delay=5ms faults[1]#1`,
		"restart n1", "restart n2",
		`disk n3 corrupt start=true files="*.wal" bits=2 delay=0s faults[2]#1`,
	}
	for _, w := range want {
		if !slices.Contains(c.calls, w) {
			t.Errorf("no call %q in %q", w, c.calls)
		}
	}
	if slices.Contains(c.calls, "crash n1") {
		t.Errorf("a power failure was a plain crash too: %q", c.calls)
	}
}

// A driver with no disks refuses storage faults, saying why.
func TestStorageFaultsNeedADisk(t *testing.T) {
	nodes := []string{"n1", "n2", "n3"}
	f := []Fault{{Kind: Crash, PowerFail: LoseUnsynced, Target: Target{Nodes: []string{"n1"}}}}
	f[0].Check(nodes, time.Second)
	n := New(Config{Nodes: nodes, Faults: f, Duration: time.Second, Seed: 1})
	acts := n.Due(0)
	if len(acts) != 1 {
		t.Fatalf("%d actions", len(acts))
	}
	err := n.Apply(acts[0], &fakeCluster{})
	if err == nil || !strings.Contains(err.Error(), "no disk") {
		t.Errorf("a power failure on a driver with no disks: %v", err)
	}
	if got := acts[0].Detail; got != "power failure: lose-unsynced" {
		t.Errorf("detail %q", got)
	}
}
