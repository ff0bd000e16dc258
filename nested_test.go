package coup_test

import (
	"os/exec"
	"testing"
)

// The modules nested in this one (each requires coup, replaced by this
// clone) stay tidy as coup's own go.mod changes: otherwise their builds
// on first use (the raft scenario's run.sh, the memberlist node program)
// stop with "updates to go.mod needed".
func TestNestedModulesAreTidy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy in each nested module")
	}
	for _, dir := range []string{"examples/raft", "nodes/gossip/coup-memberlist"} {
		cmd := exec.Command("go", "mod", "tidy", "-diff")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: go mod tidy -diff: %v: the module needs `go mod tidy`:\n%s", dir, err, out)
		}
	}
}
