package checks

import "github.com/coupharness/coup/history"

// Builders for lock histories, in the style of builder_test.go. Times are
// in milliseconds.

// call records the invocation of f (acquire or release) by process at
// node, for owner.
func (b *hb) call(process, f, node, owner string, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindOp, Process: process, Type: history.OpInvoke, F: f, Node: node, Value: owner})
}

// ret records the completion (ok, fail or info) of process's operation f.
func (b *hb) ret(process, typ, f string, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindOp, Process: process, Type: typ, F: f})
}

// cs records that node reports entering ("enter") or leaving ("exit").
func (b *hb) cs(node, value string, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindReport, Node: node, What: history.ReportCS, Value: value})
}

// msgAt records a message event.
func (b *hb) msgAt(what string, id int64, src, dest, mtype string, t int64) *hb {
	return b.add(history.Event{Time: ms(t), Kind: history.KindMsg, What: what, Msg: id, Src: src, Dest: dest, MType: mtype})
}

func (b *hb) progress(t int64) *hb { b.meta.Progress = ms(t); return b }

// lockEvent is one event of a lock history before it is put in order.
type lockEvent struct {
	t       int64
	process string
	typ, f  string
	node    string
	owner   string
}

// lockHistory builds a history from operation events given out of order:
// they are sorted by time (stable, so equal times keep their order).
func lockHistory(nodes []string, evs []lockEvent) *history.History {
	b := hist(nodes...).starts(0, nodes...)
	sorted := append([]lockEvent(nil), evs...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].t < sorted[j-1].t; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	last := int64(0)
	for _, e := range sorted {
		if e.typ == history.OpInvoke {
			b.call(e.process, e.f, e.node, e.owner, e.t)
		} else {
			b.ret(e.process, e.typ, e.f, e.t)
		}
		last = max(last, e.t)
	}
	return b.end(last + 1).h()
}
