package scenario

import (
	"regexp"
	"slices"
	"strings"
)

// NATS JetStream's keys and rules: the nats preset (presets/nats.toml),
// its poll reader and the build of its server from source.

// PollReaders are the built-in readers a poll may name (Poll.Read).
var PollReaders = []string{PollReadNats}

// PollReadNats reads NATS's /jsz answer (streams and raft): the leader
// of the stream NatsStream as the server believes it, with its Raft
// group's term from /raftz where the server has it.
const PollReadNats = "nats"

// NatsStream is the stream the nats client creates, publishes to and
// reads back, and whose leader the nats reader observes; NatsSubjects
// are its subjects.
const (
	NatsStream   = "coup"
	NatsSubjects = "coup.>"
)

// NatsMaxReplicas is the most servers JetStream replicates a stream on.
const NatsMaxReplicas = 5

// presetSources are the presets whose server coup can build from its
// source (Server.Version): the Go module that go install builds.
var presetSources = map[string]string{
	"nats": "github.com/nats-io/nats-server/v2",
}

// PresetModule is the Go module a preset's server is built from, when
// coup can build it (version).
func PresetModule(preset string) (string, bool) {
	m, ok := presetSources[preset]
	return m, ok
}

var versionForm = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// validateVersion checks the version key: for a preset that coup can
// build, in the form 2.15.2, and not beside a program of the scenario's
// own.
func (s *Scenario) validateVersion() error {
	sv := s.Server
	if sv.Version == "" {
		return nil
	}
	var known []string
	for p := range presetSources {
		known = append(known, p)
	}
	slices.Sort(known)
	if _, ok := presetSources[sv.Preset]; !ok {
		return s.errorf("server.version", "coup builds the server of a preset from source only for %s: for another build of a server, give its program", strings.Join(known, ", "))
	}
	if sv.Program != "" {
		return s.errorf("server.version", "give a version for coup to build, or a program to run, not both")
	}
	sv.Version = strings.TrimPrefix(sv.Version, "v")
	if !versionForm.MatchString(sv.Version) {
		return s.errorf("server.version", "%q is not a release's version, like \"2.15.2\"", sv.Version)
	}
	return nil
}

func init() {
	presetRules["nats"] = func(s *Scenario) error {
		sv := s.Server
		if s.Nodes > NatsMaxReplicas {
			return s.errorf("nodes", "JetStream replicates a stream on at most %d servers, and the nats preset's stream is on every node: %d nodes", NatsMaxReplicas, s.Nodes)
		}
		// Debian's nats-server 2.9.10 refuses sync_interval (unknown
		// field) and exits at its start: said here, with the key's line.
		if sv.Version == "" && sv.Program == "" && strings.Contains(sv.Files["sync.conf"], "sync_interval") {
			return s.errorf(keyPath("server.files", "sync.conf"), "Debian's nats-server (2.9.10) knows no sync_interval (its file store syncs every 60s, hard-coded): give version = \"2.15.2\" for coup to build a nats-server that does")
		}
		return nil
	}
}
