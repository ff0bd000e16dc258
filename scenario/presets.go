package scenario

import (
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

//go:embed presets/*.toml
var presetFiles embed.FS

// presets are the built-in server descriptions, by name: each is a
// [server] table in the generic form (presets/NAME.toml), so that what a
// preset does a user's own description can do too.
var presets = map[string]func() *Server{}

func init() {
	entries, err := presetFiles.ReadDir("presets")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".toml")
		presets[name] = func() *Server {
			src, err := presetFiles.ReadFile("presets/" + e.Name())
			if err != nil {
				panic(err)
			}
			var f struct {
				Server Server `toml:"server"`
			}
			if _, err := toml.Decode(string(src), &f); err != nil {
				panic(fmt.Sprintf("preset %s: %v", name, err))
			}
			return &f.Server
		}
	}
}

// Presets are the built-in server descriptions' names.
func Presets() []string { return presetNames() }

func presetNames() []string {
	var out []string
	for n := range presets {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// PresetSource is a preset's file, for people (coup list, the docs).
func PresetSource(name string) (string, bool) {
	src, err := presetFiles.ReadFile("presets/" + name + ".toml")
	return string(src), err == nil
}
