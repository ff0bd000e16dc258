package harness

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/workloads"
)

// testRun is a run with no process: its router, clients and recorder, and
// two members, n1 and n2, whose queues nobody reads.
func testRun() *run {
	r := &run{members: map[string]*member{}, gate: make(chan struct{}), zero: time.Now()}
	r.rec = history.NewRecorder(nil, func() int64 { return int64(time.Since(r.zero)) }, true)
	r.names = []string{"n1", "n2"}
	for _, n := range r.names {
		r.members[n] = &member{name: n, box: newOutbox(64)}
	}
	nem := nemesis.New(nemesis.Config{Nodes: r.names, Duration: time.Second, Seed: 1, FIFO: true})
	r.router = &router{r: r, record: true, counts: map[string]int64{}, sentBy: map[string]int64{}, nem: nem, queue: newDelayQueue()}
	r.clients = &clients{r: r, w: workloads.None{}, timeout: time.Hour, pending: map[int]*pendingOp{}, known: map[string]bool{}, ended: map[int]*pendingOp{}}
	return r
}

// FuzzNodeOutput feeds any lines to the harness as n2's output, after
// client c1 has asked n1: nothing n2 writes completes c1's operation,
// every recorded event stays small, and no class of refusal is recorded
// more than RefusalsRecorded times.
func FuzzNodeOutput(f *testing.F) {
	for _, s := range []string{
		`{"src":"n2","dest":"n1","body":{"type":"ping","n":1}}`,
		`{"src":"n1","dest":"c1","body":{"type":"elect_ok","in_reply_to":1}}`,
		`{"src":"n2","dest":"coup","body":{"type":"report","what":"leader","value":"n2"}}`,
		`{"src":"n2","dest":"coup","body":{"type":"report","what":"metric","name":"x","value":"` + strings.Repeat("<", 3000) + `"}}`,
		`{"src":"n2","dest":"c1","body":{"type":"error","in_reply_to":1,"code":11}}`,
		`{"src":"n2","dest":"c7","body":{}}` + "\n" + `not json`,
		`{"src":"n2","dest":"coup","body":{"type":"init_ok","in_reply_to":1}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		r := testRun()
		r.clients.mu.Lock()
		r.clients.Invoke(workloads.Op{Process: "c1", Node: "n1", F: "elect"})
		r.clients.mu.Unlock()
		for _, line := range strings.Split(out, "\n") {
			_ = isInitOK([]byte(line))
			r.route("n2", []byte(line), nil)
		}
		r.router.queue.close()
		refusals := map[[2]string]int{}
		for _, e := range r.rec.Events() {
			if e.Kind == history.KindOp && e.Type != history.OpInvoke {
				t.Fatalf("n2's output completed an operation: %+v", e)
			}
			if e.Kind == history.KindRefused {
				refusals[[2]string{e.Node, e.What}]++
			}
			b, _ := json.Marshal(&e)
			if len(b) > 16*MaxField {
				t.Fatalf("an event of %d bytes: %.300s", len(b), b)
			}
		}
		for k, n := range refusals {
			if n > RefusalsRecorded {
				t.Fatalf("%d refusals of %v recorded", n, k)
			}
		}
		r.clients.stop()
	})
}
