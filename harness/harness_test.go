package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/scenario"
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

// The delay queue's goroutine gives its thread back when the queue closes.
// A goroutine that ends locked to its thread ends the thread, and every
// process started from that thread dies with it (the SIGKILL of its
// Pdeathsig): Go starts processes from any thread, so a run's nodes died
// when a run beside it in the same process ended (TestPauseTheLeader saw
// two of its nodes "exit on their own" as a parallel test's run ended).
// Here the queue runs on the thread a process was started from, as the
// scheduler may have put it (not the main thread, which Go never ends);
// the process must outlive the queue.
func TestDelayQueueGivesItsThreadBack(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	q := &delayQueue{done: make(chan struct{}), wakeR: -1, wakeW: -1}
	started, ended := make(chan *proc.Proc, 1), make(chan struct{})
	var work func()
	work = func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if syscall.Gettid() == os.Getpid() {
			// Go never ends its main thread (it wedges it instead):
			// hold it, so that the work runs on another.
			done := make(chan struct{})
			go func() { defer close(done); work() }()
			<-done
			return
		}
		p, err := proc.Start(proc.Spec{Argv: []string{"sleep", "30"}, Stdout: null})
		if err != nil {
			t.Error(err)
			close(q.done)
			started <- nil
			return
		}
		started <- p
		q.loop() // until closed
	}
	go func() { defer close(ended); work() }()
	p := <-started
	if p == nil {
		return
	}
	dead := make(chan struct{})
	go func() { _, _ = p.Wait(); close(dead) }()
	defer func() { _ = p.Kill(); <-dead }()
	q.close()
	<-ended // the goroutine has ended: its thread with it, were it still locked
	select {
	case <-dead:
		t.Errorf("the process started from the queue's thread died with the queue (pid %d)", p.Pid())
	case <-time.After(500 * time.Millisecond):
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

// Every node's init body, put together from the part encoded once per run,
// is the init encoded whole: for built-in and foreign nodes, with ids,
// params and a seed, and with a clock rate (encoded whole).
func TestInitBodyIsTheInitEncoded(t *testing.T) {
	for _, text := range []string{
		"name = \"a\"\nalgorithm = \"chang-roberts\"\nnodes = 3\nduration = \"1s\"\n",
		"name = \"b\"\nalgorithm = \"bully\"\nnodes = 3\nids = [7, 3, 5]\nseed = 42\nchecksums = true\nduration = \"1s\"\n[params]\nt_trans = \"20ms\"\n",
		"name = \"c\"\ncommand = [\"./node\", \"--flag\"]\nnodes = 2\nduration = \"1s\"\n",
	} {
		sc, err := scenario.Parse("init.toml", text)
		if err != nil {
			t.Fatalf("%v", err)
		}
		r := &run{sc: sc, names: sc.NodeNames()}
		for _, name := range append(sc.NodeNames(), `odd "name" <&>`) {
			for _, rate := range []float64{0, 2} {
				want, _ := json.Marshal(r.initMessage(name, rate))
				if got := r.initBody(name, rate); !bytes.Equal(got, want) {
					t.Errorf("%s, %s at rate %v: init body\n%s\nwant\n%s", sc.Name, name, rate, got, want)
				}
			}
		}
	}
}
