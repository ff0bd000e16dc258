package main

import (
	"flag"
	"slices"
	"testing"
)

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"scenarios/sim/bully-replace-race.toml", "scenarios/sim/bully-replace-race.toml"},
		{"my scenarios/a.toml", "'my scenarios/a.toml'"},
		{"it's.toml", `'it'\''s.toml'`},
		{"", "''"},
	}
	for _, tt := range tests {
		if got := shellQuote(tt.in); got != tt.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// Flags may come before or after the scenario file.
func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args  []string
		files []string
		seed  int
	}{
		{[]string{"a.toml", "--seed", "3"}, []string{"a.toml"}, 3},
		{[]string{"--seed", "4", "a.toml"}, []string{"a.toml"}, 4},
		{[]string{"a", "--seed", "5", "b"}, []string{"a", "b"}, 5},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("sim", flag.ContinueOnError)
		seed := fs.Int("seed", 0, "")
		files, ok := parseInterspersed(fs, tt.args)
		if !ok || !slices.Equal(files, tt.files) || *seed != tt.seed {
			t.Errorf("%v: files %v, seed %d, ok %v; want %v, %d", tt.args, files, *seed, ok, tt.files, tt.seed)
		}
	}
}
