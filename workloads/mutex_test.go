package workloads

import (
	"container/heap"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

// fakeLock runs a workload against a perfect lock service on a virtual
// clock: each answer comes 1ms after the request; acquires wait in a queue
// while the lock is held. An acquire that timeOut picks is never answered
// but with info, Timeout later, and never granted.
type fakeLock struct {
	w       *Mutex
	now     time.Duration
	seq     int
	timers  timerHeap
	holder  string
	queue   []invocation
	log     []string // one line per invocation and completion
	ops     []invocation
	open    map[string]bool
	timeOut func(inv invocation) bool
	errs    []string
}

type invocation struct {
	at                      time.Duration
	process, node, f, owner string
	client                  string // Op.Client
}

const fakeTimeout = 100 * ms

func newFake(w *Mutex) *fakeLock {
	return &fakeLock{w: w, open: map[string]bool{}, timeOut: func(invocation) bool { return false }}
}

func (l *fakeLock) After(d time.Duration, fn func()) {
	l.seq++
	heap.Push(&l.timers, timer{at: max(d, l.now), seq: l.seq, fn: fn})
}

func (l *fakeLock) Invoke(op Op) {
	process, node, f, value := op.Process, op.Node, op.F, op.Value
	inv := invocation{at: l.now, process: process, node: node, f: f, owner: value, client: op.Client}
	if l.open[process] {
		l.errs = append(l.errs, fmt.Sprintf("%s invoked %s at %s while its last operation was open", process, f, l.now))
	}
	l.open[process] = true
	l.ops = append(l.ops, inv)
	l.log = append(l.log, fmt.Sprintf("%s %s invoke %s(%s)@%s", l.now, process, f, value, node))
	if l.timeOut(inv) {
		l.After(l.now+fakeTimeout, func() { l.complete(inv, "info") })
		return
	}
	switch {
	case f == "acquire" && l.holder == "":
		l.holder = value
		l.After(l.now+ms, func() { l.complete(inv, "ok") })
	case f == "acquire":
		l.queue = append(l.queue, inv)
	case f == "release" && l.holder == value:
		l.holder = ""
		l.After(l.now+ms, func() { l.complete(inv, "ok") })
		if len(l.queue) > 0 {
			next := l.queue[0]
			l.queue = l.queue[1:]
			l.holder = next.owner
			l.After(l.now+ms, func() { l.complete(next, "ok") })
		}
	default:
		l.After(l.now+ms, func() { l.complete(inv, "fail") })
	}
}

func (l *fakeLock) complete(inv invocation, typ string) {
	l.open[inv.process] = false
	l.log = append(l.log, fmt.Sprintf("%s %s %s %s", l.now, inv.process, typ, inv.f))
	l.w.Complete(l, Completion{Process: inv.process, Node: inv.node, F: inv.f, Type: typ, At: l.now})
}

func (l *fakeLock) run(limit time.Duration) {
	l.w.Start(l)
	for l.timers.Len() > 0 && l.timers[0].at <= limit {
		t := heap.Pop(&l.timers).(timer)
		l.now = t.at
		t.fn()
	}
}

type timer struct {
	at  time.Duration
	seq int
	fn  func()
}

type timerHeap []timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].seq < h[j].seq)
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

func TestMutexClientsCycle(t *testing.T) {
	w := &Mutex{Clients: 3, Nodes: []string{"n1", "n2"}, Rate: 200, Hold: 5 * ms, At: 10 * ms, Until: 500 * ms, Seed: 1}
	l := newFake(w)
	l.run(2 * time.Second)
	for _, e := range l.errs {
		t.Error(e)
	}
	acquires := 0
	for _, inv := range l.ops {
		want := map[string]string{"c1": "n1", "c2": "n2", "c3": "n1"}[inv.owner]
		if inv.node != want || inv.process != inv.owner {
			t.Errorf("%s for %s at %s: want client %s at %s, under its own name", inv.process, inv.owner, inv.node, inv.owner, want)
		}
		if inv.at < w.At {
			t.Errorf("%s invoked at %s, before the start at %s", inv.process, inv.at, w.At)
		}
		if inv.f == "acquire" {
			acquires++
			if inv.at >= w.Until {
				t.Errorf("%s acquired at %s, after Until", inv.process, inv.at)
			}
		}
	}
	if acquires < 30 {
		t.Errorf("only %d acquires", acquires)
	}
	// Every granted acquire is released by the same client, Hold after.
	granted := map[string]time.Duration{}
	for i, line := range l.log {
		parts := strings.Fields(line)
		at, _ := time.ParseDuration(parts[0])
		switch {
		case parts[2] == "ok" && parts[3] == "acquire":
			granted[parts[1]] = at
		case parts[2] == "invoke" && strings.HasPrefix(parts[3], "release"):
			g, ok := granted[parts[1]]
			if !ok {
				t.Errorf("line %d: %s releases without holding: %s", i, parts[1], line)
			} else if at-g != w.Hold {
				t.Errorf("line %d: %s released %s after its grant, want %s", i, parts[1], at-g, w.Hold)
			}
			delete(granted, parts[1])
		}
	}
	if len(granted) != 0 {
		t.Errorf("never released: %v", granted)
	}
}

// A timed-out acquire retires the process: the client goes on as
// c(i+Clients), first releasing for itself, then acquiring again.
func TestMutexInfoRetiresTheProcess(t *testing.T) {
	w := &Mutex{Clients: 3, Nodes: []string{"n1"}, Rate: 100, Hold: 2 * ms, Until: 400 * ms, Seed: 2}
	l := newFake(w)
	first := true
	l.timeOut = func(inv invocation) bool {
		if inv.process == "c2" && inv.f == "acquire" && first {
			first = false
			return true
		}
		return false
	}
	l.run(2 * time.Second)
	for _, e := range l.errs {
		t.Error(e)
	}
	var after []invocation
	sawInfo := false
	for _, line := range l.log {
		if strings.HasSuffix(line, "c2 info acquire") {
			sawInfo = true
		}
	}
	if !sawInfo {
		t.Fatal("c2's acquire never timed out")
	}
	for _, inv := range l.ops {
		if inv.owner == "c2" {
			after = append(after, inv)
		}
	}
	i := slices.IndexFunc(after, func(inv invocation) bool { return inv.process != "c2" })
	if i < 0 {
		t.Fatalf("c2 never changed process: %v", after)
	}
	if got := after[i]; got.process != "c5" || got.f != "release" {
		t.Errorf("after the timeout: %s %s, want c5 release", got.process, got.f)
	}
	for _, inv := range after[:i] {
		if inv.process != "c2" {
			t.Errorf("%+v before the retirement", inv)
		}
	}
	for _, inv := range after[i:] {
		if inv.process != "c5" {
			t.Errorf("%+v after the retirement, want process c5", inv)
		}
		if inv.client != "c2" {
			t.Errorf("%+v after the retirement, want client c2 still", inv)
		}
	}
	if len(after) < i+3 || after[i+1].f != "acquire" {
		t.Errorf("c2 did not go on acquiring after its release: %v", after[i:])
	}
}

// The pauses come from the seed: the same seed gives the same operations,
// another seed others.
func TestMutexIsSeeded(t *testing.T) {
	run := func(seed int64) []string {
		w := &Mutex{Clients: 4, Nodes: []string{"n1", "n2", "n3"}, Rate: 100, Hold: 3 * ms, Until: 300 * ms, Seed: seed}
		l := newFake(w)
		l.run(time.Second)
		return l.log
	}
	a, b, c := run(7), run(7), run(8)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave different operations")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave the same operations")
	}
}

// Without contention a client asks at the rate: one acquire per pause,
// whose mean is Clients/Rate, plus the time the lock takes to answer.
func TestMutexRate(t *testing.T) {
	w := &Mutex{Clients: 1, Nodes: []string{"n1"}, Rate: 500, Until: 4 * time.Second, Seed: 3}
	l := newFake(w)
	l.run(5 * time.Second)
	acquires := 0
	for _, inv := range l.ops {
		if inv.f == "acquire" {
			acquires++
		}
	}
	// Each cycle is a pause of mean 2ms, 1ms to grant and 1ms to release:
	// about 4s / 4ms = 1000 acquires.
	if acquires < 900 || acquires > 1100 {
		t.Errorf("%d acquires in 4s, want about 1000", acquires)
	}
}
