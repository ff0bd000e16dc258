package checks

import (
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// Two Ricart–Agrawala entries among three nodes, every message taking 2ms:
// n1 enters uncontended after one round trip; n2 asks while n1 is inside
// and enters one message after n1 leaves.
func raHistory() *hb {
	n3 := []string{"n1", "n2", "n3"}
	return hist(n3...).starts(0, n3...).
		call("c1", fAcquire, "n1", "c1", 10).
		msgAt(history.MsgSend, 1, "n1", "n2", "request", 10).msgAt(history.MsgSend, 2, "n1", "n3", "request", 10).
		msgAt(history.MsgDeliver, 1, "n1", "n2", "request", 12).msgAt(history.MsgDeliver, 2, "n1", "n3", "request", 12).
		msgAt(history.MsgSend, 3, "n2", "n1", "reply", 12).msgAt(history.MsgSend, 4, "n3", "n1", "reply", 12).
		msgAt(history.MsgDeliver, 3, "n2", "n1", "reply", 14).msgAt(history.MsgDeliver, 4, "n3", "n1", "reply", 14).
		cs("n1", csEnter, 14).ret("c1", history.OpOK, fAcquire, 14).
		call("c2", fAcquire, "n2", "c2", 20).
		msgAt(history.MsgSend, 5, "n2", "n1", "request", 20).msgAt(history.MsgSend, 6, "n2", "n3", "request", 20).
		msgAt(history.MsgDeliver, 5, "n2", "n1", "request", 22).msgAt(history.MsgDeliver, 6, "n2", "n3", "request", 22).
		msgAt(history.MsgSend, 7, "n3", "n2", "reply", 22).msgAt(history.MsgDeliver, 7, "n3", "n2", "reply", 24).
		call("c1", fRelease, "n1", "c1", 30).cs("n1", csExit, 30).ret("c1", history.OpOK, fRelease, 30).
		msgAt(history.MsgSend, 8, "n1", "n2", "reply", 30).msgAt(history.MsgDeliver, 8, "n1", "n2", "reply", 32).
		cs("n2", csEnter, 32).ret("c2", history.OpOK, fAcquire, 32).
		lockOK("c2", fRelease, "n2", "c2", 40, 40)
}

func TestMutexMeasures(t *testing.T) {
	r := judge(t, "mutex-measures", raHistory().end(100).h())
	want := map[string]any{
		"entries": 2, "messages": int64(8), "messages_per_entry": 4.0,
		"messages_per_entry_request": 2.0, "messages_per_entry_reply": 2.0,
		"message_delay_ns":               ms(2),
		"client_delay_count":             2,
		"client_delay_median_ns":         ms(12),
		"client_delay_max_ns":            ms(12),
		"uncontended_client_delay_count": 1, "uncontended_client_delay_median_ns": ms(4), "uncontended_client_delay_median_msgs": 2.0,
		"sync_delay_count": 1, "sync_delay_median_ns": ms(2), "sync_delay_median_msgs": 1.0,
	}
	if r.Valid != True {
		t.Errorf("got %v (%s), want true", r.Valid, r.Explanation)
	}
	for k, v := range want {
		if r.Figures[k] != v {
			t.Errorf("figure %s = %v (%T), want %v (%T)", k, r.Figures[k], r.Figures[k], v, v)
		}
	}
	if !strings.Contains(r.Explanation, "2 entries, 4 messages each (2 reply, 2 request)") {
		t.Errorf("explanation %q", r.Explanation)
	}
}

// The end event's counters count every message, recorded or not.
func TestMutexMeasuresCountsFromTheEndEvent(t *testing.T) {
	h := raHistory().add(history.Event{Time: ms(100), Kind: history.KindEnd, Counts: map[string]int64{
		"messages.sent": 12, "messages.sent.request": 6, "messages.sent.reply": 6, "ops.ok": 4,
	}}).h()
	r := judge(t, "mutex-measures", h)
	if r.Figures["messages"] != int64(12) || r.Figures["messages_per_entry"] != 6.0 || r.Figures["messages_per_entry_request"] != 3.0 {
		t.Errorf("figures %v: want 12 messages, 6 per entry, 3 requests per entry", r.Figures)
	}
}

func TestMutexMeasuresWithoutEntries(t *testing.T) {
	r := judge(t, "mutex-measures", hist("n1").start("n1", 0).end(100).h())
	if r.Valid != True || !strings.Contains(r.Explanation, "nothing to measure") {
		t.Errorf("got %v (%s), want true with nothing to measure", r.Valid, r.Explanation)
	}
}
