package scenario

import (
	"slices"
	"testing"

	"github.com/coupharness/coup/checks"
)

// A history that names no checks is judged by its algorithm's kind, else
// by its workload's, else as an election.
func TestDefaultChecks(t *testing.T) {
	tests := []struct {
		algorithm, workload string
		want                []string
	}{
		{"bully", "election", checks.ElectionDefaults},
		{"ricart-agrawala", "mutex", checks.MutexDefaults},
		{"", WorkloadMutex, checks.MutexDefaults},
		{"", WorkloadLinKV, checks.KVDefaults},
		{"", WorkloadEcho, checks.EchoDefaults},
		{"", WorkloadSet, checks.SetDefaults},
		{"my-own", WorkloadNone, checks.ElectionDefaults},
	}
	for _, tt := range tests {
		if got := DefaultChecks(tt.algorithm, tt.workload); !slices.Equal(got, tt.want) {
			t.Errorf("DefaultChecks(%q, %q) = %v, want %v", tt.algorithm, tt.workload, got, tt.want)
		}
	}
}
