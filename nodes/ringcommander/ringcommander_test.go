package ringcommander

import (
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/nodetest"
)

func newRing(t *testing.T, spec nodes.Spec, ids []int, params map[string]any) *nodetest.Network {
	t.Helper()
	net, err := nodetest.New(spec, len(ids), ids, params)
	if err != nil {
		t.Fatal(err)
	}
	net.Start()
	return net
}

func payloadReports(net *nodetest.Network) []string {
	var out []string
	for _, r := range net.Reports {
		if r.What == "payload" {
			out = append(out, r.Node+":"+r.Value)
		}
	}
	return out
}

func onlyReply(t *testing.T, net *nodetest.Network) nodetest.Reply {
	t.Helper()
	if len(net.Replies) != 1 {
		t.Fatalf("%d replies, want 1: %+v", len(net.Replies), net.Replies)
	}
	return net.Replies[0]
}

// Fault-free: whichever process commands, the election costs 2n messages,
// every process trusts the highest id, the client gets the winner, and the
// payload comes back intact.
func TestFaultFreeElectsTheMax(t *testing.T) {
	ids := []int{3, 9, 1, 7, 5}
	for i := range ids {
		net := newRing(t, Spec, ids, nil)
		commander := net.Nodes()[i]
		net.Request(commander, "elect")
		if err := net.Settle(1000); err != nil {
			t.Fatal(err)
		}
		for node, got := range net.Leaders() {
			if got != "n2" {
				t.Errorf("commander %s: %s trusts %q, want n2 (id 9)", commander, node, got)
			}
		}
		r := onlyReply(t, net)
		if !r.OK || r.Value != "n2" || r.Node != commander {
			t.Errorf("commander %s: reply %+v, want ok n2 from the commander", commander, r)
		}
		if got, want := net.Messages(), 2*len(ids); got != want {
			t.Errorf("commander %s: %d messages, want 2n = %d", commander, got, want)
		}
		if got := payloadReports(net); len(got) != 1 || got[0] != commander+":intact" {
			t.Errorf("commander %s: payload reports %v, want one intact", commander, got)
		}
	}
}

// A process crashed before the gathering message reaches it: the commander
// fails the operation when the gathering timeout passes, and nobody learns a
// leader.
func TestCrashAtGatheringFailsAfterTheTimeout(t *testing.T) {
	net := newRing(t, Spec, []int{1, 2, 3, 4, 5}, map[string]any{"gather_timeout": "200ms"})
	net.Request("n1", "elect")
	net.RunFor(1500 * time.Microsecond) // the message is at n2, on its way to n3
	net.Crash("n4")
	net.RunFor(time.Second)
	r := onlyReply(t, net)
	if r.OK || !r.Err.Definite || !strings.Contains(r.Err.Text, "gathering timed out") {
		t.Errorf("reply %+v, want a definite error naming the gathering", r)
	}
	if r.At != 200*time.Millisecond {
		t.Errorf("failed at %v, want at the gathering timeout (200ms)", r.At)
	}
	for node, got := range net.Leaders() {
		if got != "" {
			t.Errorf("%s trusts %q, want nobody", node, got)
		}
	}
}

// A process crashed after gathering, before the coordinator message reaches
// it: the processes before it learn the leader, those after do not, and the
// commander fails the operation when the confirmation timeout passes.
func TestCrashAtConfirmationFailsAfterTheTimeout(t *testing.T) {
	net := newRing(t, Spec, []int{1, 2, 3, 4, 5}, map[string]any{"confirm_timeout": "250ms"})
	net.Request("n1", "elect")
	net.RunFor(5500 * time.Microsecond) // gathered at 5ms; the coordinator is at n2
	net.Crash("n4")
	net.RunFor(time.Second)
	r := onlyReply(t, net)
	if r.OK || !r.Err.Definite || !strings.Contains(r.Err.Text, "confirmation timed out") {
		t.Errorf("reply %+v, want a definite error naming the confirmation", r)
	}
	if want := 5*time.Millisecond + 250*time.Millisecond; r.At != want {
		t.Errorf("failed at %v, want at the confirmation timeout (%v)", r.At, want)
	}
	want := map[string]string{"n1": "n5", "n2": "n5", "n3": "n5", "n5": ""}
	for node, got := range net.Leaders() {
		if got != want[node] {
			t.Errorf("%s trusts %q, want %q", node, got, want[node])
		}
	}
}

// joker wraps the machine of one node so that it alters the payload of the
// messages of one type it forwards, as a corrupting node would (the
// per-message checksum would be recomputed, so only the end-to-end check
// can tell).
func joker(node, mtype string) nodes.Spec {
	spec := Spec
	spec.New = func(p *nodes.Params) (nodes.Machine, error) {
		m, err := Spec.New(p)
		return &jokerMachine{Machine: m, node: node, mtype: mtype}, err
	}
	return spec
}

type jokerMachine struct {
	nodes.Machine
	node, mtype string
}

func (j *jokerMachine) Start(env nodes.Env) {
	if env.Self() == j.node {
		env = &jokerEnv{Env: env, mtype: j.mtype}
	}
	j.Machine.Start(env)
}

type jokerEnv struct {
	nodes.Env
	mtype string
}

func (e *jokerEnv) Send(to string, m nodes.Msg) {
	switch x := m.(type) {
	case Election:
		if e.mtype == x.Type() {
			x.Payload += "!"
			m = x
		}
	case Coordinator:
		if e.mtype == x.Type() {
			x.Payload = strings.ToUpper(x.Payload)
			m = x
		}
	}
	e.Env.Send(to, m)
}

// A payload altered at gathering is caught by the commander: it reports
// corrupt, announces nothing, and fails the operation definitely.
func TestCorruptPayloadAtGatheringIsCaught(t *testing.T) {
	net := newRing(t, joker("n3", "election"), []int{1, 2, 3, 4, 5}, nil)
	net.Request("n1", "elect")
	if err := net.Settle(1000); err != nil {
		t.Fatal(err)
	}
	if got := payloadReports(net); len(got) != 1 || got[0] != "n1:corrupt" {
		t.Errorf("payload reports %v, want n1:corrupt", got)
	}
	r := onlyReply(t, net)
	if r.OK || !r.Err.Definite || r.Err.Code != nodes.CodeAbort || !strings.Contains(r.Err.Text, "payload corrupt after gathering") {
		t.Errorf("reply %+v, want a definite error naming the corrupt payload", r)
	}
	if net.Sent["coordinator"] != 0 {
		t.Errorf("%d coordinator messages after a corrupt gathering, want none", net.Sent["coordinator"])
	}
}

// A payload altered at confirmation is caught too; the leader was announced
// already, so the error is indeterminate.
func TestCorruptPayloadAtConfirmationIsCaught(t *testing.T) {
	net := newRing(t, joker("n4", "coordinator"), []int{1, 2, 3, 4, 5}, nil)
	net.Request("n2", "elect")
	if err := net.Settle(1000); err != nil {
		t.Fatal(err)
	}
	if got := payloadReports(net); len(got) != 1 || got[0] != "n2:corrupt" {
		t.Errorf("payload reports %v, want n2:corrupt", got)
	}
	r := onlyReply(t, net)
	if r.OK || r.Err.Definite || r.Err.Code != nodes.CodeCrash || !strings.Contains(r.Err.Text, "payload corrupt after confirmation") {
		t.Errorf("reply %+v, want an indeterminate error naming the corrupt payload", r)
	}
}

// A commander busy with an election refuses a second one; a late message
// of an election that timed out does not end the next one.
func TestBusyCommanderAndStaleMessages(t *testing.T) {
	net := newRing(t, Spec, []int{1, 2, 3, 4, 5}, map[string]any{"gather_timeout": "400ms"})
	for _, a := range net.Nodes() {
		for _, b := range net.Nodes() {
			net.SetLatency(a, b, 100*time.Millisecond) // gathering takes 500ms
		}
	}
	net.Request("n1", "elect")
	net.Request("n1", "elect")
	net.RunFor(450 * time.Millisecond)
	if len(net.Replies) != 2 {
		t.Fatalf("replies %+v, want the busy refusal and the gathering timeout", net.Replies)
	}
	if r := net.Replies[0]; r.OK || r.Err.Code != nodes.CodeTemporarilyUnavailable || r.At != 0 {
		t.Errorf("first reply %+v, want an immediate refusal", r)
	}
	if r := net.Replies[1]; r.OK || !strings.Contains(r.Err.Text, "gathering timed out") {
		t.Errorf("second reply %+v, want the gathering timeout", r)
	}
	net.Heal() // fast links; round 1's message still arrives at 500ms
	net.Request("n1", "elect")
	net.RunFor(time.Second)
	if len(net.Replies) != 3 || !net.Replies[2].OK || net.Replies[2].Value != "n5" {
		t.Fatalf("replies %+v, want the third to be ok n5", net.Replies)
	}
	if got, want := net.Sent["coordinator"], 5; got != want {
		t.Errorf("%d coordinator messages, want %d: the stale election was acted on", got, want)
	}
}

func TestParams(t *testing.T) {
	for _, tt := range []struct {
		params map[string]any
		key    string
	}{
		{map[string]any{"gather": "1ms"}, "gather"},
		{map[string]any{"gather_timeout": "0s"}, "gather_timeout"},
		{map[string]any{"confirm_timeout": true}, "confirm_timeout"},
	} {
		_, err := Spec.New(nodes.NewParams(tt.params))
		if err == nil || !strings.HasPrefix(err.Error(), "params."+tt.key+":") {
			t.Errorf("params %v: error %v, want one naming params.%s", tt.params, err, tt.key)
		}
	}
}
