package coup

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/coupharness/coup/scenario"
)

// A shrunk scenario written elsewhere keeps its command runnable: the
// relative paths the original gave are made relative to the new folder;
// absolute ones and bare program names stay as written.
func TestCommandMovedTo(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"ex/run.sh"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "ex", "s.toml")
	src := "command = [\"sh\", \"run.sh\", \"/abs/x\", \"--flag\"]\nnodes = 2\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Command[1] != filepath.Join(dir, "ex", "run.sh") {
		t.Fatalf("loading resolved the command to %q", sc.Command)
	}
	for _, c := range []struct {
		to   string
		want []string
	}{
		{filepath.Join(dir, "ex", "shrunk.toml"), []string{"sh", "run.sh", "/abs/x", "--flag"}},
		{filepath.Join(dir, "store", "s", "shrunk.toml"), []string{"sh", "../../ex/run.sh", "/abs/x", "--flag"}},
	} {
		if got := scenario.CommandMovedTo(sc.File, sc.Command, c.to); !slices.Equal(got, c.want) {
			t.Errorf("written to %s: command %q, want %q", c.to, got, c.want)
		}
	}
	built := *sc
	built.File = ""
	if got := scenario.CommandMovedTo(built.File, sc.Command, filepath.Join(dir, "x.toml")); !slices.Equal(got, sc.Command) {
		t.Errorf("a scenario from no file: command %q, want it as it is", got)
	}
}
