package gossip

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes"
)

func TestParseParams(t *testing.T) {
	p, err := ParseParams(nodes.NewParams(nil))
	if err != nil || p.ProbeInterval != 100*time.Millisecond || p.SuspicionMult != 2 || p.RejoinEvery != 0 {
		t.Errorf("defaults: %+v, %v", p, err)
	}
	for _, tt := range []struct {
		values map[string]any
		key    string
	}{
		{map[string]any{"probe_timeout": "200ms"}, "probe_timeout"}, // not shorter than the interval
		{map[string]any{"suspicion_mult": int64(0)}, "suspicion_mult"},
		{map[string]any{"probe_interval": "0s"}, "probe_interval"},
		{map[string]any{"rejoin_every": "-1s"}, "rejoin_every"},
		{map[string]any{"rejoin": "1s"}, "rejoin"},
	} {
		var pe *nodes.ParamError
		if _, err := ParseParams(nodes.NewParams(tt.values)); !errors.As(err, &pe) || pe.Key != tt.key {
			t.Errorf("%v: got %v, want an error naming %s", tt.values, err, tt.key)
		}
	}
}

// This package's test runs from the clone, so the program's source is
// found beside it.
func TestSourceDir(t *testing.T) {
	src, ok := sourceDir()
	if !ok {
		t.Fatal("no source folder for the program, in a clone")
	}
	if want, _ := filepath.Abs(ProgramName); src != want {
		t.Errorf("source folder %s, want %s", src, want)
	}
}

// The program is rebuilt when it is missing, or when a Go file, go.mod or
// go.sum of the clone is newer than it; not for other files, nor for what
// is in another nested module, a store, testdata or a hidden folder.
func TestNewerSource(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "nodes", "gossip", ProgramName)
	bin := filepath.Join(src, ProgramName)
	old := time.Now().Add(-time.Hour)
	write := func(rel string, at time.Time) string {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("go.mod", old)
	write("nodes/gossip/gossip.go", old)
	write("nodes/gossip/"+ProgramName+"/go.mod", old)
	write("nodes/gossip/"+ProgramName+"/node.go", old)

	if got, err := newerSource(bin, root, src); err != nil || got != bin {
		t.Fatalf("no executable: newerSource = %q, %v; want %s", got, err, bin)
	}
	write("nodes/gossip/"+ProgramName+"/"+ProgramName, old.Add(time.Minute))
	if got, err := newerSource(bin, root, src); err != nil || got != "" {
		t.Fatalf("an executable newer than every source: newerSource = %q, %v; want none", got, err)
	}

	later := old.Add(2 * time.Minute)
	for _, rel := range []string{
		"README.md",
		"examples/raft/go.mod",
		"examples/raft/main.go",
		"store/x/y.go",
		"testdata/toy/toy.go",
		".git/hooks/x.go",
	} {
		write(rel, later)
	}
	if got, err := newerSource(bin, root, src); err != nil || got != "" {
		t.Fatalf("newer files that are not the program's sources: newerSource = %q, %v; want none", got, err)
	}
	for _, rel := range []string{"nodes/process/process.go", "go.sum", "nodes/gossip/" + ProgramName + "/go.sum"} {
		p := write(rel, later)
		if got, err := newerSource(bin, root, src); err != nil || got != p {
			t.Errorf("%s newer: newerSource = %q, %v; want it", rel, got, err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// Without a clone, the program is the one installed on the PATH (or
// beside the executable, which a test binary has not); without either,
// the error says how to install it.
func TestInstalled(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	if p, err := installed(); err == nil || !strings.Contains(err.Error(), "go install") {
		t.Errorf("nothing installed: installed() = %q, %v; want an error that says how to install it", p, err)
	}
	prog := filepath.Join(dir, ProgramName)
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := installed(); err != nil || p != prog {
		t.Errorf("installed on the PATH: installed() = %q, %v; want %s", p, err, prog)
	}
}

// A program that needs building, where the go command cannot be found,
// fails with an error that says so, and builds nothing.
func TestBuildWithoutGo(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "nodes", "gossip", ProgramName)
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	var said []string
	_, err := build(context.Background(), src, func(f string, args ...any) { said = append(said, fmt.Sprintf(f, args...)) })
	if err == nil || !strings.Contains(err.Error(), "go command is not on the PATH") {
		t.Errorf("build without go: %v, want an error that says the go command is not on the PATH", err)
	}
	if len(said) != 0 {
		t.Errorf("said %q, but built nothing", said)
	}
}
