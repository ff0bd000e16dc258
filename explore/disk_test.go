package explore

import (
	"math/rand/v2"
	"testing"

	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
)

// A vocabulary that names disk draws storage faults: every disk mode,
// and crashes that are power failures, both kinds of them; every
// schedule drawn or mutated from it loads.
func TestDrawsStorageFaults(t *testing.T) {
	sc, err := scenario.Parse("disk.toml", `nodes = 3
duration = "10s"

[server]
preset = "etcd"

[explore]
kinds = ["crash", "disk"]
`)
	if err != nil {
		t.Fatal(err)
	}
	d := newDrawer(sc)
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for range 400 {
		f := d.fault(rng)
		switch {
		case f.Kind == string(nemesis.Disk):
			seen["disk "+f.Mode] = true
		case f.Disk != "":
			seen["power failure "+f.Disk] = true
		default:
			seen["crash"] = true
		}
		if _, err := (&Schedule{Faults: []scenario.Fault{f}}).Scenario(sc); err != nil {
			t.Fatalf("drawn %+v: %v", f, err)
		}
	}
	for _, want := range []string{"disk corrupt", "disk full", "disk slow", "disk eio", "power failure lose-unsynced", "power failure torn", "crash"} {
		if !seen[want] {
			t.Errorf("400 draws never gave a %s (%v)", want, seen)
		}
	}
	st, err := newStrategy(Guided, sc, 1, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	g := st.(*guided)
	for i := range 200 {
		s := g.next(i, i)
		if _, err := s.Scenario(sc); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		g.observe(i, &observation{run: i, sched: s, features: Features{"f" + itoa(i)}, moments: someMoments(sc)})
	}
}

// A vocabulary may name disk only where the nodes have a disk coup knows.
func TestStorageFaultsNeedADiskToExplore(t *testing.T) {
	_, err := scenario.Parse("bully.toml", "algorithm = \"bully\"\nnodes = 3\n[explore]\nkinds = [\"crash\", \"disk\"]\n")
	if err == nil {
		t.Fatal("a built-in algorithm's vocabulary took disk faults")
	}
}
