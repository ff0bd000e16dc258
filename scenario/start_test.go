package scenario

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCommandPathsFromTheScenarioFolder(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"mynode", "node.py", "lib/peer.js"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in := func(p string) string { return filepath.Join(dir, p) }
	tests := []struct {
		command string
		want    []string
	}{
		{`["./mynode", "-v"]`, []string{in("mynode"), "-v"}},
		{`["mynode"]`, []string{in("mynode")}},                         // a bare name found beside the scenario
		{`["bin/missing"]`, []string{in("bin/missing")}},               // a path with a slash, found or not
		{`["python3", "node.py"]`, []string{"python3", in("node.py")}}, // python3 is not beside it: PATH
		{`["node", "lib/peer.js", "lib"]`, []string{"node", in("lib/peer.js"), in("lib")}},
		{`["python3", "-u", "other.py", "--config=lib"]`, []string{"python3", "-u", "other.py", "--config=lib"}},
		{`["/usr/bin/env", "/tmp"]`, []string{"/usr/bin/env", "/tmp"}},
	}
	for _, tt := range tests {
		file := filepath.Join(dir, "s.toml")
		if err := os.WriteFile(file, []byte("command = "+tt.command+"\nnodes = 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Command, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.command, s.Command, tt.want)
		}
	}
}

// A scenario loaded by a relative path resolves against its folder as seen
// from the current directory, and the result does not depend on it.
func TestCommandPathIsAbsolute(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.toml"), []byte("command = [\"./mynode\"]\nnodes = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	s, err := Load("s.toml")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "mynode"); s.Command[0] != want {
		t.Errorf("got %q, want %q", s.Command[0], want)
	}
}

func TestInitLimit(t *testing.T) {
	s, err := Parse("s.toml", "command = [\"./mynode\"]\nnodes = 5\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.InitLimit(), 5*time.Second+100*time.Millisecond; got != want {
		t.Errorf("default init limit for 5 nodes: %s, want %s", got, want)
	}
	s, err = Parse("s.toml", "command = [\"./mynode\"]\nnodes = 5\ninit_timeout = \"300ms\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.InitLimit(), 300*time.Millisecond; got != want {
		t.Errorf("init_timeout: %s, want %s", got, want)
	}
	for _, bad := range []string{`"0s"`, `"5"`, `"-1s"`} {
		if _, err := Parse("s.toml", "command = [\"./mynode\"]\nnodes = 5\ninit_timeout = "+bad+"\n"); err == nil {
			t.Errorf("init_timeout = %s was accepted", bad)
		}
	}
}

// defer_start is a foreign node's key: kept when the scenario is written
// again, and refused, naming the line and the key, for a built-in
// algorithm (which always defers) and real servers (which get no init).
func TestDeferStart(t *testing.T) {
	s, err := Parse("own.toml", "command = [\"./mynode\"]\ndefer_start = true\nnodes = 2\n")
	if err != nil {
		t.Fatal(err)
	}
	if !s.DefersStart() {
		t.Error("a foreign node with defer_start does not defer its start")
	}
	again, err := Parse("again.toml", string(s.Encode("")))
	if err != nil || !again.DefersStart() {
		t.Errorf("defer_start lost when written again (%v):\n%s", err, s.Encode(""))
	}
	if s, err := Parse("plain.toml", "command = [\"./mynode\"]\nnodes = 2\n"); err != nil || s.DefersStart() {
		t.Errorf("a foreign node defers its start unasked (%v)", err)
	}
	if s, err := Parse("bully.toml", "algorithm = \"bully\"\nnodes = 2\n"); err != nil || !s.DefersStart() {
		t.Errorf("a built-in algorithm does not defer its start (%v)", err)
	}
	_, err = Parse("bully.toml", "algorithm = \"bully\"\ndefer_start = true\nnodes = 2\n")
	if err == nil || !strings.Contains(err.Error(), "bully.toml:2") || !strings.Contains(err.Error(), "defer_start") {
		t.Errorf("defer_start on a built-in algorithm: %v", err)
	}
}
