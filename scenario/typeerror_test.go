package scenario

import (
	"errors"
	"testing"
)

// A value of the wrong type is named by its written path, at the line and
// column of the value, with the type its key wants and the value given:
// never Go's types, never column 1 of a key's line, never a path without
// its array index.
func TestTypeErrors(t *testing.T) {
	const head = "algorithm = \"chang-roberts\"\nnodes = 3\n"
	tests := []struct {
		name, src string
		line, col int
		field     string
		msg       string
	}{
		{"integer given a string", "algorithm = \"chang-roberts\"\nnodes = \"five\"\n",
			2, 9, "nodes", `must be an integer, like 5, not the string "five"`},
		{"indented key", head + "  seed   =  \"x\"\n",
			3, 13, "seed", `must be an integer, like 5, not the string "x"`},
		{"boolean given a string", head + "checksums = \"yes\"\n",
			3, 13, "checksums", `must be true or false, not the string "yes"`},
		{"string given an integer, second array entry", head + "[[faults]]\nkind = \"crash\"\nat = \"1s\"\ntarget = \"n1\"\n[[faults]]\nkind = 3\n",
			8, 8, "faults[1].kind", `must be a string, like "text", not the integer 3`},
		{"list given a string", head + "[workload]\ninitiators = \"n1\"\n",
			4, 14, "workload.initiators", `must be a list of strings, like ["a", "b"], not the string "n1"`},
		{"list of integers given a mixed array", head + "ids = [1, \"x\", 3]\n",
			3, 7, "ids", `must be a list of integers, like [1, 2], not the array [1, "x", 3]`},
		{"list of lists", head + "[[faults]]\nkind = \"partition\"\nat = \"1s\"\ngroups = [\"n1\", \"n2\"]\n",
			6, 10, "faults[0].groups", `must be a list of lists of strings, like [["n1"], ["n2", "n3"]], not the array ["n1", "n2"]`},
		{"table given an integer", head + "network = 3\n",
			3, 11, "network", `must be a table ([network] or network = { … }), not the integer 3`},
		{"array of tables given an integer", head + "faults = 3\n",
			3, 10, "faults", `must be an array of tables ([[faults]]), not the integer 3`},
		{"inline table's key", head + "[[faults]]\nkind = \"crash\"\nat = \"1s\"\nwhen = { node = 5 }\n",
			6, 17, "faults[0].when.node", `must be a string, like "text", not the integer 5`},
		{"a table of strings", head + "[server]\npreset = \"etcd\"\nenv = { A = \"1\", B = 2 }\n",
			5, 22, "server.env.B", `must be a string, like "text", not the integer 2`},
		{"a quoted name", head + "[server]\npreset = \"etcd\"\n[server.files]\n\"zoo.cfg\" = 3\n",
			6, 13, `server.files."zoo.cfg"`, `must be a string, like "text", not the integer 3`},
		{"a date", "algorithm = \"chang-roberts\"\nnodes = 1979-05-27\n",
			2, 9, "nodes", `must be an integer, like 5, not the date or time 1979-05-27`},
		{"a float for an integer", head + "[workload]\nclients = 2.5\n",
			4, 11, "workload.clients", `must be an integer, like 5, not the number 2.5`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.toml", tt.src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if e.Line != tt.line || e.Col != tt.col || e.Field != tt.field || e.Msg != tt.msg {
				t.Errorf("got %d:%d %s: %s\nwant %d:%d %s: %s", e.Line, e.Col, e.Field, e.Msg, tt.line, tt.col, tt.field, tt.msg)
			}
		})
	}
}

// A syntax error is still BurntSushi's, at its own place: the type search
// runs only on a file that parses.
func TestSyntaxErrorNotATypeError(t *testing.T) {
	_, err := Parse("bad.toml", "algorithm = \"chang-roberts\"\nnodes = = 3\n")
	var e *Error
	if !errors.As(err, &e) || e.Line != 2 {
		t.Fatalf("got %v, want an error at line 2", err)
	}
}
