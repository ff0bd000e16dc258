package scenario

import (
	"embed"
	"fmt"
	"slices"
	"strings"
	"time"

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

// presetRules are what a preset's server itself refuses, checked with
// the scenario so that the error names the key and its line rather than
// a server that exits at its start.
var presetRules = map[string]func(s *Scenario) error{
	"etcd": func(s *Scenario) error {
		sv := s.Server
		// etcd: "should be at least as 5 times as --heartbeat-interval",
		// and at most 50s.
		if !sv.writes("election_timeout") || !sv.writes("heartbeat_every") {
			return nil
		}
		at := "server.election_timeout"
		if !s.written.ElectionTimeout.Set && s.written.HeartbeatEvery.Set {
			at = "server.heartbeat_every" // the key the scenario changed
		}
		switch e, h := sv.ElectionTimeout.D, sv.HeartbeatEvery.D; {
		case e < 5*h:
			return s.errorf(at, "etcd refuses an election timeout under 5 heartbeats: election_timeout %s is less than 5 × heartbeat_every %s", e, h)
		case e > 50*time.Second:
			return s.errorf("server.election_timeout", "etcd refuses an election timeout over 50s, got %s", e)
		}
		return nil
	},
	"zookeeper": func(s *Scenario) error {
		sv := s.Server
		// ZooKeeper grants a session timeout of 2 to 20 ticks, whatever
		// the client asks: a lock client's lock_ttl outside them would
		// silently become another.
		if s.Workload.Kind != WorkloadMutex || sv.Client != ClientZooKeeper || !sv.writes("tick") {
			return nil
		}
		at := "server.lock_ttl"
		if !s.written.LockTTL.Set && s.written.Tick.Set {
			at = "server.tick" // the key the scenario changed
		}
		if lo, hi := 2*sv.Tick.D, 20*sv.Tick.D; sv.LockTTL.D < lo || sv.LockTTL.D > hi {
			return s.errorf(at, "ZooKeeper grants sessions of 2 to 20 ticks (%s to %s with a tick of %s), and lock_ttl is %s: give a lock_ttl between them, or another tick", lo, hi, sv.Tick.D, sv.LockTTL.D)
		}
		return nil
	},
}
