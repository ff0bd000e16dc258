package checks

import "github.com/coupharness/coup/history"

// Flights are the messages of a history, each copy from its send to where
// it ended: the picture a report's space-time diagram draws. A run may
// record millions of messages, so a flight is kept small: its strings are
// indices into Names.
type Flights struct {
	// Recorded is true when the history records messages one by one (it
	// has send, deliver or drop events); a history written with messages
	// off has at most corrupt events.
	Recorded bool
	// List holds one flight per delivered or dropped copy, in the order the
	// copies arrived or were dropped.
	List []Flight
	// Names are the strings the flights name (nodes, types, reasons), each
	// once.
	Names []string
	// Rejections are the receivers' rejections that match no delivery of
	// a corrupted copy.
	Rejections []Rejection
	// Unmatched counts deliveries and drops whose send the history does
	// not hold; their Sent is their At.
	Unmatched int
	// Omitted counts the copies after the first MaxFlights, which are not
	// kept: a report draws a run's first MaxFlights copies and counts the
	// rest.
	Omitted int
}

// MaxFlights is the most flights BuildFlights keeps, so that a report of a
// run of millions of messages costs a bounded memory.
const MaxFlights = 200_000

// Flight is one copy of a message: its send and where it ended.
type Flight struct {
	// Msg is the message's id.
	Msg int64
	// Sent is the time of its send (At when the history has none: HasSend
	// is false), At the time it was delivered or dropped.
	Sent, At int64
	// Src, Dest and Type are the message's sender, receiver and type;
	// Reason says why it was dropped, How how the nemesis corrupted it;
	// Rejection, why the receiver rejected it. Indices into Names.
	Src, Dest, Type, Reason, How, Rejection uint32
	// RejectedAt is when the receiver rejected it, if it did.
	RejectedAt int64
	HasSend    bool
	// Dropped: the copy was dropped. Duplicate: a copy beyond the first of
	// its message. Corrupted: the nemesis altered its body (the corrupt
	// event comes just before the delivery). Rejected: its receiver
	// rejected it.
	Dropped, Duplicate, Corrupted, Rejected bool
}

// Rejection is a receiver's rejection that matches no corrupted copy.
type Rejection struct {
	Node  string
	Time  int64
	Value string // why, as the node said
}

// Name returns the string with index i.
func (f *Flights) Name(i uint32) string {
	if int(i) < len(f.Names) {
		return f.Names[i]
	}
	return ""
}

// flightBuilder keeps what BuildFlights needs while it reads.
type flightBuilder struct {
	f       *Flights
	names   map[string]uint32
	send    map[int64]int64  // message id -> the time of its send
	corrupt map[int64]string // message id -> how a copy not yet delivered was corrupted
	copies  map[int64]int    // message id -> copies ended so far
	waiting map[string][]int // node -> its corrupted copies not yet rejected, oldest first
}

func (b *flightBuilder) name(s string) uint32 {
	i, ok := b.names[s]
	if !ok {
		i = uint32(len(b.f.Names))
		b.names[s] = i
		b.f.Names = append(b.f.Names, s)
	}
	return i
}

// BuildFlights returns the flights of h, in one pass over its events.
//
// A rejection is matched with a delivered corrupted copy to the node that
// rejected it, delivered since that node last started: the oldest such
// copy of the message it names, or, when it names none (the line was too
// broken to read the id), the oldest such copy of any message.
func BuildFlights(h *history.History) *Flights {
	b := &flightBuilder{f: &Flights{}, names: map[string]uint32{}, send: map[int64]int64{},
		corrupt: map[int64]string{}, copies: map[int64]int{}, waiting: map[string][]int{}}
	f := b.f
	for e := range h.All() {
		if len(f.List) >= MaxFlights {
			if e.Kind == history.KindMsg && (e.What == history.MsgDeliver || e.What == history.MsgDrop) {
				f.Omitted++
			}
			continue
		}
		switch {
		case e.Kind == history.KindProcess && e.What == history.ProcStart:
			delete(b.waiting, e.Node) // a new incarnation rejects nothing it did not receive
			continue
		case e.Kind == history.KindReport && e.What == history.ReportRejected:
			if !b.reject(e) {
				f.Rejections = append(f.Rejections, Rejection{Node: e.Node, Time: e.Time, Value: e.Value})
			}
			continue
		case e.Kind != history.KindMsg:
			continue
		}
		switch e.What {
		case history.MsgSend:
			f.Recorded = true
			if _, ok := b.send[e.Msg]; !ok {
				b.send[e.Msg] = e.Time
			}
		case history.MsgCorrupt:
			b.corrupt[e.Msg] = e.Reason
		case history.MsgDeliver, history.MsgDrop:
			f.Recorded = true
			fl := Flight{Msg: e.Msg, Sent: e.Time, At: e.Time, Src: b.name(e.Src), Dest: b.name(e.Dest), Type: b.name(e.MType),
				Dropped: e.What == history.MsgDrop}
			if fl.Dropped {
				fl.Reason = b.name(e.Reason)
			}
			if t, ok := b.send[e.Msg]; ok {
				fl.Sent, fl.HasSend = t, true
			} else {
				f.Unmatched++
			}
			b.copies[e.Msg]++
			fl.Duplicate = b.copies[e.Msg] > 1
			if how, ok := b.corrupt[e.Msg]; ok && !fl.Dropped {
				fl.Corrupted, fl.How = true, b.name(how)
				delete(b.corrupt, e.Msg)
				b.waiting[e.Dest] = append(b.waiting[e.Dest], len(f.List))
			}
			f.List = append(f.List, fl)
		}
	}
	return f
}

// reject matches the rejection e with a corrupted copy waiting at its
// node, and reports whether it found one.
func (b *flightBuilder) reject(e *history.Event) bool {
	q := b.waiting[e.Node]
	for k, idx := range q {
		fl := &b.f.List[idx]
		if e.Msg != 0 && fl.Msg != e.Msg {
			continue
		}
		fl.Rejected, fl.RejectedAt, fl.Rejection = true, e.Time, b.name(e.Value)
		b.waiting[e.Node] = append(q[:k:k], q[k+1:]...)
		return true
	}
	return false
}
