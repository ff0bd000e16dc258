package scenario

import "slices"

// The postgres client's keys and rules (client = "postgres", the patroni
// preset's: presets/patroni.toml).

// PostgresPort is the port of a host's PostgreSQL that the postgres
// client dials: the server's, or a sidecar's (Patroni's, in the preset).
const PostgresPort = "postgres"

// validatePostgresClient holds the postgres client to a host that has a
// PostgreSQL port to dial.
func (s *Scenario) validatePostgresClient() error {
	sv := s.Server
	if sv.Client != ClientPostgres {
		return nil
	}
	if slices.Contains(sv.Ports, PostgresPort) {
		return nil
	}
	for _, sc := range sv.Sidecars {
		if slices.Contains(sc.Ports, PostgresPort) {
			return nil
		}
	}
	return s.errorf("server.client", "the postgres client dials each host's port %q, which neither the server's ports nor a sidecar's name", PostgresPort)
}
