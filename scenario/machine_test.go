package scenario

import (
	"strings"
	"testing"
)

func TestParseMachine(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      string // an error's text, or "" for none
		kind      string
	}{
		{"lin-kv, no command", "nodes = 3\n[workload]\nkind = \"lin-kv\"\n", "", "lin-kv"},
		{"any algorithm name", "algorithm = \"raft\"\nnodes = 3\n", "", "election"},
		{"params left to the machine", "nodes = 3\n[params]\nwhatever = 1\n", "", "election"},
		{"a command is kept", "command = [\"./node\"]\nnodes = 3\n", "", "election"},
		{"an empty command", "command = []\nnodes = 3\n", "command: empty", ""},
		{"still validated", "nodes = 0\n", "nodes: must be at least 1", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, err := ParseMachine("m.toml", c.src)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("ParseMachine: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("ParseMachine: %v, want an error with %q", err, c.want)
			case c.want != "":
				return
			}
			if !sc.OwnMachine() || sc.Kind() != c.kind {
				t.Errorf("own machine %v, kind %q; want true, %q", sc.OwnMachine(), sc.Kind(), c.kind)
			}
			if sc.Elects != "any" {
				t.Errorf("elects %q, want any", sc.Elects)
			}
			again, err := ParseMachine("m.toml", string(sc.Encode("")))
			if err != nil {
				t.Fatalf("the encoded scenario does not parse again: %v\n%s", err, sc.Encode(""))
			}
			if again.Kind() != sc.Kind() {
				t.Errorf("encoded and read again: kind %q, want %q", again.Kind(), sc.Kind())
			}
		})
	}
	// Parse keeps refusing what only a machine of one's own may leave out.
	if _, err := Parse("m.toml", "nodes = 3\n[workload]\nkind = \"lin-kv\"\n"); err == nil || !strings.Contains(err.Error(), "algorithm: missing") {
		t.Errorf("Parse of a scenario with neither algorithm nor command: %v", err)
	}
	if sc, err := Parse("m.toml", "algorithm = \"bully\"\nnodes = 3\n"); err != nil || sc.OwnMachine() {
		t.Errorf("Parse: %v, own machine %v", err, sc != nil && sc.OwnMachine())
	}
}
