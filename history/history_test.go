package history

import (
	"bytes"
	"encoding/json"
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

// A run that did not start says so in its history: the unstarted event
// is read back, with how and why. An empty history is named as such, and
// one whose first line is no meta event is no coup history.
func TestReadUnstarted(t *testing.T) {
	src := `{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"a","nodes":["n1"],"ids":[1],"seed":1}}
{"i":1,"t":0,"kind":"unstarted","what":"failed","detail":"n1 exited before it accepted connections"}
`
	h, err := Read(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if u := h.Unstarted; u == nil || u.What != UnstartedFailed || u.Detail != "n1 exited before it accepted connections" || h.Ended {
		t.Errorf("unstarted %+v, ended %v", u, h.Ended)
	}
	for _, c := range []struct{ src, want string }{
		{"", "an empty history"},
		{"\n\n", "an empty history"},
		{`{"i":0,"kind":"report"}`, "not a coup history"},
		{`{"i":0,"kind":"rep`, "not a coup history"},
	} {
		if _, err := Read(strings.NewReader(c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// A line longer than MaxLine is skipped, with its line number, and the
// lines after it are read.
func TestReadSkipsOverlongLines(t *testing.T) {
	meta := `{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"a","nodes":["n1"],"ids":[1],"seed":1}}`
	huge := `{"i":1,"t":1,"kind":"report","node":"n1","what":"x","value":"` + strings.Repeat("<", MaxLine) + `"}`
	src := meta + "\n" + huge + "\n" + `{"i":2,"t":2,"kind":"end"}` + "\n"
	h, err := Read(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Bad) != 1 || h.Bad[0].Line != 2 || !strings.Contains(h.Bad[0].Err, "longer than") {
		t.Errorf("bad lines %+v, want line 2, too long", h.Bad)
	}
	if len(h.Events) != 2 || !h.Ended {
		t.Errorf("read %d events (ended %v), want meta and end", len(h.Events), h.Ended)
	}
}

// FuzzRead reads anything without failing, and what it reads, written
// again by a Recorder, reads back the same: the recorder's output is the
// reader's input.
func FuzzRead(f *testing.F) {
	f.Add(`{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"a","nodes":["n1"],"ids":[1]}}` + "\n" + `{"i":1,"kind":"end"}`)
	f.Add(`{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"a","nodes":["n1","n2"],"ids":[1,2],"params":{"t":"1ms","k":[1,2]}}}` + "\n" +
		`{"i":1,"t":3,"kind":"report","node":"n1","what":"leader","value":"n\u003c1\u0000"}` + "\n" +
		`{"i":2,"t":4,"kind":"msg","what":"corrupt","msg":3,"src":"n1","dest":"n2","mtype":"x","reason":"bitflip","body":"{\"a\":\ufffd}"}` + "\n" +
		`{"i":3,"t":5,"kind":"nemesis","what":"partition","phase":"start","nodes":["n1"]}` + "\n" +
		`{"i":4,"t":6,"kind":"refused","node":"n2","what":"reply","detail":"x"}` + "\n" +
		`{"i":5,"t":7,"kind":"end","counts":{"messages.sent":1}}`)
	f.Fuzz(func(t *testing.T, src string) {
		h, err := Read(strings.NewReader(src))
		if err != nil {
			return
		}
		if len(h.Events) == 0 || h.Events[0].Kind != KindMeta {
			t.Fatalf("accepted a history that does not start with meta")
		}
		var buf bytes.Buffer
		i := 0
		rec := NewRecorder(&buf, func() int64 { i++; return h.Events[i-1].Time }, false)
		for _, e := range h.Events {
			rec.Record(e)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := Read(&buf)
		if err != nil {
			t.Fatalf("the recorder wrote what the reader refuses: %v\n%s", err, buf.String())
		}
		if len(again.Bad) > 0 || len(again.Events) != len(h.Events) {
			t.Fatalf("read back %d events and %d bad lines, want %d and none", len(again.Events), len(again.Bad), len(h.Events))
		}
		last := int64(0)
		for k := range h.Events {
			want := h.Events[k]
			want.Index = int64(k)
			want.Time = max(want.Time, last) // the recorder never lets time run backwards
			last = want.Time
			// Compared as JSON: an empty list or map and none are the same.
			w, _ := json.Marshal(&want)
			g, _ := json.Marshal(&again.Events[k])
			if !bytes.Equal(w, g) {
				t.Fatalf("event %d: wrote %s, read back %s", k, w, g)
			}
		}
	})
}
