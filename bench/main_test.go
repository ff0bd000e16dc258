package bench

import (
	"os"
	"testing"
)

// TestMain lets the test binary be the probe too: run as "<test binary>
// bench-probe ...", it is the probe node, so the tests run the relay and
// the harness on real processes without building the coup command.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "bench-probe" {
		os.Exit(ProbeMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}
