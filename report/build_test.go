package report

import (
	"bytes"
	"cmp"
	"slices"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// hb builds a history for the report's tests. Times are milliseconds.
type hb struct {
	meta   history.Meta
	events []history.Event
	sends  map[int64]history.Event
}

func newHB(nodes ...string) *hb {
	ids := make([]int, len(nodes))
	for i := range ids {
		ids[i] = i + 1
	}
	return &hb{meta: history.Meta{Scenario: "test", Algorithm: "bully", Nodes: nodes, IDs: ids, Elects: "max", Seed: 7,
		Checks: []string{"two-leaders"}, Expect: &history.Expect{Valid: true}}, sends: map[int64]history.Event{}}
}

func msT(t float64) int64 { return int64(t * 1e6) }

func (b *hb) add(e history.Event) *hb { b.events = append(b.events, e); return b }

func (b *hb) starts(t float64, nodes ...string) *hb {
	for _, n := range nodes {
		b.add(history.Event{Time: msT(t), Kind: history.KindProcess, Node: n, What: history.ProcStart, Incarnation: 1})
	}
	return b
}

func (b *hb) proc(node, what string, t float64) *hb {
	return b.add(history.Event{Time: msT(t), Kind: history.KindProcess, Node: node, What: what, Incarnation: 1})
}

func (b *hb) leader(node, value string, t float64) *hb {
	return b.add(history.Event{Time: msT(t), Kind: history.KindReport, Node: node, What: history.ReportLeader, Value: value})
}

func (b *hb) metric(node, name, value string, t float64) *hb {
	return b.add(history.Event{Time: msT(t), Kind: history.KindReport, Node: node, What: history.ReportMetric, Name: name, Value: value})
}

func (b *hb) send(id int64, src, dest, mtype string, t float64) *hb {
	e := history.Event{Time: msT(t), Kind: history.KindMsg, What: history.MsgSend, Msg: id, Src: src, Dest: dest, MType: mtype}
	b.sends[id] = e
	return b.add(e)
}

func (b *hb) fate(what string, id int64, t float64, reason string) *hb {
	s := b.sends[id]
	return b.add(history.Event{Time: msT(t), Kind: history.KindMsg, What: what, Msg: id, Src: s.Src, Dest: s.Dest, MType: s.MType, Reason: reason})
}

func (b *hb) deliver(id int64, t float64) *hb          { return b.fate(history.MsgDeliver, id, t, "") }
func (b *hb) drop(id int64, t float64, why string) *hb { return b.fate(history.MsgDrop, id, t, why) }
func (b *hb) corrupt(id int64, t float64, how string) *hb {
	return b.fate(history.MsgCorrupt, id, t, how)
}

func (b *hb) rejected(node string, id int64, t float64) *hb {
	return b.add(history.Event{Time: msT(t), Kind: history.KindReport, Node: node, What: history.ReportRejected, Value: "checksum", Msg: id})
}

func (b *hb) nemesis(what, phase string, t float64, nodes ...string) *hb {
	return b.add(history.Event{Time: msT(t), Kind: history.KindNemesis, What: what, Phase: phase, Nodes: nodes})
}

func (b *hb) op(process, typ, f, node string, t float64) *hb {
	value := ""
	if typ == history.OpInvoke && (f == "acquire" || f == "release") {
		value = process
	}
	return b.add(history.Event{Time: msT(t), Kind: history.KindOp, Process: process, Type: typ, F: f, Node: node, Value: value})
}

// end stops every node and ends the history at t.
func (b *hb) end(t float64) *hb {
	for _, n := range b.meta.Nodes {
		b.proc(n, history.ProcStop, t)
	}
	return b.add(history.Event{Time: msT(t), Kind: history.KindEnd})
}

// h returns the history, its events in time order (stable: those at one
// time keep the order they were added in).
func (b *hb) h(t testing.TB) *history.History {
	t.Helper()
	m := b.meta
	evs := slices.Clone(b.events)
	slices.SortStableFunc(evs, func(x, y history.Event) int { return cmp.Compare(x.Time, y.Time) })
	es := append([]history.Event{{Kind: history.KindMeta, Meta: &m}}, evs...)
	for i := range es {
		es[i].Index = int64(i)
	}
	h, err := history.FromEvents(es)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// render judges h and writes its report.
func render(t testing.TB, h *history.History) (*verdict.Results, string) {
	t.Helper()
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, res, h); err != nil {
		t.Fatal(err)
	}
	return res, buf.String()
}
