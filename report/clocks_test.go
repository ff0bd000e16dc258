package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

func clockHistory() *history.History {
	ms := int64(1e6)
	return reportHistory(
		history.Event{Time: 110 * ms, Kind: history.KindNemesis, What: "clock", Phase: history.PhaseStart, Name: "faults[0]#1", Detail: "rate 4", Nodes: []string{"n1", "n2"}},
		history.Event{Time: 112 * ms, Kind: history.KindClock, Node: "n1", What: history.ClockSeen, Name: "faults[0]#1", Value: "+1ms", Detail: "pid 1 (etcd); monotonic +1ms (3 reads)"},
		history.Event{Time: 150 * ms, Kind: history.KindNemesis, What: "clock", Phase: history.PhaseStart, Name: "faults[1]#1", Detail: "offset +30s", Nodes: []string{"n1"}},
		history.Event{Time: 151 * ms, Kind: history.KindClock, Node: "n1", What: history.ClockSeen, Name: "faults[1]#1", Value: "+30s", Detail: "pid 1 (etcd); realtime +30s (9 reads)"},
		history.Event{Time: 200 * ms, Kind: history.KindNemesis, What: "clock", Phase: history.PhaseStart, Name: "faults[2]#1", Detail: "reset: clocks right", Nodes: []string{"n1"}},
	)
}

// Each node's clock bands: a later clock fault, or a reset, ends the
// band before it; a band with no end runs to the run's end.
func TestClockBands(t *testing.T) {
	h := clockHistory()
	ms := int64(1e6)
	bands := clockBands(h, 300*ms)
	type got struct {
		node, fault string
		from, to    int64
		skew        string
	}
	var have []got
	for _, b := range bands {
		have = append(have, got{b.node, b.fault, b.from, b.to, b.skew})
	}
	want := []got{
		{"n1", "faults[0]#1", 110 * ms, 150 * ms, "+1ms"},
		{"n2", "faults[0]#1", 110 * ms, 300 * ms, ""},
		{"n1", "faults[1]#1", 150 * ms, 200 * ms, "+30s"},
	}
	if len(have) != len(want) {
		t.Fatalf("bands %+v, want %+v", have, want)
	}
	for i := range want {
		if have[i] != want[i] {
			t.Errorf("band %d: %+v, want %+v", i, have[i], want[i])
		}
	}
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, res, h); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, `class="clock-band"`); n != 3 {
		t.Errorf("%d clock bands drawn, want 3", n)
	}
	if !strings.Contains(page, "realtime +30s (9 reads)") {
		t.Error("a band's title does not hold what was read back")
	}
}
