package raftkv_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coupharness/coup"
	"github.com/coupharness/coup/examples/raft/raftkv"
)

// TestUnsyncedVoteLost sweeps the variant that never syncs its vote under
// power failures: some seed gives two leaders in one term, its history
// says the vote was lost, and the seed replays exactly.
func TestUnsyncedVoteLost(t *testing.T) {
	sc := load(t, "../vote-unsynced.toml")
	dir := t.TempDir()
	res, err := coup.Run(sc, raftkv.UnsyncedVote, coup.Options{Seeds: 200, Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || res.Saved == nil {
		t.Fatalf("200 seeds of power failures found no vote lost to them")
	}
	if !strings.HasPrefix(res.Saved.Signature, "one-leader-per-term:") {
		t.Fatalf("the first failing seed, %d, fails as %q; want one-leader-per-term", res.Saved.Seed, res.Saved.Signature)
	}
	h, err := os.ReadFile(filepath.Join(res.Saved.Dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h), `"kind":"disk"`) || !strings.Contains(string(h), `\"path\":\"vote\"`) {
		t.Errorf("seed %d's history has no disk event that lost the vote file", res.Saved.Seed)
	}
	seed := res.Saved.Seed
	var hashes []string
	for range 2 {
		again, err := coup.Run(sc, raftkv.UnsyncedVote, coup.Options{Seed: seed, Store: dir})
		if err != nil {
			t.Fatal(err)
		}
		if again.Saved.Valid != "false" {
			t.Fatalf("seed %d, run again: valid %s, want false", seed, again.Saved.Valid)
		}
		hashes = append(hashes, again.Saved.Hash)
	}
	if hashes[0] != hashes[1] || hashes[0] != res.Saved.Hash {
		t.Errorf("seed %d gave the histories %s, %s and %s: it does not replay", seed, res.Saved.Hash, hashes[0], hashes[1])
	}
	t.Logf("%d of %d seeds fail (%v…); seed %d replays: %s", len(res.Failing), res.Seeds, res.Failing[:min(5, len(res.Failing))], seed, res.Saved.Summary)
}

// TestSyncedVoteHolds sweeps the same power failures over raftkv.Node,
// which syncs its vote before answering: one leader per term at every
// seed.
func TestSyncedVoteHolds(t *testing.T) {
	coup.Test(t, load(t, "../vote-unsynced.toml"), raftkv.Node, coup.Options{Seeds: 200})
}
