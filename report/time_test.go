package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// extremeHistory is a two-node history whose times and bounds are set by
// the caller: the material of crafted or corrupted history files.
func extremeHistory(meta func(*history.Meta), times ...int64) *history.History {
	m := &history.Meta{Scenario: "extreme", Algorithm: "bully", Nodes: []string{"n1", "n2"}, IDs: []int{1, 2}, Elects: "max",
		Checks: []string{"two-leaders", "termination", "eventual-leadership"}, Expect: &history.Expect{Valid: true}}
	if meta != nil {
		meta(m)
	}
	es := []history.Event{
		{Kind: history.KindMeta, Meta: m},
		{Time: 1, Kind: history.KindProcess, Node: "n1", What: history.ProcStart, Incarnation: 1},
		{Time: 2, Kind: history.KindProcess, Node: "n2", What: history.ProcStart, Incarnation: 1},
	}
	whats := []func(t int64) history.Event{
		func(t int64) history.Event {
			return history.Event{Time: t, Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: "n2"}
		},
		func(t int64) history.Event {
			return history.Event{Time: t, Kind: history.KindMsg, What: history.MsgSend, Msg: 1, Src: "n1", Dest: "n2", MType: "alive"}
		},
		func(t int64) history.Event {
			return history.Event{Time: t, Kind: history.KindMsg, What: history.MsgDeliver, Msg: 1, Src: "n1", Dest: "n2", MType: "alive"}
		},
		func(t int64) history.Event {
			return history.Event{Time: t, Kind: history.KindReport, Node: "n1", What: history.ReportMetric, Name: "timeout", Value: "40"}
		},
		func(t int64) history.Event {
			return history.Event{Time: t, Kind: history.KindNemesis, What: "pause", Phase: history.PhaseStart, Nodes: []string{"n1"}}
		},
		func(t int64) history.Event {
			return history.Event{Time: t, Kind: history.KindReport, Node: "n1", What: history.ReportLeader, Value: "n2"}
		},
	}
	for i, t := range times {
		es = append(es, whats[i%len(whats)](t))
	}
	if len(times) > 0 {
		es = append(es, history.Event{Time: times[len(times)-1], Kind: history.KindEnd})
	}
	for i := range es {
		es[i].Index = int64(i)
	}
	h, err := history.FromEvents(es)
	if err != nil {
		panic(err)
	}
	return h
}

// renderWithin writes the report of h, failing the test if that takes
// longer than a generous guard: a report must never loop on a time.
func renderWithin(t *testing.T, h *history.History) string {
	t.Helper()
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		var buf bytes.Buffer
		if err := Write(&buf, res, h); err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- buf.String()
	}()
	select {
	case page := <-done:
		if strings.HasPrefix(page, "error: ") {
			t.Fatal(page)
		}
		return page
	case <-time.After(20 * time.Second):
		t.Fatal("the report did not finish: it loops on a time")
		return ""
	}
}

// Times and bounds near the ends of int64, out of order or negative, come
// only from crafted or damaged histories; the report draws them saturated
// and stays small.
func TestReportExtremeTimes(t *testing.T) {
	const max = math.MaxInt64
	tests := []struct {
		name  string
		meta  func(*history.Meta)
		times []int64
	}{
		{"last event near the largest time", nil, []int64{1000, 2000, 3000, 4000, 5000, max - 10}},
		{"every event near the largest time", nil, []int64{max - 6, max - 5, max - 4, max - 3, max - 2, max - 1, max}},
		{"largest time in the middle", nil, []int64{1000, max, 3000, 4000, 5000, 6000}},
		{"negative times", nil, []int64{-5000, math.MinInt64, -1, 4000, math.MinInt64 + 1, 6000}},
		{"bounds near the largest time", func(m *history.Meta) {
			m.Termination, m.Progress, m.GST, m.Stabilisation = max, max, max-1, max
		}, []int64{1000, 2000, 3000, 4000, 5000, 6000}},
		{"negative bounds", func(m *history.Meta) {
			m.Termination, m.Progress, m.GST, m.Stabilisation = math.MinInt64, -1, math.MinInt64, -5
		}, []int64{1000, 2000, 3000, 4000, 5000, 6000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := renderWithin(t, extremeHistory(tt.meta, tt.times...))
			if !strings.Contains(page, "<svg") {
				t.Errorf("the report draws nothing")
			}
			if len(page) > 2<<20 {
				t.Errorf("the report of a %d-event history is %d bytes", len(tt.times)+4, len(page))
			}
		})
	}
}
