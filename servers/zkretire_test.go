package servers

import (
	"context"
	"testing"

	"github.com/coupharness/coup/workloads"
)

// An operation whose outcome is unknown retires its process, and the
// client ends that process's session rather than leave the library
// reconnecting it for the rest of the run; an operation that surely
// failed keeps it, and so does a lock's (its session is the lock's).
func TestZooKeeperRetiresTheSessionOfAnUnknownOutcome(t *testing.T) {
	c := newZKKV(map[string]string{"n1": "127.0.0.1:1"}, false) // nothing listens: every connect is refused
	defer c.close()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		process string
		op      workloads.Op
		kept    bool
	}{
		{"c1", workloads.Op{F: workloads.FAdd, Fields: map[string]int64{"element": 1}}, false},
		{"c2", workloads.SetReadOp(), false},
		{"c3", workloads.Op{F: workloads.FAcquire, Value: "c3"}, true},
	} {
		tc.op.Process = tc.process
		if _, err := c.Do(gone, "n1", tc.op); err == nil {
			t.Fatalf("%s: %s against nothing answered", tc.process, tc.op.F)
		}
		c.mu.Lock()
		_, kept := c.conns[tc.process]
		c.mu.Unlock()
		if kept != tc.kept {
			t.Errorf("%s, after an unknown %s: its session kept %v, want %v", tc.process, tc.op.F, kept, tc.kept)
		}
	}
}
