package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
)

// Sleep ends at its time, early when an event is queued for the nemesis,
// and with false when the context ends.
func TestSleep(t *testing.T) {
	r := New(nil, Config{})
	if !r.Sleep(context.Background(), 0) {
		t.Error("a sleep of nothing with a live context reports false")
	}
	start := time.Now()
	if !r.Sleep(context.Background(), 20*time.Millisecond) || time.Since(start) < 20*time.Millisecond {
		t.Error("a sleep of 20ms ended early or reported false")
	}
	go r.Watch(&history.Event{Kind: history.KindReport, What: history.ReportLeader, Node: "n1"})
	if !r.Sleep(context.Background(), time.Hour) {
		t.Error("woken by an event, the sleep reports false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r.Sleep(ctx, time.Hour) {
		t.Error("a sleep whose context ended reports true")
	}
}
