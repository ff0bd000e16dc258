package ricartagrawala

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/mutex"
	"github.com/coupharness/coup/nodes/mutex/mutextest"
	"github.com/coupharness/coup/nodes/nodetest"
)

const ms = time.Millisecond

func cluster(t *testing.T, n int, ids []int) *nodetest.Network {
	t.Helper()
	net, err := nodetest.New(Spec, n, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	net.Start()
	return net
}

func acquire(net *nodetest.Network, client, node string) int {
	return net.Do(client, node, mutex.OpAcquire, client)
}

func release(net *nodetest.Network, client, node string) int {
	return net.Do(client, node, mutex.OpRelease, client)
}

func granted(net *nodetest.Network, id int) (time.Duration, bool) {
	r, ok := net.Answer(id)
	return r.At, ok && r.OK
}

// One entry costs N−1 requests and N−1 replies, and a client that nobody
// competes with waits one round trip; leaving costs nothing more.
func TestEntryCosts2NMinus1AndOneRoundTrip(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		net := cluster(t, n, nil)
		for i, node := range []string{"n1", fmt.Sprintf("n%d", n)} {
			before := net.Messages()
			start := net.Now()
			id := acquire(net, "c1", node)
			if err := net.Settle(1000); err != nil {
				t.Fatal(err)
			}
			at, ok := granted(net, id)
			if !ok {
				t.Fatalf("n=%d: acquire %d at %s not granted", n, i, node)
			}
			wantWait := 2 * net.Latency
			if n == 1 {
				wantWait = 0
			}
			if at-start != wantWait {
				t.Errorf("n=%d: granted after %s, want one round trip (%s)", n, at-start, wantWait)
			}
			release(net, "c1", node)
			if err := net.Settle(1000); err != nil {
				t.Fatal(err)
			}
			if got, want := net.Messages()-before, 2*(n-1); got != want {
				t.Errorf("n=%d: entry %d cost %d messages, want 2(N−1) = %d", n, i, got, want)
			}
		}
		if got, want := net.Sent["request"], 2*(n-1); got != want {
			t.Errorf("n=%d: %d requests for two entries, want %d", n, got, want)
		}
	}
}

// A request made while another node is inside is deferred, and granted
// one message after that node leaves: the synchronisation delay.
func TestSynchronisationDelayIsOneMessage(t *testing.T) {
	net := cluster(t, 5, nil)
	a := acquire(net, "c1", "n1")
	net.Settle(1000)
	b := acquire(net, "c2", "n4")
	net.RunFor(10 * ms)
	if _, ok := granted(net, b); ok {
		t.Fatal("n4 entered while n1 was inside")
	}
	if _, ok := granted(net, a); !ok {
		t.Fatal("n1 not granted")
	}
	left := net.Now()
	release(net, "c1", "n1")
	net.Settle(1000)
	at, ok := granted(net, b)
	if !ok || at-left != net.Latency {
		t.Errorf("n4 entered %s after n1 left (granted %v), want one message delay (%s)", at-left, ok, net.Latency)
	}
}

// Requests with equal timestamps are ordered by election id: the smaller
// goes first, whatever the node names.
func TestTiesGoToTheSmallerID(t *testing.T) {
	for _, ids := range [][]int{{1, 2, 3}, {3, 2, 1}, {7, 9, 4}} {
		net := cluster(t, 3, ids)
		a := acquire(net, "c1", "n1")
		c := acquire(net, "c3", "n3")
		net.RunFor(10 * ms)
		want := "n1"
		if ids[2] < ids[0] {
			want = "n3"
		}
		if got := mutextest.Inside(net); !slices.Equal(got, []string{want}) {
			t.Errorf("ids %v: inside %v, want [%s]", ids, got, want)
		}
		first, second := a, c
		if want == "n3" {
			first, second = c, a
		}
		if _, ok := granted(net, first); !ok {
			t.Errorf("ids %v: %s not granted", ids, want)
		}
		if _, ok := granted(net, second); ok {
			t.Errorf("ids %v: both granted", ids)
		}
	}
}

// Random clients: never two inside, every acquire granted, and exactly
// 2(N−1) messages per entry.
func TestRandomLoad(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		for seed := uint64(1); seed <= 8; seed++ {
			net := cluster(t, n, nil)
			out := mutextest.Run(net, mutextest.Load{Clients: n + 3, Think: 4 * ms, Hold: 2 * ms, Until: 300 * ms, Seed: seed}, 5*time.Second)
			for _, v := range out.Violations {
				t.Errorf("n=%d seed %d: %s", n, seed, v)
			}
			if out.Acquires == 0 || out.Granted != out.Acquires || out.Entries != out.Granted {
				t.Errorf("n=%d seed %d: %d acquires, %d granted, %d entries", n, seed, out.Acquires, out.Granted, out.Entries)
			}
			if got, want := net.Messages(), 2*(n-1)*out.Entries; got != want {
				t.Errorf("n=%d seed %d: %d messages for %d entries, want 2(N−1) each = %d", n, seed, got, out.Entries, want)
			}
		}
	}
}

// A crashed node never replies: no request made after the crash is
// granted.
func TestCrashBlocksEveryEntry(t *testing.T) {
	net := cluster(t, 5, nil)
	net.Crash("n4")
	ids := []int{acquire(net, "c1", "n1"), acquire(net, "c2", "n2"), acquire(net, "c5", "n5")}
	net.RunFor(time.Second)
	for _, id := range ids {
		if r, ok := net.Answer(id); ok {
			t.Errorf("request %d answered after n4 crashed: %+v", id, r)
		}
	}
}

// A client that withdraws its acquire while the node waits for replies:
// the node gets the critical section for nobody, leaves at once, and
// answers the requests it deferred.
func TestWithdrawnAcquireLetsOthersIn(t *testing.T) {
	net := cluster(t, 4, nil)
	a := acquire(net, "c1", "n1")
	net.Settle(1000)
	if _, ok := granted(net, a); !ok {
		t.Fatal("n1 not granted")
	}
	b := acquire(net, "c2", "n2") // deferred by n1
	net.RunFor(5 * ms)
	c := acquire(net, "c3", "n3") // later than n2's: deferred by n2 too
	net.RunFor(5 * ms)
	w := release(net, "c2", "n2")
	if r, ok := net.Answer(w); !ok || r.OK || !r.Err.Definite {
		t.Fatalf("withdrawing release answered %+v, want a definite error", r)
	}
	release(net, "c1", "n1")
	net.Settle(1000)
	if r, ok := net.Answer(b); !ok || r.OK {
		t.Errorf("withdrawn acquire answered %+v, want an error", r)
	}
	if _, ok := granted(net, c); !ok {
		t.Error("n3 never entered after n2 withdrew")
	}
	if got := mutextest.Inside(net); !slices.Equal(got, []string{"n3"}) {
		t.Errorf("inside %v, want [n3]", got)
	}
}

func TestUnknownParamIsRejected(t *testing.T) {
	_, err := Spec.New(nodes.NewParams(map[string]any{"timeout": "1s"}))
	var pe *nodes.ParamError
	if !errors.As(err, &pe) || pe.Key != "timeout" {
		t.Errorf("got %v, want a ParamError for timeout", err)
	}
}
