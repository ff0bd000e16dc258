package centralised

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

// quiet makes the nodes probe the coordinator once an hour, so that only
// the lock's messages (and the elections at the start) are counted.
var quiet = map[string]any{"probe_every": "1h"}

// cluster starts n nodes and lets bully elect n<n>, the highest id.
func cluster(t *testing.T, n int, params map[string]any) *nodetest.Network {
	t.Helper()
	net, err := nodetest.New(Spec, n, nil, params)
	if err != nil {
		t.Fatal(err)
	}
	net.Start()
	net.RunFor(100 * ms)
	top := fmt.Sprintf("n%d", n)
	for node, l := range net.Leaders() {
		if l != top {
			t.Fatalf("%s trusts %q after the start, want %s", node, l, top)
		}
	}
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

// lockMessages counts the lock protocol's messages, bully's left out.
func lockMessages(net *nodetest.Network) int {
	return net.Sent["request"] + net.Sent["grant"] + net.Sent["release"] + net.Sent["held"]
}

// leaderAt is when node first reported trusting leader after from.
func leaderAt(net *nodetest.Network, node, leader string, from time.Duration) (time.Duration, bool) {
	for _, r := range net.Reports {
		if r.At >= from && r.Node == node && r.What == "leader" && r.Value == leader {
			return r.At, true
		}
	}
	return 0, false
}

// An entry and exit at a node other than the coordinator cost request,
// grant and release, and a client that nobody competes with waits one
// round trip; at the coordinator they cost nothing and it waits not at
// all.
func TestEntryCostsThreeMessagesAndOneRoundTrip(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		net := cluster(t, n, quiet)
		for _, node := range []string{"n1", fmt.Sprintf("n%d", n)} {
			coordinator := node == fmt.Sprintf("n%d", n)
			before := lockMessages(net)
			start := net.Now()
			id := acquire(net, "c1", node)
			net.RunFor(20 * ms)
			at, ok := granted(net, id)
			if !ok {
				t.Fatalf("n=%d: acquire at %s not granted", n, node)
			}
			wantWait, wantMsgs := 2*net.Latency, 3
			if coordinator {
				wantWait, wantMsgs = 0, 0
			}
			if at-start != wantWait {
				t.Errorf("n=%d: %s granted after %s, want %s", n, node, at-start, wantWait)
			}
			release(net, "c1", node)
			net.RunFor(20 * ms)
			if got := lockMessages(net) - before; got != wantMsgs {
				t.Errorf("n=%d: an entry at %s cost %d messages, want %d", n, node, got, wantMsgs)
			}
		}
	}
}

// A request made while another node is inside waits in the queue and is
// granted two messages after that node leaves: release, then grant.
func TestSynchronisationDelayIsTwoMessages(t *testing.T) {
	net := cluster(t, 5, quiet)
	a := acquire(net, "c1", "n1")
	net.RunFor(10 * ms)
	b := acquire(net, "c2", "n2")
	net.RunFor(10 * ms)
	if _, ok := granted(net, a); !ok {
		t.Fatal("n1 not granted")
	}
	if _, ok := granted(net, b); ok {
		t.Fatal("n2 entered while n1 was inside")
	}
	left := net.Now()
	release(net, "c1", "n1")
	net.RunFor(10 * ms)
	if at, ok := granted(net, b); !ok || at-left != 2*net.Latency {
		t.Errorf("n2 entered %s after n1 left (granted %v), want two message delays (%s)", at-left, ok, 2*net.Latency)
	}
}

// The coordinator grants in the order the requests reach it, which need
// not be the order they were sent in.
func TestGrantsFollowArrivalOrder(t *testing.T) {
	net := cluster(t, 5, quiet)
	hold := acquire(net, "c5", "n5")
	net.SetLatency("n2", "n5", 3*ms)
	net.SetLatency("n3", "n5", 1*ms)
	net.SetLatency("n4", "n5", 2*ms)
	ids := map[string]int{}
	for _, node := range []string{"n2", "n3", "n4"} {
		ids[node] = acquire(net, "c-"+node, node)
	}
	net.RunFor(10 * ms)
	if _, ok := granted(net, hold); !ok {
		t.Fatal("n5's own client not granted")
	}
	release(net, "c5", "n5")
	var order []string
	for range 3 {
		net.RunFor(10 * ms)
		inside := mutextest.Inside(net)
		if len(inside) != 1 {
			t.Fatalf("inside %v, want one node", inside)
		}
		order = append(order, inside[0])
		release(net, "c-"+inside[0], inside[0])
	}
	if want := []string{"n3", "n4", "n2"}; !slices.Equal(order, want) {
		t.Errorf("granted in order %v, want the arrival order %v", order, want)
	}
}

// Random clients, with the coordinator probed as by default: never two
// inside, every acquire granted, and (without probes) exactly three lock
// messages per entry at a node other than the coordinator.
func TestRandomLoad(t *testing.T) {
	for _, params := range []map[string]any{nil, quiet} {
		for _, n := range []int{1, 2, 3, 5, 8} {
			for seed := uint64(1); seed <= 8; seed++ {
				net := cluster(t, n, params)
				before := lockMessages(net)
				out := mutextest.Run(net, mutextest.Load{Clients: n + 3, Think: 4 * ms, Hold: 2 * ms, Until: net.Now() + 300*ms, Seed: seed}, 5*time.Second)
				for _, v := range out.Violations {
					t.Errorf("n=%d seed %d: %s", n, seed, v)
				}
				if out.Acquires == 0 || out.Granted != out.Acquires || out.Entries != out.Granted {
					t.Errorf("n=%d seed %d: %d acquires, %d granted, %d entries", n, seed, out.Acquires, out.Granted, out.Entries)
				}
				remote := 0
				for _, r := range net.Reports {
					if r.Report == mutex.ReportEnter && r.Node != fmt.Sprintf("n%d", n) {
						remote++
					}
				}
				if got, want := lockMessages(net)-before, 3*remote; got != want {
					t.Errorf("n=%d seed %d: %d lock messages for %d entries away from the coordinator, want 3 each = %d", n, seed, got, remote, want)
				}
			}
		}
	}
}

// The coordinator crashes: bully elects the next highest id, the request
// that was in flight to the dead coordinator is re-sent to the new one,
// and the new one grants it, and grants again after that.
func TestCoordinatorCrashLeadsToANewCoordinatorThatGrants(t *testing.T) {
	net := cluster(t, 5, nil)
	crashAt := net.Now()
	net.Crash("n5")
	a := acquire(net, "c1", "n1") // sent to n5, which is down
	net.RunFor(time.Second)
	for node, l := range net.Leaders() {
		if l != "n4" {
			t.Errorf("%s trusts %q, want n4", node, l)
		}
	}
	took, _ := leaderAt(net, "n4", "n4", crashAt)
	at, ok := granted(net, a)
	if !ok {
		t.Fatal("n1's acquire, made as the coordinator crashed, was never granted")
	}
	p, _ := ParseParams(nodes.NewParams(nil))
	if at < took+p.Collect {
		t.Errorf("n4 granted at %s, before its collect ended (coordinator at %s, collect %s)", at, took, p.Collect)
	}
	release(net, "c1", "n1")
	b := acquire(net, "c2", "n2")
	net.RunFor(20 * ms)
	if _, ok := granted(net, b); !ok {
		t.Error("the new coordinator did not grant a second time")
	}
}

// A node inside when the coordinator crashes tells the new coordinator,
// which grants nobody else until that node leaves.
func TestHolderIsKnownToTheNewCoordinator(t *testing.T) {
	net := cluster(t, 5, nil)
	a := acquire(net, "c1", "n1")
	net.RunFor(10 * ms)
	if _, ok := granted(net, a); !ok {
		t.Fatal("n1 not granted")
	}
	net.Crash("n5")
	b := acquire(net, "c2", "n2")
	c := acquire(net, "c4", "n4") // at the new coordinator itself
	net.RunFor(time.Second)
	if net.Leader("n1") != "n4" {
		t.Fatalf("n1 trusts %q, want n4", net.Leader("n1"))
	}
	if net.Sent["held"] == 0 {
		t.Error("n1 never told n4 that it is inside")
	}
	if inside := mutextest.Inside(net); !slices.Equal(inside, []string{"n1"}) {
		t.Fatalf("inside %v, want only n1", inside)
	}
	release(net, "c1", "n1")
	net.RunFor(20 * ms)
	_, okB := granted(net, b)
	_, okC := granted(net, c)
	if !okB && !okC {
		t.Error("nobody was granted after n1 left")
	}
	out := mutextest.Inside(net)
	if len(out) != 1 {
		t.Errorf("inside %v after n1 left, want one node", out)
	}
}

// The coordinator is replaced under the same id (crashed and restarted at
// once) while a client at n1 holds the lock. The fresh process starts
// with an empty lock state, the other nodes trust it already and tell it
// nothing, so it grants the lock to n2 while n1 is inside: the lock is
// granted twice. The request n3 had queued at the old process is lost
// until its client withdraws it and asks again.
func TestReplacedCoordinatorGrantsTheLockTwice(t *testing.T) {
	net := cluster(t, 5, nil)
	a := acquire(net, "c1", "n1")
	net.RunFor(10 * ms)
	if _, ok := granted(net, a); !ok {
		t.Fatal("n1 not granted")
	}
	lost := acquire(net, "c3", "n3")
	net.RunFor(10 * ms)
	net.Crash("n5")
	if err := net.Restart("n5"); err != nil {
		t.Fatal(err)
	}
	b := acquire(net, "c2", "n2")
	net.RunFor(500 * ms)
	if _, ok := granted(net, b); !ok {
		t.Fatal("the replaced coordinator never granted n2")
	}
	if inside := mutextest.Inside(net); !slices.Equal(inside, []string{"n1", "n2"}) {
		t.Errorf("inside %v, want n1 and n2 both: the lock granted twice", inside)
	}
	if net.Sent["held"] != 0 {
		t.Errorf("%d held messages: a node told the replaced coordinator it holds the lock", net.Sent["held"])
	}
	for node, l := range net.Leaders() {
		if l != "n5" {
			t.Errorf("%s trusts %q, want n5 throughout", node, l)
		}
	}
	release(net, "c2", "n2")
	net.RunFor(500 * ms)
	if _, ok := net.Answer(lost); ok {
		t.Fatal("n3's request, queued at the old process, was answered")
	}
	release(net, "c3", "n3") // the client gives up: the acquire is withdrawn
	again := acquire(net, "c3", "n3")
	net.RunFor(20 * ms)
	if _, ok := granted(net, again); !ok {
		t.Error("n3 was not granted when it asked again")
	}
}

// A node that loses trust in its coordinator and elects it again (the
// same id) tells it nothing: even when the coordinator was replaced
// meanwhile, the node's hold stays unknown to it.
func TestTheSameIDIsTheSameCoordinator(t *testing.T) {
	net := cluster(t, 5, nil)
	a := acquire(net, "c1", "n1")
	net.RunFor(10 * ms)
	if _, ok := granted(net, a); !ok {
		t.Fatal("n1 not granted")
	}
	net.Crash("n5")
	if err := net.Restart("n5"); err != nil {
		t.Fatal(err)
	}
	from := net.Now()
	net.Block("n1", "n5") // n1's probes go unanswered
	net.RunFor(200 * ms)
	net.Heal()
	net.RunFor(500 * ms)
	if _, lost := leaderAt(net, "n1", "", from); !lost {
		t.Fatal("n1 never lost trust in n5")
	}
	if net.Leader("n1") != "n5" {
		t.Fatalf("n1 trusts %q, want n5 again", net.Leader("n1"))
	}
	if net.Sent["held"] != 0 {
		t.Errorf("n1 told n5 of its hold (%d held messages); the same id is the same coordinator", net.Sent["held"])
	}
	b := acquire(net, "c2", "n2")
	net.RunFor(20 * ms)
	if _, ok := granted(net, b); !ok {
		t.Error("n5 did not grant n2 while n1, unknown to it, is inside")
	}
}

// A client that gives up withdraws its acquire: the node takes its request
// out of the coordinator's queue, and the next node goes first.
func TestWithdrawnRequestLeavesTheQueue(t *testing.T) {
	net := cluster(t, 5, quiet)
	acquire(net, "c1", "n1")
	net.RunFor(10 * ms)
	b := acquire(net, "c2", "n2")
	net.RunFor(10 * ms)
	c := acquire(net, "c3", "n3")
	net.RunFor(10 * ms)
	w := release(net, "c2", "n2")
	if r, ok := net.Answer(w); !ok || r.OK || !r.Err.Definite {
		t.Fatalf("withdrawing release answered %+v, want a definite error", r)
	}
	grants := net.Sent["grant"]
	release(net, "c1", "n1")
	net.RunFor(10 * ms)
	if r, ok := net.Answer(b); !ok || r.OK {
		t.Errorf("withdrawn acquire answered %+v, want an error", r)
	}
	if _, ok := granted(net, c); !ok {
		t.Error("n3 not granted after n1 left")
	}
	if got := net.Sent["grant"] - grants; got != 1 {
		t.Errorf("%d grants after n1 left, want 1 (none for the withdrawn request)", got)
	}
}

// A grant for a request that does not wait (late, or duplicated by the
// network) is given back to its sender, and lets nobody in.
func TestStaleGrantIsGivenBack(t *testing.T) {
	net := cluster(t, 3, quiet)
	releases := net.Sent["release"]
	net.Deliver("n3", "n1", Grant{Seq: 7})
	net.RunFor(10 * ms)
	if got := net.Sent["release"] - releases; got != 1 {
		t.Errorf("%d releases after a stale grant, want 1", got)
	}
	if inside := mutextest.Inside(net); len(inside) != 0 {
		t.Errorf("inside %v after a stale grant, want nobody", inside)
	}
	// The coordinator is unharmed: it still grants.
	id := acquire(net, "c2", "n2")
	net.RunFor(10 * ms)
	if _, ok := granted(net, id); !ok {
		t.Error("n2 not granted after the stale grant")
	}
}

// collect defaults to bully's T; with "0s" a new coordinator grants as
// soon as it is elected.
func TestCollect(t *testing.T) {
	p, err := ParseParams(nodes.NewParams(map[string]any{"t_trans": "20ms", "t_process": "10ms"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Collect, 50*ms; got != want {
		t.Errorf("default collect %s, want T = %s", got, want)
	}
	for _, tt := range []struct {
		collect string
		want    time.Duration
	}{{"0s", 0}, {"40ms", 40 * ms}} {
		net := cluster(t, 4, map[string]any{"collect": tt.collect})
		net.Crash("n4")
		id := acquire(net, "c3", "n3") // at the next coordinator
		net.RunFor(time.Second)
		took, ok := leaderAt(net, "n3", "n3", 0)
		at, granted := granted(net, id)
		if !ok || !granted {
			t.Fatalf("collect %s: n3 coordinator %v, granted %v", tt.collect, ok, granted)
		}
		if at-took != tt.want {
			t.Errorf("collect %s: granted %s after n3 took over, want %s", tt.collect, at-took, tt.want)
		}
	}
}

func TestParams(t *testing.T) {
	for _, tt := range []struct {
		params map[string]any
		key    string
	}{
		{map[string]any{"colect": "1ms"}, "colect"},
		{map[string]any{"collect": "soon"}, "collect"},
		{map[string]any{"t_trans": "0s"}, "t_trans"},
	} {
		_, err := Spec.New(nodes.NewParams(tt.params))
		var pe *nodes.ParamError
		if !errors.As(err, &pe) || pe.Key != tt.key {
			t.Errorf("params %v: error %v, want a ParamError for %s", tt.params, err, tt.key)
		}
	}
}
