package harness

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"coup/checks"
	"coup/harness/history"
	"coup/nemesis"
	"coup/workloads"
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
	r.nem = nemesis.New(nemesis.Config{Nodes: r.names, Duration: time.Second, Seed: 1, FIFO: true})
	r.router = &router{r: r, record: true, counts: map[string]int64{}, sentBy: map[string]int64{}, nem: r.nem, queue: newDelayQueue()}
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

// FuzzEvaluate judges any history: the results agree with themselves (the
// overall verdict composes the checks', the exit code matches the
// outcome) and render as JSON and as a report.
func FuzzEvaluate(f *testing.F) {
	f.Add(`{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"bully","nodes":["n1","n2"],"ids":[1,2],"expect":{"valid":false,"violations":["two-leaders"]}}}
{"i":1,"t":1,"kind":"process","node":"n1","what":"start"}
{"i":2,"t":1,"kind":"process","node":"n2","what":"start"}
{"i":3,"t":5,"kind":"report","node":"n1","what":"leader","value":"n1"}
{"i":4,"t":6,"kind":"report","node":"n2","what":"leader","value":"n2"}
{"i":5,"t":9,"kind":"end"}`)
	f.Add(`{"i":0,"t":0,"kind":"meta","meta":{"scenario":"m","algorithm":"centralised","nodes":["n1"],"ids":[1],"checks":["mutex-linearizable","mutex-cs"]}}
{"i":1,"t":1,"kind":"process","node":"n1","what":"start"}
{"i":2,"t":2,"kind":"op","process":"c1","type":"invoke","f":"acquire","node":"n1","value":"c1"}
{"i":3,"t":3,"kind":"op","process":"c1","type":"ok","f":"acquire","node":"n1","value":"c1"}`)
	f.Fuzz(func(t *testing.T, text string) {
		h, err := history.Read(strings.NewReader(text))
		if err != nil || len(h.Events) > 200 {
			return
		}
		res, err := Evaluate(h)
		if err != nil {
			return // an unknown check named in the meta event
		}
		var vs []checks.Validity
		for _, name := range res.Order {
			vs = append(vs, res.Checks[name].Valid)
		}
		if got := checks.Compose(vs...); got != res.Valid {
			t.Fatalf("valid %v, but the checks compose to %v", res.Valid, got)
		}
		want := map[string]int{AsExpected: ExitOK, Unexpected: ExitUnexpected, Unknown: ExitUnknown}[res.Outcome]
		if res.ExitCode != want {
			t.Fatalf("outcome %q with exit %d", res.Outcome, res.ExitCode)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		if err := WriteReport(&sb, res, h); err != nil {
			t.Fatal(err)
		}
		_ = res.Summary()
	})
}
