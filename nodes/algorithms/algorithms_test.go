package algorithms

import (
	"errors"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/nodetest"
)

// Every algorithm of the catalogue is complete, builds with its defaults,
// rejects an unknown parameter by name, and starts in a small network.
func TestCatalogue(t *testing.T) {
	topologies := map[string]bool{"ring": true, "bidirectional ring": true, "complete": true}
	for _, name := range Names() {
		spec, ok := Lookup(name)
		if !ok || spec.Name != name {
			t.Fatalf("Lookup(%q) = %q, %v", name, spec.Name, ok)
		}
		if spec.Summary == "" || (spec.Codec == nil) != (spec.Program != nil) || spec.New == nil {
			t.Errorf("%s: summary, New, and a codec or else a program are required", name)
		}
		if !topologies[spec.Topology] {
			t.Errorf("%s: topology %q, want ring, bidirectional ring or complete", name, spec.Topology)
		}
		if _, err := spec.New(nodes.NewParams(nil)); err != nil {
			t.Errorf("%s: defaults rejected: %v", name, err)
		}
		var pe *nodes.ParamError
		if _, err := spec.New(nodes.NewParams(map[string]any{"no_such_param": 1})); !errors.As(err, &pe) || pe.Key != "no_such_param" {
			t.Errorf("%s: an unknown parameter gave %v, want a ParamError naming it", name, err)
		}
		if spec.Bound != nil && spec.Bound(5, 5) < 5 {
			t.Errorf("%s: Bound(5, 5) = %d, less than one message per node", name, spec.Bound(5, 5))
		}
		if spec.IsMutex() || name == "flood" || spec.Program != nil {
			continue // no leader to elect, or no machine: tested in their own packages
		}
		if spec.Elects != "max" && spec.Elects != "min" {
			t.Errorf("%s: elects %q, want max or min", name, spec.Elects)
		}
		net, err := nodetest.New(spec, 5, []int{3, 9, 1, 7, 5}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		net.Start()
		net.Request("n1", "elect")
		net.RunFor(2 * time.Second)
		want := "n2" // id 9
		if spec.Elects == "min" {
			want = "n3" // id 1
		}
		for node, got := range net.Leaders() {
			if got != want {
				t.Errorf("%s: %s trusts %q after an election, want %q", name, node, got, want)
			}
		}
	}
}

// FuzzReceive decodes arbitrary bodies with each algorithm's codec and
// hands whatever decodes to a started machine, as a node would after a
// field mutation that kept the JSON valid: no machine may panic.
func FuzzReceive(f *testing.F) {
	for _, seed := range []string{
		`{"type":"probe","id":3,"node":"n1","phase":-1,"hops":1,"dir":"left"}`,
		`{"type":"probe","id":3,"node":"n1","phase":99,"hops":1,"dir":"up"}`,
		`{"type":"reply","id":3,"node":"n2","phase":0,"dir":"right"}`,
		`{"type":"election","commander":"n1","round":1,"members":[],"payload":"x"}`,
		`{"type":"coordinator","commander":"n1","round":1,"leader":"n9","members":null}`,
		`{"type":"heartbeat","origin":"n2","seq":1,"suspect":[1,2]}`,
		`{"type":"heartbeat","origin":"zz","seq":-5,"suspect":[1,2,3]}`,
		`{"type":"token","id":-1,"node":""}`,
		`{"type":"alive","id":0}`,
		`{"type":"answer","id":9}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, name := range Names() {
			spec, _ := Lookup(name)
			if spec.Codec == nil {
				continue // a node program, not a machine
			}
			msg, err := spec.Codec.Decode([]byte(body))
			if err != nil {
				continue
			}
			net, err := nodetest.New(spec, 3, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			net.Start()
			net.Request("n1", "elect")
			net.Deliver("n2", "n1", msg)
			net.Deliver("n1", "n2", msg)
			net.RunFor(time.Second)
		}
	})
}
