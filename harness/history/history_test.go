package history

import (
	"bytes"
	"strings"
	"testing"
)

func TestRecorderRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	now := int64(0)
	r := NewRecorder(&buf, func() int64 { now += 5; return now }, true)
	r.Record(Event{Kind: KindMeta, Meta: &Meta{Scenario: "s", Algorithm: "a", Nodes: []string{"n1"}, IDs: []int{1}}})
	r.Record(Event{Kind: KindReport, Node: "n1", What: ReportLeader, Value: "n1"})
	r.Record(Event{Kind: KindEnd})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r.Record(Event{Kind: KindReport}) // after Close: ignored
	h, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 3 || !h.Ended || h.Meta.Scenario != "s" {
		t.Fatalf("read back %d events, ended %v, meta %+v", len(h.Events), h.Ended, h.Meta)
	}
	for i, e := range h.Events {
		if e.Index != int64(i) || e.Time != int64(5*(i+1)) {
			t.Errorf("event %d has index %d time %d", i, e.Index, e.Time)
		}
	}
	if id, ok := h.Meta.IDOf("n1"); !ok || id != 1 {
		t.Errorf("IDOf(n1) = %d, %v", id, ok)
	}
}

// A clock that runs backwards never makes the history's time run
// backwards.
func TestRecorderTimeIsMonotonic(t *testing.T) {
	times := []int64{10, 5, 20}
	i := 0
	r := NewRecorder(nil, func() int64 { i++; return times[i-1] }, true)
	for range times {
		r.Record(Event{Kind: KindReport})
	}
	ev := r.Events()
	if ev[1].Time != 10 || ev[2].Time != 20 {
		t.Errorf("times %d %d %d, want 10 10 20", ev[0].Time, ev[1].Time, ev[2].Time)
	}
}

func TestReadSkipsBadLines(t *testing.T) {
	src := `{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"a","nodes":["n1"],"ids":[1],"seed":1}}
{"i":1,"t":5,"kind":"report","node":"n1","what":"leader","value":"n1"}
{"i":2,"t":9,"kind":"rep`
	h, err := Read(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 2 || len(h.Bad) != 1 || h.Bad[0].Line != 3 || h.Ended {
		t.Errorf("got %d events, bad %+v, ended %v", len(h.Events), h.Bad, h.Ended)
	}
	if _, err := Read(strings.NewReader(`{"i":0,"kind":"report"}`)); err == nil {
		t.Error("a history without a meta event was accepted")
	}
}

func FuzzRead(f *testing.F) {
	f.Add(`{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"a","nodes":["n1"],"ids":[1]}}` + "\n" + `{"i":1,"kind":"end"}`)
	f.Fuzz(func(t *testing.T, src string) {
		h, err := Read(strings.NewReader(src))
		if err == nil && (len(h.Events) == 0 || h.Events[0].Kind != KindMeta) {
			t.Errorf("accepted a history that does not start with meta")
		}
	})
}
