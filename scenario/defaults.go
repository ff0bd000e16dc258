package scenario

import (
	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/algorithms"
)

// DefaultChecks are the checks that judge a history whose meta names
// none (a run of the library's, or of an older coup): those of the kind
// of problem its built-in algorithm solves (nodes.Spec.Kind), else of its
// workload's (mutex, lin-kv, echo, set), else the election's. A loaded
// scenario names its checks already (checks.run, or the defaults of its
// Kind).
func DefaultChecks(algorithm, workload string) []string {
	kind := ""
	switch spec, ok := algorithms.Lookup(algorithm); {
	case ok:
		kind = spec.Kind
	case workload == WorkloadMutex:
		kind = nodes.KindMutex
	case workload == WorkloadLinKV:
		kind = nodes.KindLinKV
	case workload == WorkloadEcho:
		kind = nodes.KindEcho
	case workload == WorkloadSet:
		kind = nodes.KindSet
	}
	return checks.Defaults(kind)
}
