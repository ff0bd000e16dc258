package tokenring

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/mutex"
	"github.com/coupharness/coup/nodes/mutex/mutextest"
	"github.com/coupharness/coup/nodes/nodetest"
)

const ms = time.Millisecond

func ring(t *testing.T, n int, params map[string]any) *nodetest.Network {
	t.Helper()
	net, err := nodetest.New(Spec, n, nil, params)
	if err != nil {
		t.Fatal(err)
	}
	net.Start()
	return net
}

// acquire sends an acquire from client to node on the client's own behalf.
func acquire(net *nodetest.Network, client, node string) int {
	return net.Do(client, node, mutex.OpAcquire, client)
}

func release(net *nodetest.Network, client, node string) int {
	return net.Do(client, node, mutex.OpRelease, client)
}

func answered(t *testing.T, net *nodetest.Network, id int) nodetest.Reply {
	t.Helper()
	r, ok := net.Answer(id)
	if !ok {
		t.Fatalf("request %d has no answer (at %s)", id, net.Now())
	}
	return r
}

// The token waits start_hold at n1, then takes two hops to n3, whose
// client enters as it arrives; on release it moves on to n4.
func TestClientWaitsForTheToken(t *testing.T) {
	net := ring(t, 5, map[string]any{"start_hold": "10ms"})
	id := acquire(net, "c1", "n3")
	net.Run(11 * ms)
	if _, ok := net.Answer(id); ok {
		t.Fatal("granted before the token reached n3")
	}
	net.Run(12 * ms)
	if r := answered(t, net, id); !r.OK || r.At != 12*ms || r.Node != "n3" {
		t.Fatalf("answer %+v, want ok from n3 at 12ms", r)
	}
	if got := mutextest.Inside(net); !slices.Equal(got, []string{"n3"}) {
		t.Errorf("inside %v, want [n3]", got)
	}
	if got := net.Sent["token"]; got != 2 {
		t.Errorf("%d token messages before the entry, want 2 (n1→n2→n3)", got)
	}
	net.RunFor(5 * ms) // the token stays at n3 while c1 is inside
	if got := net.Sent["token"]; got != 2 {
		t.Errorf("the token moved while n3 was inside: %d messages", got)
	}
	rel := release(net, "c1", "n3")
	if r := answered(t, net, rel); !r.OK {
		t.Fatalf("release: %+v", r)
	}
	if len(mutextest.Inside(net)) != 0 {
		t.Errorf("still inside after the release: %v", mutextest.Inside(net))
	}
	if got := net.Sent["token"]; got != 3 {
		t.Errorf("%d token messages after the release, want 3 (passed to n4)", got)
	}
}

// An idle ring circulates the token: one message per latency once the
// start hold is over; with idle_hold each node keeps it that long first.
func TestIdleRingCirculates(t *testing.T) {
	tests := []struct {
		idle string
		want int
	}{
		{"0s", 91},  // sent at 10ms, then on each arrival at 11..100ms
		{"4ms", 19}, // sent at 10ms, then every 1+4ms: 15, 20, … 100
	}
	for _, tt := range tests {
		net := ring(t, 5, map[string]any{"start_hold": "10ms", "idle_hold": tt.idle})
		net.Run(100 * ms)
		if got := net.Sent["token"]; got != tt.want {
			t.Errorf("idle_hold %s: %d token messages by 100ms, want %d", tt.idle, got, tt.want)
		}
	}
}

// A node's own clients use the token during the start hold, without
// messages; an entry at the successor of the last holder costs one.
func TestMessagesPerEntry(t *testing.T) {
	net := ring(t, 5, map[string]any{"start_hold": "1h", "idle_hold": "1h"})
	a := acquire(net, "c1", "n1")
	b := acquire(net, "c2", "n2")
	net.RunFor(5 * ms)
	if r := answered(t, net, a); !r.OK || net.Messages() != 0 {
		t.Fatalf("n1 entered with %d messages (%+v), want 0", net.Messages(), r)
	}
	release(net, "c1", "n1")
	net.RunFor(5 * ms)
	if r := answered(t, net, b); !r.OK || net.Messages() != 1 {
		t.Fatalf("n2 entered with %d messages in all (%+v), want 1", net.Messages(), r)
	}
}

// Two clients of one node get one entry each, and the token goes round
// the whole ring between them.
func TestOneEntryPerAcquire(t *testing.T) {
	net := ring(t, 4, map[string]any{"start_hold": "1ms"})
	a := acquire(net, "c1", "n2")
	b := acquire(net, "c2", "n2")
	net.Run(3 * ms)
	if !answered(t, net, a).OK {
		t.Fatal("c1 not granted")
	}
	if _, ok := net.Answer(b); ok {
		t.Fatal("c2 granted while c1 is inside")
	}
	before := net.Sent["token"]
	release(net, "c1", "n2")
	net.RunFor(10 * ms)
	if !answered(t, net, b).OK {
		t.Fatal("c2 not granted after c1 left")
	}
	if got := net.Sent["token"] - before; got != 4 {
		t.Errorf("%d token messages between the two entries, want 4 (once round)", got)
	}
}

// A release before the token comes withdraws the acquire; the token then
// passes through without an entry.
func TestWithdrawnAcquire(t *testing.T) {
	net := ring(t, 3, map[string]any{"start_hold": "10ms"})
	a := acquire(net, "c1", "n3")
	r := release(net, "c1", "n3")
	net.Run(30 * ms)
	if got := answered(t, net, a); got.OK || !got.Err.Definite {
		t.Errorf("withdrawn acquire answered %+v, want a definite error", got)
	}
	if got := answered(t, net, r); got.OK || !got.Err.Definite {
		t.Errorf("withdrawing release answered %+v, want a definite error", got)
	}
	if n := len(net.Reports); n != 0 {
		t.Errorf("%d reports, want none: nobody entered", n)
	}
}

// Random clients on rings of several sizes: never two inside, every
// acquire granted, every grant an entry.
func TestRandomLoadKeepsExclusion(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		for seed := uint64(1); seed <= 5; seed++ {
			for _, idle := range []string{"0s", "3ms"} {
				net := ring(t, n, map[string]any{"start_hold": "2ms", "idle_hold": idle})
				out := mutextest.Run(net, mutextest.Load{Clients: n + 2, Think: 5 * ms, Hold: 2 * ms, Until: 300 * ms, Seed: seed}, 5*time.Second)
				for _, v := range out.Violations {
					t.Errorf("n=%d seed %d idle %s: %s", n, seed, idle, v)
				}
				if out.Acquires == 0 || out.Granted != out.Acquires || out.Entries != out.Granted {
					t.Errorf("n=%d seed %d idle %s: %d acquires, %d granted, %d entries", n, seed, idle, out.Acquires, out.Granted, out.Entries)
				}
			}
		}
	}
}

// The holder crashes inside: the token dies with it and nobody enters
// again. A crashed node elsewhere swallows the token when it comes, so
// only the nodes before it still enter.
func TestCrashLosesTheToken(t *testing.T) {
	tests := []struct {
		victim        string
		served, stuck []string // nodes whose clients enter, and never enter
	}{
		{"n2", nil, []string{"n3", "n5", "n1"}},
		{"n4", []string{"n3"}, []string{"n5", "n1"}},
	}
	for _, tt := range tests {
		net := ring(t, 5, map[string]any{"start_hold": "1ms"})
		a := acquire(net, "c1", "n2")
		net.Run(5 * ms)
		if !answered(t, net, a).OK {
			t.Fatal("c1 not granted")
		}
		net.Crash(tt.victim)
		if tt.victim != "n2" {
			release(net, "c1", "n2")
		}
		ids := map[string]int{}
		for _, n := range append(append([]string(nil), tt.served...), tt.stuck...) {
			ids[n] = acquire(net, "c-"+n, n)
		}
		for _, n := range tt.served {
			net.RunFor(5 * ms)
			if r, ok := net.Answer(ids[n]); !ok || !r.OK {
				t.Errorf("%s crashed: %s's client was not served before the token reached the crash", tt.victim, n)
			}
			release(net, "c-"+n, n)
		}
		net.RunFor(time.Second)
		for _, n := range tt.stuck {
			if r, ok := net.Answer(ids[n]); ok {
				t.Errorf("%s crashed: %s's client was still answered: %+v", tt.victim, n, r)
			}
		}
	}
}

func TestBadParams(t *testing.T) {
	for key, v := range map[string]any{"start_hold": "soon", "idle_hold": 3, "speed": "1ms"} {
		_, err := Spec.New(nodes.NewParams(map[string]any{key: v}))
		var pe *nodes.ParamError
		if !errors.As(err, &pe) || pe.Key != key {
			t.Errorf("params.%s = %v: got %v, want a ParamError naming it", key, v, err)
		}
	}
}
