package harness

import (
	"sync"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
)

// The delay queue runs items in due order, ties in push order, whatever
// order they were pushed in.
func TestDelayQueueOrder(t *testing.T) {
	q := newDelayQueue()
	var mu sync.Mutex
	var got []int
	base := time.Now().Add(30 * time.Millisecond)
	done := make(chan struct{})
	dues := []time.Duration{5, 1, 3, 3, 0, 9}
	for i, d := range dues {
		i := i
		q.push(base.Add(d*time.Millisecond), func() {
			mu.Lock()
			got = append(got, i)
			if len(got) == len(dues) {
				close(done)
			}
			mu.Unlock()
		})
	}
	<-done
	q.close()
	want := []int{4, 1, 2, 3, 0, 5}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ran %v, want %v", got, want)
		}
	}
}

// A node whose queue is full costs the router nothing: the message is
// dropped as an overflow and recorded, and enqueue returns at once.
func TestEnqueueNeverBlocks(t *testing.T) {
	r := &run{rec: history.NewRecorder(nil, func() int64 { return 0 }, true)}
	r.router = &router{r: r, record: true, counts: map[string]int64{}}
	m := &member{name: "n1", box: newOutbox(2)}
	done := make(chan struct{})
	go func() {
		for i := 1; i <= 5; i++ {
			r.enqueue(m, delivery{msg: int64(i), src: "n2", mtype: "x", rec: true})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("enqueue blocked on a full queue")
	}
	if got := r.router.counts[history.CountDropped+".overflow"]; got != 3 {
		t.Errorf("%d overflow drops, want 3", got)
	}
	drops := 0
	for _, e := range r.rec.Events() {
		if e.Kind == history.KindMsg && e.What == history.MsgDrop && e.Reason == "overflow" {
			drops++
		}
	}
	if drops != 3 {
		t.Errorf("%d drop events, want 3", drops)
	}
}
