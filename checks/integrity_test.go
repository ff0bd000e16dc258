package checks

import (
	"testing"

	"github.com/coupharness/coup/history"
)

func TestIntegrity(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	const body = `{"type":"election","id":9}`
	// base: three nodes that verify checksums, started at 0 (events 1–3),
	// trusting n3 from 10ms (4–6).
	base := func() *hb { return hist(n3...).checksums(true).starts(0, n3...).agree("n3", 10, n3...) }
	// hit: message 1 from n1 to n2, sent and corrupted at 20ms (7, 8) and
	// delivered at 21ms (9).
	hit := func(b *hb) *hb { return b.send(1, "n1", "n2", "election", 20).corrupt(1, 20, body).deliver(1, 21) }
	runCases(t, "integrity", []verdictCase{
		{
			name:    "nothing corrupted",
			h:       base().msg(1, "n1", "n2", "election", 20).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"corrupted": 0, "checksums": true},
			explain: []string{"the nemesis corrupted no message"},
		},
		{
			name:    "a corrupted message rejected by its receiver",
			h:       hit(base()).rejected("n2", 1, 21).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"corrupted": 1, "rejected": 1, "accepted": 0, "undelivered": 0},
			explain: []string{"every corrupted message was rejected by its receiver or never delivered: of 1 corrupted message, 1 delivery was rejected and 0 never delivered"},
		},
		{
			name:    "a rejection without a message id matches the delivery",
			h:       hit(base()).rejected("n2", 0, 21).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"rejected": 1},
		},
		{
			name:    "a corrupted message never delivered",
			h:       base().send(1, "n1", "n2", "election", 20).corrupt(1, 20, body).drop(1, "loss", 21).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"corrupted": 1, "undelivered": 1, "deliveries": 0},
		},
		{
			name:     "a corrupted message accepted",
			h:        hit(base()).stops(300, n3...).end(300).h(),
			want:     False,
			nodes:    []string{"n1", "n2"},
			interval: &Interval{From: ms(20), To: ms(21)},
			evidence: []int64{8, 9},
			figures:  map[string]any{"accepted": 1},
			explain:  []string{`message 1 (election, n1→n2) was corrupted by the nemesis at 0.020s (body now {"type":"election","id":9}) and delivered to n2 at 0.021s, which did not reject it: n2 acted on a corrupted message; the nodes were verifying checksums, so n2's check missed the change`},
		},
		{
			name: "a joker's alteration accepted",
			h: base().send(1, "n3", "n1", "election", 20).corrupt(1, 20, "").how("joker", `field "payload": "n1/1/ab" → "n1/1/xb"`).
				deliver(1, 21).stops(300, n3...).end(300).h(),
			want:    False,
			nodes:   []string{"n3", "n1"},
			explain: []string{`message 1 (election, n3→n1) was altered by a joker, n3, at 0.020s (field "payload": "n1/1/ab" → "n1/1/xb") and delivered to n1 at 0.021s, which did not reject it: n1 acted on a corrupted message; the joker summed the altered message again, so its per-message checksum holds and only an end-to-end check of the payload can catch the change`},
		},
		{
			name:    "a corrupted message accepted without checksums",
			h:       hit(hist(n3...).starts(0, n3...).agree("n3", 10, n3...)).stops(300, n3...).end(300).h(),
			want:    False,
			figures: map[string]any{"checksums": false},
			explain: []string{"n2 acted on a corrupted message; the nodes were not verifying checksums (checksums = false), so a corruption that keeps the JSON valid cannot be caught"},
		},
		{
			name:     "the receiver crashed before it could be seen to reject",
			h:        hit(base()).crash("n2", 50).stops(300, "n1", "n3").end(300).h(),
			want:     Unknown,
			evidence: []int64{8, 9},
			figures:  map[string]any{"undecided": 1},
			explain:  []string{"delivered to n2 at 0.021s, which did not reject it, but n2 crashed at 0.050s within 100ms of the delivery, so whether it would have rejected it is unknown"},
		},
		{
			name: "the receiver crashed after the grace: accepted",
			h:    hit(base()).crash("n2", 200).stops(300, "n1", "n3").end(300).h(),
			want: False,
		},
		{
			name:    "the receiver was paused before it could be seen to reject",
			h:       hit(base()).pause("n2", 30).stops(300, n3...).end(300).h(),
			want:    Unknown,
			explain: []string{"n2 was paused at 0.030s within 100ms"},
		},
		{
			name:    "the history ends within the grace",
			h:       hit(base()).stops(100, n3...).end(100).h(),
			want:    Unknown,
			explain: []string{"but the history ends within 100ms of the delivery"},
		},
		{
			name:    "a rejection by a later incarnation does not count",
			h:       hit(base()).crash("n2", 200).start("n2", 210).rejected("n2", 1, 220).stops(300, n3...).end(300).h(),
			want:    False,
			figures: map[string]any{"unexplained_rejections": 1},
		},
		{
			name: "rejections without ids match the oldest delivery first",
			h: hit(base()).send(2, "n3", "n2", "election", 22).corrupt(2, 22, body).deliver(2, 23).
				rejected("n2", 2, 24).rejected("n2", 0, 25).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"rejected": 2, "corrupted": 2},
		},
		{
			name: "one rejection without an id for two deliveries",
			h: hit(base()).send(2, "n3", "n2", "election", 22).corrupt(2, 22, body).deliver(2, 23).
				rejected("n2", 0, 25).stops(300, n3...).end(300).h(),
			want:     False,
			evidence: []int64{11, 12},
			explain:  []string{"message 2 (election, n3→n2)"},
		},
		{
			name: "a duplicated message with both copies corrupted, rejected only once",
			h: base().send(1, "n1", "n2", "election", 20).dup(1, 20).corrupt(1, 21, body).deliver(1, 21).
				rejected("n2", 1, 21).corrupt(1, 30, body).deliver(1, 30).stops(300, n3...).end(300).h(),
			want:     False,
			evidence: []int64{12, 13},
			figures:  map[string]any{"deliveries": 2, "rejected": 1, "accepted": 1},
			explain:  []string{"and delivered to n2 at 0.030s, which did not reject it"},
		},
		{
			name: "a duplicated message with only its second copy corrupted, and that one rejected",
			h: base().send(1, "n1", "n2", "election", 20).dup(1, 20).deliver(1, 21).
				corrupt(1, 30, body).deliver(1, 30).rejected("n2", 1, 30).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"deliveries": 1, "rejected": 1, "accepted": 0},
		},
		{
			name:    "a corrupted copy the history never delivers",
			h:       base().send(1, "n1", "n2", "election", 20).deliver(1, 21).corrupt(1, 21, body).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"deliveries": 0, "undelivered": 1},
		},
		{
			name: "the payload check found the corruption: detection, not failure",
			h: hit(base()).rejected("n2", 1, 21).report("n1", "payload", "corrupt", 50).
				stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"payload_corrupt": 1, "payload_intact": 0},
			explain: []string{"; the end-to-end payload check found the payload corrupt (n1 at 0.050s), a detection, not a failure"},
		},
		{
			name:    "the payload check found the payload intact",
			h:       base().report("n1", "payload", "intact", 50).stops(300, n3...).end(300).h(),
			want:    True,
			explain: []string{"the nemesis corrupted no message; the end-to-end payload check found the payload intact (n1 at 0.050s)"},
		},
		{
			name:    "a rejection of a message nobody corrupted is reported",
			h:       base().msg(7, "n1", "n2", "election", 20).rejected("n2", 7, 30).stops(300, n3...).end(300).h(),
			want:    True,
			figures: map[string]any{"unexplained_rejections": 1},
			explain: []string{"; a node rejected 1 message the nemesis had not corrupted (the first: n2 at 0.030s, reason checksum, message 7), a fault of the node or the harness"},
		},
		{
			name: "the counters say messages were corrupted, but none was recorded",
			h: base().stops(300, n3...).endCounts(300, map[string]int64{"messages.sent": 4, "messages.corrupted": 2}).
				h(),
			want:    Unknown,
			explain: []string{"the nemesis corrupted 2 messages but the history does not record them one by one"},
		},
		{
			name:    "counters by kind of corruption, without a total",
			h:       base().stops(300, n3...).endCounts(300, map[string]int64{"messages.corrupted.bitflip": 1, "messages.corrupted.field": 2}).h(),
			want:    Unknown,
			explain: []string{"the nemesis corrupted 3 messages"},
		},
	})
}

// A corrupt event with a detail says what changed.
func TestIntegrityDetail(t *testing.T) {
	b := hist("n1", "n2").starts(0, "n1", "n2").send(1, "n1", "n2", "election", 10)
	b.add(history.Event{Time: ms(10), Kind: history.KindMsg, What: history.MsgCorrupt, Msg: 1, Src: "n1", Dest: "n2", MType: "election", Detail: "field id: 3 → 9"})
	h := b.deliver(1, 11).stops(300, "n1", "n2").end(300).h()
	r := judge(t, "integrity", h)
	if want := "at 0.010s (field id: 3 → 9) and delivered"; r.Valid != False || !contains(r.Explanation, want) {
		t.Errorf("got %v (%s), want false with %q", r.Valid, r.Explanation, want)
	}
}
