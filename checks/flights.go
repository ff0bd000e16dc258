package checks

import "coup/harness/history"

// Flights are the messages of a history, each copy from its send to where
// it ended: the picture a report's space-time diagram draws.
type Flights struct {
	// Recorded is true when the history records messages one by one (it
	// has send, deliver or drop events); a history written with messages
	// off has at most corrupt events.
	Recorded bool
	// List holds one flight per delivered or dropped copy, in the order the
	// copies arrived or were dropped.
	List []Flight
	// Rejections are the receivers' rejections that match no delivery of
	// a corrupted copy, as positions in the history's events.
	Rejections []int
	// Unmatched counts deliveries and drops whose send the history does
	// not hold.
	Unmatched int
}

// Flight is one copy of a message: its send and where it ended, as
// positions in the history's events.
type Flight struct {
	// Msg is the message's id.
	Msg int64
	// Send is the send event, or -1 when the history has none for this
	// message; End is the deliver or drop event.
	Send, End int
	// Dropped is true when the copy was dropped (End is a drop event,
	// whose reason says why).
	Dropped bool
	// Duplicate is true for a copy beyond the first of its message.
	Duplicate bool
	// Corrupt is the corrupt event when the nemesis altered this copy's
	// body (it comes just before the delivery), else -1; Rejected is the
	// receiver's rejection of this copy, else -1.
	Corrupt, Rejected int
}

// BuildFlights returns the flights of h, in one pass over its events.
//
// A rejection is matched with a delivered corrupted copy to the node that
// rejected it, delivered since that node last started: the oldest such
// copy of the message it names, or, when it names none (the line was too
// broken to read the id), the oldest such copy of any message.
func BuildFlights(h *history.History) *Flights {
	f := &Flights{}
	send := map[int64]int{}       // message id -> its send event
	corrupt := map[int64]int{}    // message id -> a corrupt event whose copy is not yet delivered
	copies := map[int64]int{}     // message id -> copies ended so far
	waiting := map[string][]int{} // node -> its corrupted copies not yet rejected, oldest first
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindProcess && e.What == history.ProcStart:
			delete(waiting, e.Node) // a new incarnation rejects nothing it did not receive
			continue
		case e.Kind == history.KindReport && e.What == history.ReportRejected:
			if !f.reject(waiting, e, i) {
				f.Rejections = append(f.Rejections, i)
			}
			continue
		case e.Kind != history.KindMsg:
			continue
		}
		switch e.What {
		case history.MsgSend:
			f.Recorded = true
			if _, ok := send[e.Msg]; !ok {
				send[e.Msg] = i
			}
		case history.MsgCorrupt:
			corrupt[e.Msg] = i
		case history.MsgDeliver, history.MsgDrop:
			f.Recorded = true
			fl := Flight{Msg: e.Msg, Send: -1, End: i, Dropped: e.What == history.MsgDrop, Corrupt: -1, Rejected: -1}
			if s, ok := send[e.Msg]; ok {
				fl.Send = s
			} else {
				f.Unmatched++
			}
			copies[e.Msg]++
			fl.Duplicate = copies[e.Msg] > 1
			if c, ok := corrupt[e.Msg]; ok && !fl.Dropped {
				fl.Corrupt = c
				delete(corrupt, e.Msg)
				waiting[e.Dest] = append(waiting[e.Dest], len(f.List))
			}
			f.List = append(f.List, fl)
		}
	}
	return f
}

// reject matches the rejection e (at position i) with a corrupted copy
// waiting at its node, and reports whether it found one.
func (f *Flights) reject(waiting map[string][]int, e *history.Event, i int) bool {
	q := waiting[e.Node]
	for k, idx := range q {
		if e.Msg != 0 && f.List[idx].Msg != e.Msg {
			continue
		}
		f.List[idx].Rejected = i
		waiting[e.Node] = append(q[:k:k], q[k+1:]...)
		return true
	}
	return false
}
