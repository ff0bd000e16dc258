package harness

import (
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// A node that sends messages without a checksum while checksums are on
// is warned of, in results.json and the console; with checksums off, or
// with nodes that sum, nothing is said.
func TestUnsummedMessagesWarned(t *testing.T) {
	res, _ := runScenario(t, hostileScenario("chat", 2, ""))
	if got := res.Stats.Counts[history.CountUnsummed+".n2"]; got != 3 {
		t.Errorf("n2's unsummed messages counted %d, want 3", got)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "checksums are on, but n2 sent 3 messages without one (n2 3)") {
		t.Errorf("warnings %q, want one naming n2's 3 messages", res.Warnings)
	}
	if !strings.Contains(res.Summary(), "  WARNING: checksums are on, but n2 sent 3 messages") {
		t.Errorf("the summary does not warn:\n%s", res.Summary())
	}
	off, _ := runScenario(t, strings.Replace(hostileScenario("chat", 2, ""), "nodes = 2\n", "nodes = 2\nchecksums = false\n", 1))
	if len(off.Warnings) != 0 || off.Stats.Counts[history.CountUnsummed+".n2"] != 0 {
		t.Errorf("with checksums off: warnings %q, counts %v", off.Warnings, off.Stats.Counts)
	}
	summed, _ := runScenario(t, `
algorithm = "bully"
nodes = 3
duration = "400ms"
recovery = "200ms"
`)
	if len(summed.Warnings) != 0 || summed.Stats.Messages.Sent == 0 {
		t.Errorf("built-in nodes, which sum every message: warnings %q after %d messages", summed.Warnings, summed.Stats.Messages.Sent)
	}
}
