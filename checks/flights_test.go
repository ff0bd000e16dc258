package checks

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// fmtFlights describes flights as "src→dest type sent-at what", times in
// milliseconds.
func fmtFlights(f *Flights) []string {
	var out []string
	for _, fl := range f.List {
		s := fmt.Sprintf("%s→%s %s %d-%d", f.Name(fl.Src), f.Name(fl.Dest), f.Name(fl.Type), fl.Sent/ms(1), fl.At/ms(1))
		if !fl.HasSend {
			s += " unsent"
		}
		if fl.Dropped {
			s += " dropped:" + f.Name(fl.Reason)
		}
		if fl.Duplicate {
			s += " duplicate"
		}
		if fl.Corrupted {
			s += " corrupt:" + f.Name(fl.How)
		}
		if fl.Rejected {
			s += fmt.Sprintf(" rejected@%d:%s", fl.RejectedAt/ms(1), f.Name(fl.Rejection))
		}
		out = append(out, s)
	}
	return out
}

// flightsOf builds the flights of h as given and as read back from its
// JSON lines (a compact history), which must agree.
func flightsOf(t *testing.T, b *hb) *Flights {
	t.Helper()
	f := BuildFlights(b.h())
	h, err := history.Read(strings.NewReader(b.jsonl()))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmtFlights(BuildFlights(h)), fmtFlights(f); !slices.Equal(got, want) {
		t.Errorf("flights read back %q, built %q", got, want)
	}
	return f
}

func TestBuildFlights(t *testing.T) {
	b := hist("n1", "n2").checksums(true).starts(0, "n1", "n2").
		send(1, "n1", "n2", "ping", 10).deliver(1, 12).
		send(2, "n2", "n1", "pong", 13).drop(2, "loss", 13).
		send(3, "n1", "n2", "ping", 20).dup(3, 20).deliver(3, 22).
		corrupt(3, 23, `{"type":"pinh"}`).how("bitflip", "").deliver(3, 23). // the corrupted duplicate
		rejected("n2", 3, 24).
		rejected("n1", 0, 25). // matches nothing
		end(30)
	f := flightsOf(t, b)
	want := []string{
		"n1→n2 ping 10-12",
		"n2→n1 pong 13-13 dropped:loss",
		"n1→n2 ping 20-22",
		"n1→n2 ping 20-23 duplicate corrupt:bitflip rejected@24:checksum",
	}
	if got := fmtFlights(f); !slices.Equal(got, want) {
		t.Errorf("flights\n%q\nwant\n%q", got, want)
	}
	if !f.Recorded {
		t.Errorf("messages recorded: got false")
	}
	if len(f.Rejections) != 1 || f.Rejections[0].Node != "n1" || f.Rejections[0].Time != ms(25) {
		t.Errorf("unmatched rejections %+v, want n1's at 25ms", f.Rejections)
	}
	if f.Unmatched != 0 {
		t.Errorf("unmatched flights %d, want 0", f.Unmatched)
	}
}

// A corrupted delivery nobody rejected stays unrejected; a rejection by a
// later incarnation of the receiver does not count; a delivery whose send
// the history lacks is counted and kept.
func TestBuildFlightsAccepted(t *testing.T) {
	b := hist("n1", "n2").starts(0, "n1", "n2").
		send(1, "n1", "n2", "ping", 10).corrupt(1, 11, `{"type":"pinh"}`).deliver(1, 11).
		crash("n2", 20).start("n2", 30).rejected("n2", 1, 31).
		end(300)
	b.events = slices.DeleteFunc(b.events, func(e history.Event) bool { return e.What == history.MsgSend })
	f := flightsOf(t, b)
	want := []string{"n1→n2 ping 11-11 unsent corrupt:"}
	if got := fmtFlights(f); !slices.Equal(got, want) {
		t.Errorf("flights %q, want %q", got, want)
	}
	if f.Unmatched != 1 || len(f.Rejections) != 1 {
		t.Errorf("unmatched flights %d and rejections %d, want 1 and 1", f.Unmatched, len(f.Rejections))
	}
}

// A history with only corrupt events (messages not recorded) says so.
func TestBuildFlightsNotRecorded(t *testing.T) {
	b := hist("n1", "n2").starts(0, "n1", "n2").send(1, "n1", "n2", "ping", 10).corrupt(1, 11, "x").end(20)
	b.events = slices.DeleteFunc(b.events, func(e history.Event) bool { return e.What == history.MsgSend })
	f := flightsOf(t, b)
	if f.Recorded || len(f.List) != 0 {
		t.Errorf("got recorded %v with %d flights, want not recorded and none", f.Recorded, len(f.List))
	}
}
