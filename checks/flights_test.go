package checks

import (
	"fmt"
	"slices"
	"testing"
)

// fmtFlights describes flights as "send-end what" with event positions.
func fmtFlights(f *Flights) []string {
	var out []string
	for _, fl := range f.List {
		s := fmt.Sprintf("%d-%d", fl.Send, fl.End)
		if fl.Dropped {
			s += " dropped"
		}
		if fl.Duplicate {
			s += " duplicate"
		}
		if fl.Corrupt >= 0 {
			s += fmt.Sprintf(" corrupt@%d", fl.Corrupt)
		}
		if fl.Rejected >= 0 {
			s += fmt.Sprintf(" rejected@%d", fl.Rejected)
		}
		out = append(out, s)
	}
	return out
}

func TestBuildFlights(t *testing.T) {
	// Positions: 0 meta, 1-2 starts.
	h := hist("n1", "n2").checksums(true).starts(0, "n1", "n2").
		send(1, "n1", "n2", "ping", 10).   // 3
		deliver(1, 12).                    // 4
		send(2, "n2", "n1", "pong", 13).   // 5
		drop(2, "loss", 13).               // 6
		send(3, "n1", "n2", "ping", 20).   // 7
		dup(3, 20).                        // 8
		deliver(3, 22).                    // 9
		corrupt(3, 23, `{"type":"pinh"}`). // 10
		deliver(3, 23).                    // 11: the corrupted duplicate
		rejected("n2", 3, 24).             // 12
		rejected("n1", 0, 25).             // 13: matches nothing
		end(30).h()
	f := BuildFlights(h)
	want := []string{"3-4", "5-6 dropped", "7-9", "7-11 duplicate corrupt@10 rejected@12"}
	if got := fmtFlights(f); !slices.Equal(got, want) {
		t.Errorf("flights %q, want %q", got, want)
	}
	if !f.Recorded {
		t.Errorf("messages recorded: got false")
	}
	if !slices.Equal(f.Rejections, []int{13}) {
		t.Errorf("unmatched rejections %v, want [13]", f.Rejections)
	}
	if f.Unmatched != 0 {
		t.Errorf("unmatched flights %d, want 0", f.Unmatched)
	}
}

// A corrupted delivery nobody rejected stays unrejected; a delivery whose
// send the history lacks is counted and kept.
func TestBuildFlightsAccepted(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").
		send(1, "n1", "n2", "ping", 10).   // 3
		corrupt(1, 11, `{"type":"pinh"}`). // 4
		deliver(1, 11).                    // 5
		end(300).h()
	h.Events = slices.Delete(h.Events, 3, 4) // lose the send
	f := BuildFlights(h)
	want := []string{"-1-4 corrupt@3"}
	if got := fmtFlights(f); !slices.Equal(got, want) {
		t.Errorf("flights %q, want %q", got, want)
	}
	if f.Unmatched != 1 {
		t.Errorf("unmatched flights %d, want 1", f.Unmatched)
	}
}

// A history with only corrupt events (messages not recorded) says so.
func TestBuildFlightsNotRecorded(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").
		send(1, "n1", "n2", "ping", 10).corrupt(1, 11, "x").end(20).h()
	h.Events = slices.Delete(h.Events, 3, 4)
	f := BuildFlights(h)
	if f.Recorded || len(f.List) != 0 {
		t.Errorf("got recorded %v with %d flights, want not recorded and none", f.Recorded, len(f.List))
	}
}
