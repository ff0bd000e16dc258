package servers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltProgram(t *testing.T) {
	for module, want := range map[string]string{
		"github.com/nats-io/nats-server/v2": "nats-server",
		"github.com/nats-io/nats-server":    "nats-server",
		"example.com/tool/v12":              "tool",
		"example.com/v":                     "v",
	} {
		if got := builtProgram(module); got != want {
			t.Errorf("%s: %q, want %q", module, got, want)
		}
	}
}

// A server of a version is built once, by go install of its module at
// that version with GOBIN a folder of the cache's, and run from the
// cache ever after; the console is told when it builds and how long it
// took. A go that fails says why, with its output. (A go of the test's
// own stands in for Go's, which would fetch the module.)
func TestBuildModule(t *testing.T) {
	bin := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	fake := "#!/bin/sh\necho \"$@ GOBIN=$GOBIN\" >> " + calls + "\n" +
		"case \"$2\" in *@v9.9.9) echo 'no such version' >&2; exit 1;; esac\n" +
		"printf '#!/bin/sh\\necho built\\n' > \"$GOBIN/nats-server\" && chmod +x \"$GOBIN/nats-server\"\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	cache := t.TempDir()
	t.Setenv("COUP_CACHE_DIR", cache)
	var said []string
	logf := func(format string, args ...any) { said = append(said, format) }
	for i := range 2 {
		got, err := buildModule(context.Background(), "github.com/nats-io/nats-server/v2", "2.15.2", logf)
		if err != nil {
			t.Fatalf("build %d: %v", i+1, err)
		}
		if want := filepath.Join(cache, "servers", "nats-server@v2.15.2", "nats-server"); got != want {
			t.Errorf("build %d: %s, want %s", i+1, got, want)
		}
	}
	b, _ := os.ReadFile(calls)
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "install github.com/nats-io/nats-server/v2@v2.15.2 GOBIN="+filepath.Join(cache, "servers", "nats-server@v2.15.2")) {
		t.Errorf("go was run as %q, want once: install MODULE@v2.15.2 with GOBIN in the cache", lines)
	}
	if len(said) != 2 || !strings.HasPrefix(said[0], "building") || !strings.HasPrefix(said[1], "built") {
		t.Errorf("the console was told %q, want the build's start and its end", said)
	}
	_, err := buildModule(context.Background(), "github.com/nats-io/nats-server/v2", "9.9.9", logf)
	if err == nil || !strings.Contains(err.Error(), "no such version") {
		t.Errorf("a failed build: %v, want go's own words", err)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "servers", "*", ".build-*")); len(left) > 0 {
		t.Errorf("builds left %v behind", left)
	}
}
