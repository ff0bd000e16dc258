package explore

import (
	"os/exec"
	"strings"
	"testing"
)

// The search room knows no driver: neither explore nor anything it
// imports is a driver's package (shrinking runs candidates through a
// Runner it is handed).
func TestShrinkKnowsNoDriver(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 5 {
		t.Fatalf("go list -deps gave %q", deps)
	}
	for _, d := range deps {
		for _, driver := range []string{"/harness", "/servers", "/sim", "/lifecycle"} {
			if strings.HasPrefix(d, "github.com/coupharness/coup") && (strings.HasSuffix(d, driver) || strings.Contains(d, driver+"/")) {
				t.Errorf("explore depends on %s", d)
			}
		}
	}
}
