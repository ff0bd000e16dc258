package servers

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A folder above the node's that does not let the host's user through
// is named, with its mode and what to do; one that does, and root, pass.
func TestReachable(t *testing.T) {
	top := t.TempDir()
	closed := filepath.Join(top, "closed")
	node := filepath.Join(closed, "store", "n1")
	if err := os.MkdirAll(node, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(top), top} { // the test's own folders
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	other := &syscall.Credential{Uid: uint32(os.Getuid()) + 4242, Gid: uint32(os.Getgid()) + 4242}
	err := reachable(node, other)
	if err == nil || !strings.Contains(err.Error(), closed+" (mode 0700") || !strings.Contains(err.Error(), "chmod o+x") {
		t.Fatalf("a folder of mode 0700 above the node's: %v, want it named with its mode and the remedy", err)
	}
	if err := reachable(node, &syscall.Credential{Uid: 0}); err != nil {
		t.Errorf("root: %v, want nil", err)
	}
	if err := os.Chmod(closed, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := reachable(node, other); err != nil {
		t.Errorf("every folder searchable by others: %v, want nil", err)
	}
}
