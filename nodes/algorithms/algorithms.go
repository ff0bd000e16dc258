// Package algorithms is the catalogue of coup's built-in algorithms: the
// names a scenario's `algorithm` key and `coup node --algo` accept.
package algorithms

import (
	"sort"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/bully"
	"github.com/coupharness/coup/nodes/centralised"
	"github.com/coupharness/coup/nodes/changroberts"
	"github.com/coupharness/coup/nodes/flood"
	"github.com/coupharness/coup/nodes/gossip"
	"github.com/coupharness/coup/nodes/hirschbergsinclair"
	"github.com/coupharness/coup/nodes/lelann"
	"github.com/coupharness/coup/nodes/omegaetc"
	"github.com/coupharness/coup/nodes/omegaminimal"
	"github.com/coupharness/coup/nodes/ricartagrawala"
	"github.com/coupharness/coup/nodes/ringcommander"
	"github.com/coupharness/coup/nodes/tokenring"
)

// catalogue lists every built-in algorithm. A new algorithm is added here.
var catalogue = index(
	bully.Spec,
	centralised.Spec,
	changroberts.Spec,
	flood.Spec, // the harness's own test traffic
	gossip.Spec,
	ricartagrawala.Spec,
	tokenring.Spec,
	hirschbergsinclair.Spec,
	lelann.Spec,
	omegaetc.Spec,
	omegaminimal.Spec,
	ringcommander.Spec,
)

func index(specs ...nodes.Spec) map[string]nodes.Spec {
	m := make(map[string]nodes.Spec, len(specs))
	for _, s := range specs {
		m[s.Name] = s
	}
	return m
}

// Lookup returns the algorithm of that name.
func Lookup(name string) (nodes.Spec, bool) {
	s, ok := catalogue[name]
	return s, ok
}

// Names lists the algorithms, sorted.
func Names() []string {
	out := make([]string, 0, len(catalogue))
	for n := range catalogue {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
