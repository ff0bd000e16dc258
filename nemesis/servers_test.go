package nemesis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
)

// A partition's cut kind reaches the net: Cut reports the cut links, and
// whether they refuse, and only those; the heal uncuts them.
func TestCutKinds(t *testing.T) {
	for _, kind := range []CutKind{Stall, Refuse} {
		n := newChecked(t, 1, Fault{Kind: Partition, Shape: Isolate, Target: Target{Nodes: []string{"n1"}}, OneWay: true, Direction: Out, Cut: kind})
		c := &fakeCluster{}
		for _, a := range n.Due(0) {
			if err := n.Apply(a, c); err != nil {
				t.Fatal(err)
			}
			if want := "(" + string(kind) + ")"; !strings.Contains(a.Detail, want) {
				t.Errorf("%s: detail %q does not say %s", kind, a.Detail, want)
			}
		}
		if got := n.Cut(Link{"n1", "n2"}); got != kind {
			t.Errorf("%s: n1→n2 cut %q", kind, got)
		}
		if f := n.Decide(Msg{Link: Link{"n1", "n2"}}, 0); !f.Drop || f.Reason != DropPartition || f.Cut != kind {
			t.Errorf("%s: the fate of a message on n1→n2 is %+v, want dropped by a %s partition", kind, f, kind)
		}
		if cut := n.Cut(Link{"n2", "n1"}); cut != NoCut {
			t.Errorf("%s: a one-way cut out of n1 cuts n2→n1", kind)
		}
		for _, a := range n.Heal(time.Second) {
			n.Apply(a, c)
		}
		if cut := n.Cut(Link{"n1", "n2"}); cut != NoCut {
			t.Errorf("%s: n1→n2 still cut after the heal", kind)
		}
	}
}

// An unknown cut kind is refused with the key's name.
func TestCutKindChecked(t *testing.T) {
	f := Fault{Kind: Partition, Shape: Halves, Cut: "sever"}
	err := f.Check(five, time.Second)
	fe, ok := err.(*FieldError)
	if !ok || fe.Field != "cut" {
		t.Fatalf("error %v, want a FieldError on cut", err)
	}
}

// A Cluster that replaces its own way gets Replace; another a crash and a
// restart.
func TestReplacer(t *testing.T) {
	n := newChecked(t, 1, Fault{Kind: Replace, Target: Target{Nodes: []string{"n2"}}})
	acts := n.Due(0)
	plain, own := &fakeCluster{}, &replacer{}
	for _, a := range acts {
		n.Apply(a, plain)
		n.Apply(a, own)
	}
	if want := []string{"crash n2", "restart n2"}; !slices.Equal(plain.calls, want) {
		t.Errorf("plain cluster: %v, want %v", plain.calls, want)
	}
	if want := []string{"replace n2"}; !slices.Equal(own.calls, want) {
		t.Errorf("replacer: %v, want %v", own.calls, want)
	}
}

type replacer struct{ fakeCluster }

func (r *replacer) Replace(n string) error { r.calls = append(r.calls, "replace "+n); return nil }

var _ Replacer = (*replacer)(nil)

// The follower pick is a live node other than the leader, and nothing
// while no node leads.
func TestFollowerPick(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		n := newChecked(t, seed, Fault{Kind: Crash, Target: Target{Pick: Follower}, At: 10 * ms})
		if got := n.Due(10 * ms); len(got) != 1 || got[0].Skip == "" {
			t.Fatalf("seed %d: with no leader, %v; want one skipped action", seed, got)
		}
		n = newChecked(t, seed, Fault{Kind: Crash, Target: Target{Pick: Follower}, At: 10 * ms})
		n.Observe(history.Event{Kind: history.KindReport, What: history.ReportLeader, Node: "n3", Value: "n3", Time: int64(ms)})
		got := n.Due(10 * ms)
		if len(got) != 1 || got[0].Skip != "" || len(got[0].Nodes) != 1 || got[0].Nodes[0] == "n3" {
			t.Fatalf("seed %d: with n3 leading, %v; want one node other than n3", seed, got)
		}
	}
}
