package checks

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// A client holds the lock from its acquire's ok to the next release its
// process invokes, or to the end; a timed-out acquire is no hold.
func TestClientHolds(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").
		lockOK("c1", fAcquire, "n1", "c1", 0, 10).
		lockOK("c2", fAcquire, "n2", "c2", 12, 20).
		call("c1", fRelease, "n1", "c1", 30).ret("c1", history.OpInfo, fRelease, 40).
		call("c3", fAcquire, "n1", "c3", 41).ret("c3", history.OpInfo, fAcquire, 45).
		end(60).h()
	var got []string
	for _, s := range clientHolds(h, lockOps(h)) {
		got = append(got, fmt.Sprintf("%s:%s %d-%d %v", s.process, s.owner, s.from/ms(1), s.to/ms(1), s.released))
	}
	want := []string{"c1:c1 10-30 true", "c2:c2 20-60 false"}
	if !slices.Equal(got, want) {
		t.Errorf("holds %q, want %q", got, want)
	}
}

func TestHeldTogether(t *testing.T) {
	span := func(owner string, from, to int64) holdSpan { return holdSpan{owner: owner, from: from, to: to} }
	tests := []struct {
		name  string
		holds []holdSpan
		want  string
	}{
		{"one after the other", []holdSpan{span("a", 0, 10), span("b", 10, 20)}, ""},
		{"two overlap", []holdSpan{span("a", 0, 10), span("b", 5, 20)}, "5-10 a,b"},
		{"three, then two", []holdSpan{span("a", 0, 10), span("b", 2, 20), span("c", 4, 8)}, "2-4 a,b 4-8 a,b,c 8-10 a,b"},
		{"the same owner twice is one holder", []holdSpan{span("a", 0, 10), span("a", 5, 20)}, ""},
		{"empty spans count for nothing", []holdSpan{span("a", 0, 10), span("b", 5, 5)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmtJoint(heldTogether(tt.holds)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func fmtJoint(js []jointHold) string {
	var parts []string
	for _, j := range js {
		parts = append(parts, fmt.Sprintf("%d-%d %s", j.from, j.to, strings.Join(j.owners, ",")))
	}
	return strings.Join(parts, " ")
}

// heldTogether against a naive scan of every instant between two whole
// times, on random holds.
func TestHeldTogetherAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	owners := []string{"a", "b", "c", "d"}
	for trial := 0; trial < 500; trial++ {
		var holds []holdSpan
		for range rng.IntN(6) {
			from := rng.Int64N(40)
			holds = append(holds, holdSpan{owner: owners[rng.IntN(len(owners))], from: from, to: from + rng.Int64N(20)})
		}
		joint := heldTogether(holds)
		for i := 1; i < len(joint); i++ {
			if joint[i].from < joint[i-1].to {
				t.Fatalf("trial %d: %s: spans out of order", trial, fmtJoint(joint))
			}
		}
		for x := int64(0); x < 60; x++ {
			// The instant x + ½.
			var want []string
			for _, s := range holds {
				if s.from <= x && x < s.to && !slices.Contains(want, s.owner) {
					want = append(want, s.owner)
				}
			}
			slices.Sort(want)
			if len(want) < 2 {
				want = nil
			}
			var got []string
			for _, j := range joint {
				if j.from <= x && x < j.to {
					got = j.owners
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d, holds %v: at %d½ got %v, want %v (%s)", trial, holds, x, got, want, fmtJoint(joint))
			}
		}
	}
}

// The visualisation of a double grant marks both holds and the time the
// two clients held the lock together; the timed-out operations left out
// of the search are in a row of their own, not one row each.
func TestVisualisationShowsTheDoubleGrant(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").
		lockOK("c1", fAcquire, "n1", "c1", 0, 10).
		lockOK("c2", fAcquire, "n2", "c2", 20, 30).
		call("c3", fAcquire, "n2", "c3", 35).ret("c3", history.OpInfo, fAcquire, 45).
		lockOK("c2", fRelease, "n2", "c2", 50, 55).
		end(60).h()
	r := judge(t, "mutex-linearizable", h)
	if r.Valid != False || len(r.Files) != 1 {
		t.Fatalf("got %v with %d files, want false with the visualisation", r.Valid, len(r.Files))
	}
	page := string(r.Files[0].Data)
	for _, want := range []string{
		`"Tag":"held twice"`, `"Description":"c1 and c2"`, "c1 and c2 all held the lock from 0.030s to 0.050s (20ms)",
		`"Description":"c1 holds"`, `"Description":"c2 holds"`,
		`"Tag":"left out"`, `"Description":"c3 acquire ?"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %s", want)
		}
	}
}

func TestNaturalCompare(t *testing.T) {
	names := []string{"c10", "c2", "n1", "c1", "c02", "b", "", "c", "c2a", "c100"}
	slices.SortStableFunc(names, NaturalCompare)
	want := []string{"", "b", "c", "c1", "c2", "c02", "c2a", "c10", "c100", "n1"}
	if !slices.Equal(names, want) {
		t.Errorf("sorted %q, want %q", names, want)
	}
}

// Porcupine's rows are the clients in natural order, labelled by name:
// c1 (which invoked last) is row 0 and the page names it.
func TestVisualisationNamesClients(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").
		lockOK("c10", fAcquire, "n1", "c10", 0, 10).
		lockOK("c2", fAcquire, "n2", "c2", 20, 30).
		lockOK("c1", fRelease, "n2", "c1", 40, 45).
		end(60).h()
	r := judge(t, "mutex-linearizable", h)
	if r.Valid != False || len(r.Files) != 1 {
		t.Fatalf("got %v with %d files, want false with the visualisation", r.Valid, len(r.Files))
	}
	page := string(r.Files[0].Data)
	for _, want := range []string{
		`const clientNames = ["c1","c2","c10"]`,
		"String(clientNames[i] ?? i)",
		`"ClientId":2,"Tag":"","Start":200,"End":800,"Description":"c10 holds"`, // in row 2
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %s", want)
		}
	}
	for _, bad := range []string{vizLabelWidth, vizLabelText} {
		if strings.Contains(page, bad) {
			t.Errorf("the page still labels rows by number: %s", bad)
		}
	}
}

// A page without the expected lines comes back unchanged.
func TestNameClientsLeavesOtherPages(t *testing.T) {
	page := []byte("<html><script>const realClients = 3</script></html>")
	if got := nameClients(page, []string{"c1"}); string(got) != string(page) {
		t.Errorf("got %q, want the page unchanged", got)
	}
}

func TestBuildLockLanes(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").
		lockOK("c2", fAcquire, "n1", "c2", 0, 10).
		cs("n1", "enter", 10).
		call("c10", fAcquire, "n2", "c10", 12).ret("c10", history.OpOK, fAcquire, 20).
		cs("n1", "exit", 29).
		lockOK("c2", fRelease, "n1", "c2", 30, 32).
		call("c1", fAcquire, "n1", "c1", 40).ret("c1", history.OpFail, fAcquire, 41).
		end(60).h()
	l := BuildLockLanes(h)
	if l == nil {
		t.Fatal("no lanes")
	}
	var got []string
	for _, lane := range l.Lanes {
		for _, s := range lane.Steps {
			got = append(got, fmt.Sprintf("%s %s %d-%d %s", lane.Process, s.What, s.From/ms(1), s.To/ms(1), s.Outcome))
		}
	}
	want := []string{
		"c1 request 40-41 fail",
		"c2 request 0-10 ok", "c2 hold 10-30 ok", "c2 release 30-32 ok",
		"c10 request 12-20 ok", "c10 hold 20-60 ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("steps\n%q\nwant\n%q", got, want)
	}
	if len(l.Joint) != 1 || l.Joint[0].From != ms(20) || l.Joint[0].To != ms(30) {
		t.Errorf("joint holds %+v, want one from 20ms to 30ms", l.Joint)
	}
	if len(l.InCS) != 1 || l.InCS[0].Node != "n1" || l.InCS[0].From != ms(10) || l.InCS[0].To != ms(29) {
		t.Errorf("cs spans %+v, want n1 from 10ms to 29ms", l.InCS)
	}
	if BuildLockLanes(hist("n1").starts(0, "n1").end(10).h()) != nil {
		t.Errorf("lanes for a history without lock operations")
	}
}
