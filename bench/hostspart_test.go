package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/servers/hostnet"
)

// The hosts part runs one round on real namespaces (as root), measures
// every figure on both paths and leaves no namespace; elsewhere it says
// why it was skipped.
func TestHostsPartRuns(t *testing.T) {
	cfg := Config{Coup: []string{"unused"}, Parts: []string{PartHosts}, Rounds: 1}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	res.Print(&b)
	if why := hostnet.Available(); why != nil {
		if res.Hosts == nil || res.Hosts.Skipped == "" || !strings.Contains(b.String(), "skipped: "+why.Error()) {
			t.Errorf("without namespaces the part must say why it was skipped:\n%s", b.String())
		}
		return
	}
	for p := range hostsPaths {
		if len(res.Hosts.Runs[p]) != 1 {
			t.Fatalf("%s: %d rounds, want 1", hostsPathNames[p], len(res.Hosts.Runs[p]))
		}
		f := res.Hosts.Runs[p][0]
		if f.Throughput <= 0 || f.P50 <= 0 || f.P99 < f.P50 || f.P50 > time.Second {
			t.Errorf("%s: figures %+v", hostsPathNames[p], f)
		}
	}
	if h := res.Hosts; h.Network <= 0 || h.Host <= 0 || h.Process <= 0 || h.Outside <= 0 {
		t.Errorf("start figures %+v", h)
	}
	out := b.String()
	for _, want := range []string{"veth pair", "coup's network", "coup's network / veth pair: TCP throughput", "UDP round trip p50", "a network of 3 hosts made in"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if left := hostnet.Ours(); len(left) > 0 {
		t.Errorf("namespaces outlived the part: %v", left)
	}
}
