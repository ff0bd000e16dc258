package servers

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// Answers of Patroni 3.0.2's GET /patroni, by hand, in its shape: a
// running PostgreSQL out of recovery (the primary, with its WAL senders),
// one in recovery, and one that is not running, when Patroni gives only
// its state and the role it holds.
const (
	patroniPrimary = `{"state": "running", "postmaster_start_time": "2026-12-01 22:57:10.123456+00:00", "role": "master", ` +
		`"server_version": 150014, "xlog": {"location": 50331968}, "timeline": %d, "replication": [{"usename": "replicator", ` +
		`"application_name": "n2", "client_addr": "10.77.0.2", "state": "streaming", "sync_state": "async", "sync_priority": 0}], ` +
		`"dcs_last_seen": 1764629830, "database_system_identifier": "7443123456789012345", "patroni": {"version": "3.0.2", "scope": "coup"}}`
	patroniReplica = `{"state": "running", "postmaster_start_time": "2026-12-01 22:57:12.654321+00:00", "role": "replica", ` +
		`"server_version": 150014, "xlog": {"received_location": 50331968, "replayed_location": 50331968, "replayed_timestamp": null, ` +
		`"paused": false}, "timeline": %d, "dcs_last_seen": 1764629830, "database_system_identifier": "7443123456789012345", ` +
		`"patroni": {"version": "3.0.2", "scope": "coup"}}`
	patroniNotRunning = `{"state": "%s", "role": "master", "cluster_unlocked": true, "dcs_last_seen": 1764629830, ` +
		`"patroni": {"version": "3.0.2", "scope": "coup"}}`
)

// pollPatroni runs hand-made answers of GET /patroni through the patroni
// preset's poll patterns and an observer, each as "node: answer", a
// round each, and returns the leader reports it records, as "node
// leader term".
func pollPatroni(t *testing.T, answers ...string) []string {
	t.Helper()
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "patroni.toml"), "nodes = 3\nduration = \"1s\"\n[server]\npreset = \"patroni\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Server.Sidecars) != 1 || len(sc.Server.Sidecars[0].Poll) != 1 {
		t.Fatalf("the preset's sidecars %+v, want Patroni's with its one poll", sc.Server.Sidecars)
	}
	poll := sc.Server.Sidecars[0].Poll[0]
	r := &run{sc: sc, sv: sc.Server}
	r.obs = newObserver(r)
	for _, n := range []string{"n1", "n2", "n3"} {
		r.obs.started(n)
	}
	for _, a := range answers {
		node, answer, _ := strings.Cut(a, ": ")
		rd := &reading{source: "poll"}
		for j := range poll.Match {
			readPattern(sc.Server, &poll.Match[j], []byte(answer), rd)
		}
		r.obs.observe(node, r.obs.nodes[node].gen, -1, rd)
	}
	var out []string
	for _, e := range r.early {
		if e.Kind == history.KindReport {
			term := "-"
			if e.Term != nil {
				term = fmt.Sprint(*e.Term)
			}
			out = append(out, fmt.Sprintf("%s %s %s", e.Node, e.Value, term))
		}
	}
	return out
}

// A primary's reading names its own node, its timeline the term; a
// replica follows the other node that claims its timeline (the preset's
// inherit_leader), never itself; a promoted replica names itself in its
// new timeline; a PostgreSQL that is not running follows nobody,
// whatever role Patroni still gives it, in no term (its answer gives
// none).
func TestPatroniAnswers(t *testing.T) {
	primary := func(tl int) string { return fmt.Sprintf(patroniPrimary, tl) }
	replica := func(tl int) string { return fmt.Sprintf(patroniReplica, tl) }
	notRunning := func(state string) string { return fmt.Sprintf(patroniNotRunning, state) }
	for _, tt := range []struct {
		name    string
		answers []string
		want    string
	}{
		{"a primary and two replicas",
			[]string{"n1: " + primary(1), "n2: " + replica(1), "n3: " + replica(1)},
			"n1 n1 1; n2 n1 1; n3 n1 1"},
		{"a replica seen before its primary follows nobody until its next reading",
			[]string{"n2: " + replica(1), "n1: " + primary(1), "n2: " + replica(1)},
			"n1 n1 1; n2 n1 1"},
		{"a demoted primary, a replica on the timeline it led, follows nobody: it is no claimant",
			[]string{"n1: " + primary(1), "n2: " + replica(1), "n2: " + primary(2), "n1: " + replica(1), "n1: " + replica(2)},
			"n1 n1 1; n2 n1 1; n2 n2 2; n1  1; n1 n2 2"},
		{"a promoted replica names itself, in its new timeline",
			[]string{"n1: " + primary(1), "n2: " + replica(1), "n2: " + primary(2), "n3: " + replica(2)},
			"n1 n1 1; n2 n1 1; n2 n2 2; n3 n2 2"},
		{"a primary being stopped, and one starting, follow nobody",
			[]string{"n1: " + primary(1), "n1: " + notRunning("stopping"), "n2: " + primary(1), "n2: " + notRunning("starting")},
			"n1 n1 1; n1  -; n2 n2 1; n2  -"},
		{"a restarting PostgreSQL follows nobody",
			[]string{"n1: " + primary(3), "n1: " + notRunning("restarting")},
			"n1 n1 3; n1  -"},
		{"two primaries on one timeline are both named as claimed",
			[]string{"n1: " + primary(2), "n3: " + replica(2), "n3: " + primary(2)},
			"n1 n1 2; n3 n1 2; n3 n3 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(pollPatroni(t, tt.answers...), "; "); got != tt.want {
				t.Errorf("reports %q, want %q", got, tt.want)
			}
		})
	}
}
