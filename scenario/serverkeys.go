package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// The keys of [server]'s open tables (files, env) are names the scenario
// makes up: each must name what its table makes of it.

// fileKeyProblem says what is wrong with a key of [server.files], or "":
// it must be a plain relative path of a file inside the node's folder.
func fileKeyProblem(name string) string {
	switch {
	case name == "":
		return "an empty path names no file"
	case strings.HasPrefix(name, "/"):
		return "an absolute path: give a path inside the node's folder, like \"conf/server.cfg\""
	case strings.ContainsRune(name, 0):
		return "a path may not hold a NUL"
	case strings.HasSuffix(name, "/"):
		return "a folder, not a file: give the file's path inside it"
	}
	switch name {
	case ".":
		return "the node's folder itself, not a file in it"
	case "..":
		return "the folder above the node's, outside it"
	}
	for _, part := range strings.Split(name, "/") {
		switch part {
		case "":
			return "an empty part (//): give a plain path, like \"conf/server.cfg\""
		case ".", "..":
			return fmt.Sprintf("a path with %q in it: give a plain path inside the node's folder, like \"conf/server.cfg\"", part)
		}
	}
	if name == "data" {
		return "data is the node's data folder ({{.Data}}): a file there goes under it, like \"data/myid\""
	}
	return ""
}

// envKeyProblem says what is wrong with a key of [server.env], or "".
func envKeyProblem(name string) string {
	switch {
	case name == "":
		return "an empty name names no variable"
	case strings.ContainsRune(name, '='):
		return "a name may not hold '=': it ends the name in the environment"
	case strings.ContainsRune(name, 0):
		return "a name may not hold a NUL"
	}
	return ""
}

// keyPath is the path of a key of a table of any keys ([server.files]),
// quoted as TOML quotes it when it is not bare: server.files."zoo.cfg".
func keyPath(table, key string) string {
	return table + "." + toml.Key{key}.String()
}

// sortedKeys are a table's keys in order, so that the first bad one is
// the same at every read.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
