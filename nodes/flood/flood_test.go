package flood

import (
	"testing"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/nodetest"
)

func TestEveryNodePingsEveryOtherEachRound(t *testing.T) {
	net, err := nodetest.New(Spec, 4, nil, map[string]any{"interval": "10ms", "rounds": int64(3)})
	if err != nil {
		t.Fatal(err)
	}
	net.Start()
	net.RunFor(time.Second)
	if got, want := net.Sent["ping"], 4*3*3; got != want {
		t.Errorf("%d pings, want %d (4 nodes, 3 peers, 3 rounds)", got, want)
	}
	rounds := map[string]string{}
	for _, r := range net.Reports {
		if r.What == "metric" && r.Name == MetricRound {
			rounds[r.Node] = r.Value
		}
		if r.Name == MetricMismatch {
			t.Errorf("%s reported a mismatch on an honest network", r.Node)
		}
	}
	for _, n := range net.Nodes() {
		if rounds[n] != "3" {
			t.Errorf("%s reached round %q, want 3", n, rounds[n])
		}
	}
}

func TestAlteredPayloadIsReported(t *testing.T) {
	m := &Machine{interval: time.Millisecond}
	env := &recorder{}
	m.Start(env)
	m.Receive("n2", Ping{Round: 4, Payload: Payload("n2", 4)})
	m.Receive("n2", Ping{Round: 4, Payload: "n2/5"})
	m.Receive("n3", Ping{Round: 1, Payload: "n2/1"})
	if len(env.reports) != 2 || env.reports[1].Value != "2" || env.reports[1].Name != MetricMismatch {
		t.Errorf("reports %+v, want two mismatches counted", env.reports)
	}
}

func TestParams(t *testing.T) {
	for _, p := range []map[string]any{{"interval": "0s"}, {"rounds": int64(-1)}, {"speed": int64(1)}} {
		if _, err := Spec.New(nodes.NewParams(p)); err == nil {
			t.Errorf("%v accepted", p)
		}
	}
}

type recorder struct {
	nodes.Env
	reports []nodes.Report
}

func (r *recorder) Self() string                   { return "n1" }
func (r *recorder) SetTimer(string, time.Duration) {}
func (r *recorder) Report(rep nodes.Report)        { r.reports = append(r.reports, rep) }
