package raftkv_test

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup"
	"github.com/coupharness/coup/examples/raft/raftkv"
)

func load(t *testing.T, path string) *coup.Scenario {
	t.Helper()
	sc, err := coup.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestLeaderIsolated sweeps 1000 seeds of the leader cut off for a
// second while clients read, write and cas: one leader per term, and
// every operation linearizable. A seed that is not fails the test with
// its store folder and the command that replays it.
func TestLeaderIsolated(t *testing.T) {
	res := coup.Test(t, load(t, "../leader-isolated.toml"), raftkv.Node, coup.Options{Seeds: 1000})
	t.Logf("%d seeds in %s: %.0f seeds/s (GOMAXPROCS %d), %d deliveries",
		res.Seeds, res.Wall.Round(time.Millisecond), float64(res.Seeds)/res.Wall.Seconds(), runtime.GOMAXPROCS(0), res.Deliveries)
}

// TestLocalReadsFound sweeps the broken variant (a leader answers reads
// from its own copy, without ReadIndex or a lease) over the same
// scenario: the sweep finds reads that are not linearizable, and
// shrinking the first failing seed gives a smaller scenario that fails
// the same way.
func TestLocalReadsFound(t *testing.T) {
	dir := t.TempDir()
	res, err := coup.Run(load(t, "../leader-isolated.toml"), raftkv.Broken, coup.Options{
		Seeds: 100, Store: dir, Shrink: true, ShrinkTo: filepath.Join(dir, "shrunk.toml"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || res.Saved == nil {
		t.Fatalf("the sweep of %d seeds found nothing wrong with local reads", res.Seeds)
	}
	if !strings.HasPrefix(res.Saved.Signature, "kv-linearizable:") {
		t.Errorf("the first failing seed, %d, fails as %q; want kv-linearizable", res.Saved.Seed, res.Saved.Signature)
	}
	sh := res.Shrunk
	if sh == nil {
		t.Fatal("no shrink")
	}
	if sh.After.Nodes >= sh.Before.Nodes && sh.After.Messages >= sh.Before.Messages {
		t.Errorf("shrunk from %+v to %+v: no smaller", sh.Before, sh.After)
	}
	t.Logf("%d of %d seeds fail, the first at seed %d (%s); shrunk in %d simulations: %d→%d nodes, %d→%d messages, %s→%s",
		len(res.Failing), res.Seeds, res.Saved.Seed, res.Saved.Signature, sh.Sims,
		sh.Before.Nodes, sh.After.Nodes, sh.Before.Messages, sh.After.Messages, sh.Before.Duration, sh.After.Duration)

	again, err := coup.Run(load(t, sh.File), raftkv.Broken, coup.Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !again.OK() || again.Saved.Signature != sh.Signature {
		t.Errorf("the shrunk file, run again: as expected %v, %q; want as expected, %q", again.OK(), again.Saved.Signature, sh.Signature)
	}
}

// TestShrunkScenario runs the shrunk scenario kept in the example's
// folder: it shows the stale read with local reads, as it expects, and
// with ReadIndex its expected violation is gone (so, not as expected:
// the file tells the fix from the bug).
func TestShrunkScenario(t *testing.T) {
	sc := load(t, "../leader-isolated-shrunk.toml")
	dir := t.TempDir()
	broken, err := coup.Run(sc, raftkv.Broken, coup.Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !broken.OK() || broken.Saved.Valid != "false" {
		t.Errorf("local reads: valid=%s, as expected %v; want the violation the file expects\n%s", broken.Saved.Valid, broken.OK(), broken.Saved.Summary)
	}
	fixed, err := coup.Run(sc, raftkv.Node, coup.Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	if fixed.Saved.Valid != "true" {
		t.Errorf("ReadIndex reads: valid=%s; want true\n%s", fixed.Saved.Valid, fixed.Saved.Summary)
	}
}

// TestCatalogueCopy: the catalogue's copy of the scenario
// (scenarios/raft-leader-isolated.toml, which CI runs with real
// processes) is this one.
func TestCatalogueCopy(t *testing.T) {
	here, there := load(t, "../leader-isolated.toml"), load(t, "../../../scenarios/raft-leader-isolated.toml")
	if a, b := here.Encode(""), there.Encode(""); !bytes.Equal(a, b) {
		t.Errorf("scenarios/raft-leader-isolated.toml differs from examples/raft/leader-isolated.toml:\n%s\n---\n%s", b, a)
	}
}
