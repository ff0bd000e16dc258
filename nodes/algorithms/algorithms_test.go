package algorithms

import (
	"errors"
	"testing"
	"time"

	"coup/nodes"
	"coup/nodes/nodetest"
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
		if spec.Summary == "" || spec.Codec == nil || spec.New == nil {
			t.Errorf("%s: summary, codec and New are required", name)
		}
		if !topologies[spec.Topology] {
			t.Errorf("%s: topology %q, want ring, bidirectional ring or complete", name, spec.Topology)
		}
		if spec.Elects != "max" && spec.Elects != "min" {
			t.Errorf("%s: elects %q, want max or min", name, spec.Elects)
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
