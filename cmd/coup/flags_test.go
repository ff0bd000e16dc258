package main

import (
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// Flags may come before, between or after the arguments; "--" ends them.
func TestParseArgs(t *testing.T) {
	tests := []struct {
		args  []string
		files []string
		seed  int
		quiet bool
	}{
		{[]string{"a.toml", "--seed", "3"}, []string{"a.toml"}, 3, false},
		{[]string{"--seed", "4", "a.toml"}, []string{"a.toml"}, 4, false},
		{[]string{"a", "--seed=5", "b", "-quiet"}, []string{"a", "b"}, 5, true},
		{[]string{"--quiet", "--", "--seed", "x"}, []string{"--seed", "x"}, 0, true},
		{[]string{"a", "--", "-b"}, []string{"a", "-b"}, 0, false},
		{nil, nil, 0, false},
	}
	for _, tt := range tests {
		fs := newFlags("t")
		seed := fs.Int("seed", 0, "")
		quiet := fs.Bool("quiet", false, "")
		files, code, ok := parseArgs(fs, "usage: t\n", tt.args)
		if !ok || code != 0 || !slices.Equal(files, tt.files) || *seed != tt.seed || *quiet != tt.quiet {
			t.Errorf("%q: files %q, seed %d, quiet %v, ok %v; want %q, %d, %v", tt.args, files, *seed, *quiet, ok, tt.files, tt.seed, tt.quiet)
		}
	}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"a", "--help"}, 0},
		{[]string{"-h"}, 0},
		{[]string{"a", "--nope"}, 2},
		{[]string{"--seed", "x"}, 2},
		{[]string{"a", "--seed"}, 2},
	} {
		fs := newFlags("t")
		fs.Int("seed", 0, "")
		_, code, ok := parseArgs(fs, "usage: t\n", tt.args)
		if ok || code != tt.code {
			t.Errorf("%q: ok %v, code %d; want not ok and %d", tt.args, ok, code, tt.code)
		}
	}
}

func TestVersionString(t *testing.T) {
	tests := []struct {
		info *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}}, "coup v1.2.0 (go1.26.8 "},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20250501100000-365da06a1b2c+dirty"}},
			"coup v0.0.0-20250501100000-365da06a1b2c+dirty (go1.26.8 "},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "365da06a1b2c3d4e5f60718293a4b5c6d7e8f901"}, {Key: "vcs.time", Value: "2025-05-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		}}, "coup devel 365da06a1b2c (2025-05-01T10:00:00Z, modified) (go1.26.8 "},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "coup devel (go1.26.8 "},
		{nil, "coup devel (go"},
	}
	for _, tt := range tests {
		if got := versionString(tt.info); !strings.HasPrefix(got, tt.want) {
			t.Errorf("versionString = %q, want it to begin %q", got, tt.want)
		}
	}
}
