package checks

import (
	"fmt"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
)

// rejectGrace is how long a receiver must keep running after a corrupted
// message was delivered to it before its silence counts as acceptance.
// A receiver that crashed, was paused or was stopped sooner may simply not
// have read the message yet.
const rejectGrace = int64(100 * time.Millisecond)

// Report whats of the payload check (the ring commander's end-to-end sum).
const (
	reportPayload  = "payload"
	payloadIntact  = "intact"
	payloadCorrupt = "corrupt"
)

// corruptDelivery is one delivery of a corrupted message.
type corruptDelivery struct {
	corrupt, deliver *history.Event
	node             string
	inc              *history.Event // the receiver's start at the delivery
	rejected         *history.Event // the receiver's rejection, once matched
	judged           bool           // the grace has passed and chance is known
	chance           bool           // the receiver ran for the whole grace
	why              string         // when it had no chance: why not
}

func (d *corruptDelivery) deadline() int64 { return addTime(d.deliver.Time, rejectGrace) }

// integrityScan is what one pass over a history finds.
type integrityScan struct {
	corrupt    map[int64]*history.Event // the first corrupt event of each message
	order      []int64                  // corrupted message ids, in history order
	deliveries []*corruptDelivery       // in history order
	delivered  map[int64]bool
	// unexplained are rejections that match no corrupted delivery.
	unexplained []*history.Event
	payload     []*history.Event // payload reports
}

// scanIntegrity matches every delivery of a corrupted copy with its
// receiver's rejection. A rejection that names the message matches its
// delivery to that node; one without a message id (the line was too broken
// to read it) matches the oldest unmatched delivery to that node. Only
// rejections by the incarnation the message was delivered to count.
func scanIntegrity(h *history.History) *integrityScan {
	s := &integrityScan{corrupt: map[int64]*history.Event{}, delivered: map[int64]bool{}}
	for e := range h.All() {
		if e.Kind == history.KindMsg && e.What == history.MsgCorrupt {
			if _, ok := s.corrupt[e.Msg]; !ok {
				c := *e // All's message events are scratch
				s.corrupt[e.Msg] = &c
				s.order = append(s.order, e.Msg)
			}
		}
	}
	w := newWorld(&h.Meta)
	byID := map[int64][]*corruptDelivery{}
	queue := map[string][]*corruptDelivery{} // per receiver, in delivery order
	waiting := 0                             // deliveries[:waiting] are judged
	judge := func(upTo int64, final bool) {
		for ; waiting < len(s.deliveries); waiting++ {
			d := s.deliveries[waiting]
			if d.deadline() >= upTo && !(final && d.deadline() == upTo) {
				if final {
					d.judged, d.why = true, "the history ends"
					continue
				}
				return
			}
			n := w.nodes[d.node]
			d.judged = true
			switch {
			case !n.live && n.down != nil:
				d.why = fmt.Sprintf("%s %s at %s", d.node, downWord(n.down), fmtTime(n.down.Time))
			case !n.live:
				d.why = fmt.Sprintf("%s was not running", d.node)
			case n.start != d.inc:
				d.why = fmt.Sprintf("%s was restarted at %s", d.node, fmtTime(n.start.Time))
			case n.pause != nil:
				d.why = fmt.Sprintf("%s was paused at %s", d.node, fmtTime(n.pause.Time))
			default:
				d.chance = true
			}
		}
	}
	// pending holds, for each message and receiver, the corrupt event of a
	// copy not yet delivered: the next delivery of that message to that
	// receiver is that copy (the recorder writes each corrupt event just
	// before its copy's delivery). Another copy of the same message, not
	// corrupted, is no corrupted delivery.
	type copyKey struct {
		msg  int64
		dest string
	}
	pending := map[copyKey]*history.Event{}
	for e := range h.All() {
		judge(e.Time, false)
		w.apply(e)
		switch {
		case e.Kind == history.KindMsg && e.What == history.MsgCorrupt:
			c := *e // All's message events are scratch
			pending[copyKey{e.Msg, e.Dest}] = &c
		case e.Kind == history.KindMsg && e.What == history.MsgDeliver:
			k := copyKey{e.Msg, e.Dest}
			c, ok := pending[k]
			if !ok {
				break
			}
			delete(pending, k)
			s.delivered[e.Msg] = true
			dv := *e // All's message events are scratch
			d := &corruptDelivery{corrupt: c, deliver: &dv, node: e.Dest, inc: w.node(e.Dest).start}
			s.deliveries = append(s.deliveries, d)
			byID[e.Msg] = append(byID[e.Msg], d)
			queue[e.Dest] = append(queue[e.Dest], d)
		case e.Kind == history.KindReport && e.What == history.ReportRejected:
			inc := w.node(e.Node).start
			var match *corruptDelivery
			if e.Msg != 0 {
				for _, d := range byID[e.Msg] {
					if d.node == e.Node && d.rejected == nil && d.inc == inc {
						match = d
						break
					}
				}
			} else {
				q := queue[e.Node]
				for len(q) > 0 && (q[0].rejected != nil || q[0].inc != inc) {
					q = q[1:]
				}
				queue[e.Node] = q
				if len(q) > 0 {
					match = q[0]
				}
			}
			if match == nil {
				s.unexplained = append(s.unexplained, e)
			} else {
				match.rejected = e
			}
		case e.Kind == history.KindReport && e.What == reportPayload:
			s.payload = append(s.payload, e)
		}
	}
	judge(h.End(), true)
	return s
}

// integrity: every message the nemesis corrupted was rejected by its
// receiver, or never delivered.
func integrity(h *history.History) Result {
	return unrecordedAfter(h, integrityOf(h), "whether the messages corrupted after it were rejected is unknown")
}

func integrityOf(h *history.History) Result {
	s := scanIntegrity(h)
	var accepted, undecided []*corruptDelivery
	rejected := 0
	for _, d := range s.deliveries {
		switch {
		case d.rejected != nil:
			rejected++
		case d.chance:
			accepted = append(accepted, d)
		default:
			undecided = append(undecided, d)
		}
	}
	undelivered := 0
	for _, id := range s.order {
		if !s.delivered[id] {
			undelivered++
		}
	}
	r := Result{Figures: map[string]any{
		"corrupted": len(s.order), "deliveries": len(s.deliveries), "rejected": rejected,
		"undelivered": undelivered, "accepted": len(accepted), "undecided": len(undecided),
		"checksums": h.Meta.Checksums,
	}}
	if n := len(s.unexplained); n > 0 {
		r.Figures["unexplained_rejections"] = n
	}
	payload := payloadNote(s.payload, &r)
	unexplained := ""
	if n := len(s.unexplained); n > 0 {
		e := s.unexplained[0]
		who := "a node"
		if n > 1 {
			who = "nodes"
		}
		unexplained = fmt.Sprintf("; %s rejected %s the nemesis had not corrupted (the first: %s at %s, %s), a fault of the node or the harness",
			who, plural(n, "message"), e.Node, fmtTime(e.Time), rejectionText(e))
	}

	switch {
	case len(accepted) > 0:
		d := accepted[0]
		r.Valid = False
		r.Nodes = []string{d.node}
		if src := d.corrupt.Src; src != "" && src != d.node {
			r.Nodes = []string{src, d.node}
		}
		r.Interval = &Interval{From: d.corrupt.Time, To: d.deliver.Time}
		r.Evidence = []history.Event{*d.corrupt, *d.deliver}
		sortEvents(r.Evidence)
		sums := fmt.Sprintf("the nodes were verifying checksums, so %s's check missed the change or %s does not report what it rejects", d.node, d.node)
		by := "corrupted by the nemesis"
		switch {
		case d.corrupt.Reason == "joker":
			by = "altered by a joker, " + d.corrupt.Src + ","
			sums = "the joker summed the altered message again, so its per-message checksum holds and only an end-to-end check of the payload can catch the change"
		case !h.Meta.Checksums:
			sums = "the nodes were not verifying checksums (checksums = false), so a corruption that keeps the JSON valid cannot be caught"
		}
		r.Explanation = fmt.Sprintf("%s was %s at %s%s and delivered to %s at %s, which did not reject it: %s acted on a corrupted message; %s",
			msgText(d.corrupt, d.deliver), by, fmtTime(d.corrupt.Time), changeText(d.corrupt), d.node, fmtTime(d.deliver.Time), d.node, sums)
		if len(accepted) > 1 {
			r.Explanation += fmt.Sprintf("; %d of %d deliveries of corrupted messages were accepted", len(accepted), len(s.deliveries))
		}
		r.Explanation += payload
		return r
	case len(undecided) > 0:
		d := undecided[0]
		r.Valid = Unknown
		r.Nodes = []string{d.node}
		r.Evidence = []history.Event{*d.corrupt, *d.deliver}
		sortEvents(r.Evidence)
		r.Explanation = fmt.Sprintf("%s was corrupted by the nemesis at %s and delivered to %s at %s, which did not reject it, but %s within %s of the delivery, so whether it would have rejected it is unknown",
			msgText(d.corrupt, d.deliver), fmtTime(d.corrupt.Time), d.node, fmtTime(d.deliver.Time), d.why, fmtDur(rejectGrace))
		r.Explanation += unexplained + payload
		return r
	case len(s.order) == 0:
		if n := countedCorruptions(h); n > 0 {
			r.Valid = Unknown
			r.Explanation = fmt.Sprintf("the nemesis corrupted %s but the history does not record them one by one, so what became of them is unknown; set messages = true under [history] in the scenario", plural(int(n), "message"))
			return r
		}
		r.Valid = True
		r.Explanation = "the nemesis corrupted no message" + unexplained + payload
		return r
	}
	r.Valid = True
	r.Explanation = fmt.Sprintf("every corrupted message was rejected by its receiver or never delivered: of %s, %d %s rejected and %d never delivered",
		plural(len(s.order), "corrupted message"), rejected, isAre(rejected, "delivery was", "deliveries were"), undelivered)
	r.Explanation += unexplained + payload
	return r
}

// countedCorruptions returns the corruptions the end event's counters
// record: messages.corrupted (or messages.corrupt), or else the sum of the
// counters below it (messages.corrupted.<kind>); 0 when there are none.
func countedCorruptions(h *history.History) int64 {
	for i := len(h.Events) - 1; i >= 0; i-- {
		e := &h.Events[i]
		if e.Kind != history.KindEnd {
			continue
		}
		var total, parts int64
		for k, v := range e.Counts {
			switch {
			case k == "messages.corrupted" || k == "messages.corrupt":
				total += v
			case strings.HasPrefix(k, "messages.corrupted.") || strings.HasPrefix(k, "messages.corrupt."):
				parts += v
			}
		}
		if total > 0 {
			return total
		}
		return parts
	}
	return 0
}

// msgText names a message: "message 42 (election, n2→n3)".
func msgText(c, d *history.Event) string {
	src, dest, mtype := c.Src, c.Dest, c.MType
	if src == "" {
		src = d.Src
	}
	if dest == "" {
		dest = d.Dest
	}
	if mtype == "" {
		mtype = d.MType
	}
	if mtype == "" {
		mtype = "?"
	}
	return fmt.Sprintf("message %d (%s, %s→%s)", c.Msg, mtype, src, dest)
}

// changeText says what the nemesis changed, when the corrupt event says.
func changeText(c *history.Event) string {
	var parts []string
	if c.Detail != "" {
		parts = append(parts, c.Detail)
	}
	if c.Body != "" {
		b := c.Body
		if len(b) > 160 {
			b = b[:160] + "…"
		}
		parts = append(parts, "body now "+b)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// rejectionText describes a rejection report: "why checksum, message 12".
func rejectionText(e *history.Event) string {
	s := "reason " + e.Value
	if e.Value == "" {
		s = "no reason given"
	}
	if e.Msg != 0 {
		s += fmt.Sprintf(", message %d", e.Msg)
	}
	return s
}

// payloadNote sets the payload figures and returns a note for the
// explanation: the commander's end-to-end check, reported beside the
// verdict. A payload reported corrupt is a detection, not a failure.
func payloadNote(reports []*history.Event, r *Result) string {
	if len(reports) == 0 {
		return ""
	}
	var intact, corrupt int
	var firstCorrupt, lastIntact *history.Event
	for _, e := range reports {
		switch e.Value {
		case payloadCorrupt:
			corrupt++
			if firstCorrupt == nil {
				firstCorrupt = e
			}
		case payloadIntact:
			intact++
			lastIntact = e
		}
	}
	r.Figures["payload_intact"] = intact
	r.Figures["payload_corrupt"] = corrupt
	switch {
	case firstCorrupt != nil:
		return fmt.Sprintf("; the end-to-end payload check found the payload corrupt (%s at %s), a detection, not a failure", firstCorrupt.Node, fmtTime(firstCorrupt.Time))
	case lastIntact != nil:
		return fmt.Sprintf("; the end-to-end payload check found the payload intact (%s at %s)", lastIntact.Node, fmtTime(lastIntact.Time))
	}
	return ""
}
