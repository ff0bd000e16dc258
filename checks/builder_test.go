package checks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// hb builds a history for a test, compactly:
//
//	h := hist("n1", "n2").start("n1", 0).leader("n1", "n1", 10).end(100).h()
//
// Times are in milliseconds. The meta event is event 0 at time 0; every
// other event gets the next index, so a test can name evidence by index.
// Election ids are 1, 2, 3… in the order of the nodes, and the algorithm
// elects the highest.
type hb struct {
	meta   history.Meta
	events []history.Event
	inc    map[string]int
	msgs   map[int64]history.Event // sends by message id, for deliver and friends
}

func hist(nodes ...string) *hb {
	b := &hb{inc: map[string]int{}, msgs: map[int64]history.Event{}}
	b.meta = history.Meta{Scenario: "test", Algorithm: "test", Nodes: nodes, Elects: "max"}
	for i := range nodes {
		b.meta.IDs = append(b.meta.IDs, i+1)
	}
	return b
}

// ms converts test milliseconds to history nanoseconds.
func ms(t int64) int64 { return t * 1e6 }

func (b *hb) ids(ids ...int) *hb      { b.meta.IDs = ids; return b }
func (b *hb) elects(e string) *hb     { b.meta.Elects = e; return b }
func (b *hb) termination(t int64) *hb { b.meta.Termination = ms(t); return b }
func (b *hb) gst(t int64) *hb         { b.meta.GST = ms(t); return b }
func (b *hb) stabilisation(t int64) *hb {
	b.meta.Stabilisation = ms(t)
	return b
}
func (b *hb) staleBound(t int64) *hb  { b.meta.StaleLeader = ms(t); return b }
func (b *hb) bound(n int64) *hb       { b.meta.MessageBound = n; return b }
func (b *hb) checksums(on bool) *hb   { b.meta.Checksums = on; return b }
func (b *hb) servers() *hb            { b.meta.Servers = true; return b }
func (b *hb) add(e history.Event) *hb { b.events = append(b.events, e); return b }
func (b *hb) proc(node, what string, t int64) *hb {
	e := history.Event{Time: ms(t), Kind: history.KindProcess, Node: node, What: what}
	if what == history.ProcStart {
		b.inc[node]++
	}
	e.Incarnation = b.inc[node]
	return b.add(e)
}

func (b *hb) start(node string, t int64) *hb  { return b.proc(node, history.ProcStart, t) }
func (b *hb) crash(node string, t int64) *hb  { return b.proc(node, history.ProcCrash, t) }
func (b *hb) exit(node string, t int64) *hb   { return b.proc(node, history.ProcExit, t) }
func (b *hb) stop(node string, t int64) *hb   { return b.proc(node, history.ProcStop, t) }
func (b *hb) pause(node string, t int64) *hb  { return b.proc(node, history.ProcPause, t) }
func (b *hb) resume(node string, t int64) *hb { return b.proc(node, history.ProcResume, t) }

// starts starts every node at time t.
func (b *hb) starts(t int64, nodes ...string) *hb {
	for _, n := range nodes {
		b.start(n, t)
	}
	return b
}

// leader records that node now trusts value ("" for none).
func (b *hb) leader(node, value string, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindReport, Node: node, What: history.ReportLeader, Value: value})
}

// leaderIn records that node now trusts value in term ("" for none).
func (b *hb) leaderIn(node, value string, term, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindReport, Node: node, What: history.ReportLeader, Value: value, Term: &term})
}

// leaderTerm records that node now trusts value in term, or in no term
// when term is nil.
func (b *hb) leaderTerm(node, value string, term *int64, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindReport, Node: node, What: history.ReportLeader, Value: value, Term: term})
}

// claim records that node now claims leadership in term.
func (b *hb) claim(node string, term, t int64) *hb { return b.leaderIn(node, node, term, t) }

// agree records that every given node now trusts value.
func (b *hb) agree(value string, t int64, nodes ...string) *hb {
	for _, n := range nodes {
		b.leader(n, value, t)
	}
	return b
}

func (b *hb) nemesis(what, phase string, t int64, nodes ...string) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindNemesis, What: what, Phase: phase, Nodes: nodes})
}

func (b *hb) invoke(f string, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindOp, Process: "c0", Type: history.OpInvoke, F: f})
}

// elect records a client's elect request to node.
func (b *hb) elect(node string, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindOp, Process: "c-" + node, Type: history.OpInvoke, F: "elect", Node: node})
}

func (b *hb) end(t int64) *hb { return b.add(history.Event{Time: ms(t), Kind: history.KindEnd}) }

// endCounts ends the history with the run's counters.
func (b *hb) endCounts(t int64, counts map[string]int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindEnd, Counts: counts})
}

// send records message id sent from src to dest; deliver, drop, dup and
// corrupt refer to it by id.
func (b *hb) send(id int64, src, dest, mtype string, t int64) *hb {
	e := history.Event{Time: ms(t), Kind: history.KindMsg, What: history.MsgSend, Msg: id, Src: src, Dest: dest, MType: mtype}
	b.msgs[id] = e
	return b.add(e)
}

func (b *hb) msgEvent(what string, id, t int64) history.Event {
	s, ok := b.msgs[id]
	if !ok {
		panic(fmt.Sprintf("test history: message %d was never sent", id))
	}
	return history.Event{Time: ms(t), Kind: history.KindMsg, What: what, Msg: id, Src: s.Src, Dest: s.Dest, MType: s.MType}
}

func (b *hb) deliver(id, t int64) *hb { return b.add(b.msgEvent(history.MsgDeliver, id, t)) }
func (b *hb) dup(id, t int64) *hb     { return b.add(b.msgEvent(history.MsgDuplicate, id, t)) }
func (b *hb) drop(id int64, reason string, t int64) *hb {
	e := b.msgEvent(history.MsgDrop, id, t)
	e.Reason = reason
	return b.add(e)
}

// corrupt records that the nemesis corrupted message id, its body now body.
func (b *hb) corrupt(id, t int64, body string) *hb {
	e := b.msgEvent(history.MsgCorrupt, id, t)
	e.Body = body
	return b.add(e)
}

// how says, on the last event (a corrupt one), how the body was altered
// and what changed.
func (b *hb) how(reason, detail string) *hb {
	e := &b.events[len(b.events)-1]
	e.Reason, e.Detail = reason, detail
	return b
}

// msg sends a message at t and delivers it at t+1.
func (b *hb) msg(id int64, src, dest, mtype string, t int64) *hb {
	return b.send(id, src, dest, mtype, t).deliver(id, t+1)
}

// rejected records that node rejected message id (0: the id was unreadable).
func (b *hb) rejected(node string, id, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindReport, Node: node, What: history.ReportRejected, Value: "checksum", Msg: id})
}

// report records any report.
func (b *hb) report(node, what, value string, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindReport, Node: node, What: what, Value: value})
}

// stops stops every node at t, as the harness does at the end of a run.
func (b *hb) stops(t int64, nodes ...string) *hb {
	for _, n := range nodes {
		b.stop(n, t)
	}
	return b
}

// list returns the events, the meta event first, with indexes.
func (b *hb) list() []history.Event {
	meta := b.meta
	es := append([]history.Event{{Kind: history.KindMeta, Meta: &meta}}, b.events...)
	for i := range es {
		es[i].Index = int64(i)
		if i > 0 && es[i].Time < es[i-1].Time {
			panic(fmt.Sprintf("test history: event %d at %d is before event %d at %d", i, es[i].Time, i-1, es[i-1].Time))
		}
	}
	return es
}

// h returns the history.
func (b *hb) h() *history.History {
	h, err := history.FromEvents(b.list())
	if err != nil {
		panic(err)
	}
	return h
}

// jsonl returns the history as the lines of a history file.
func (b *hb) jsonl() string {
	var sb strings.Builder
	for _, e := range b.list() {
		line, err := json.Marshal(e)
		if err != nil {
			panic(err)
		}
		sb.Write(line)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// judge runs the named check on h and checks what every result must satisfy.
func judge(t *testing.T, name string, h *history.History) Result {
	t.Helper()
	c, ok := Lookup(name)
	if !ok {
		t.Fatalf("Lookup(%q): not found", name)
	}
	r := c.Run(h)
	if r.Name != name {
		t.Errorf("Name = %q, want %q", r.Name, name)
	}
	if r.Valid != True && r.Explanation == "" {
		t.Errorf("%s verdict %v has no explanation", name, r.Valid)
	}
	if r.Valid == False && len(r.Evidence) == 0 {
		t.Errorf("%s is false without evidence: %s", name, r.Explanation)
	}
	for i := 1; i < len(r.Evidence); i++ {
		if r.Evidence[i].Index <= r.Evidence[i-1].Index {
			t.Errorf("evidence not in history order: %d after %d", r.Evidence[i].Index, r.Evidence[i-1].Index)
		}
	}
	return r
}

// indexes returns the indexes of events.
func indexes(es []history.Event) []int64 {
	var out []int64
	for _, e := range es {
		out = append(out, e.Index)
	}
	return out
}
