package scenario

import (
	"path/filepath"
	"slices"

	"github.com/BurntSushi/toml"
)

// CommandMovedTo is the command of the scenario loaded from file, written
// again to path (a shrunk scenario, say): a relative path the file gave
// its command, which loading made absolute from the file's folder
// (resolved), is made relative to path's folder, so that the new file
// runs under coup run from wherever the tree is. Anything else is kept
// as resolved.
func CommandMovedTo(file string, resolved []string, path string) []string {
	var written struct {
		Command []string `toml:"command"`
	}
	if len(resolved) == 0 || file == "" {
		return resolved
	}
	if _, err := toml.DecodeFile(file, &written); err != nil || len(written.Command) != len(resolved) {
		return resolved
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return resolved
	}
	out := slices.Clone(resolved)
	for i, w := range written.Command {
		if w == resolved[i] || filepath.IsAbs(w) {
			continue
		}
		if rel, err := filepath.Rel(dir, resolved[i]); err == nil {
			out[i] = rel
		}
	}
	return out
}
