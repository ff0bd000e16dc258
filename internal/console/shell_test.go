package console

import "testing"

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"scenarios/sim/bully-replace-race.toml", "scenarios/sim/bully-replace-race.toml"},
		{"my scenarios/a.toml", "'my scenarios/a.toml'"},
		{"it's.toml", `'it'\''s.toml'`},
		{"", "''"},
	}
	for _, tt := range tests {
		if got := ShellQuote(tt.in); got != tt.want {
			t.Errorf("ShellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
