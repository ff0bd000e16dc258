package servers

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// observeScenario is a scenario of three servers whose log patterns
// read a follower that names its leader and its term, a promoted node
// that says only "leader" and its timeline, and a follower that names
// no leader (ZooKeeper's, Patroni's kind of lines).
const observeScenario = `nodes = 3
duration = "1s"

[server]
command = ["server"]
ports = ["peer"]
peer = ["peer"]

[[server.log]]
match = '^follows (?P<leader>n[0-9]) at term (?P<term>[0-9]+)'
role = "follower"

[[server.log]]
match = '^leader (?P<term>[0-9]+)'
role = "leader"

[[server.log]]
match = '^following at term (?P<term>[0-9]+)'
role = "follower"

[[server.log]]
match = '^term (?P<term>[0-9]+)$'

[[server.log]]
match = '^is master$'
role = "leader"

[[server.log]]
match = '^epoch (?P<term>[0-9]+) master (?P<leader>n[0-9])$'

[[server.log]]
match = '^inheriting follower at term (?P<term>[0-9]+)'
role = "follower"
inherit_leader = true

[[server.log]]
match = '^inheriting master$'
role = "leader"
inherit_term = true

[[server.log]]
match = '^(?P<self>[a-z0-9]+) is my name$'

[[server.log]]
match = '^stopped$'
role = "none"
`

// feed runs hand-made log lines through an observer, as "node: line",
// and returns the leader reports it records, as "node leader term".
func feed(t *testing.T, lines ...string) []string {
	t.Helper()
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "obs.toml"), observeScenario)
	if err != nil {
		t.Fatal(err)
	}
	r := &run{sc: sc, sv: sc.Server}
	r.obs = newObserver(r)
	for _, n := range []string{"n1", "n2", "n3"} {
		r.obs.started(n)
	}
	for i, l := range lines {
		node, line, _ := strings.Cut(l, ": ")
		switch line {
		case "unknown":
			b := r.obs.nodes[node]
			r.obs.observe(node, b.gen, b.pauses, &reading{unknown: true, why: "timed out", source: "poll"})
		case "pause", "resume":
			r.obs.frozen(node, line == "pause")
		default:
			r.obs.line(node, sc.Server.Log, []byte(line), node+".log", i+1)
		}
	}
	var out []string
	for _, e := range r.early {
		if e.Kind == history.KindReport {
			term := "-"
			if e.Term != nil {
				term = fmt.Sprint(*e.Term)
			}
			value := e.Value
			if e.Detail == history.LeaderUnknown {
				value = "unknown"
			}
			out = append(out, fmt.Sprintf("%s %s %s", e.Node, value, term))
		}
	}
	return out
}

// What a reading means, row by row (docs/servers.md, "What a reading
// means"): a reading says what it says, and nothing is taken from
// another reading unless its pattern says so. Lines "unknown" and
// "pause"/"resume" stand for a poll's round that had no answer and for
// the host's pause.
func TestWhatAReadingMeans(t *testing.T) {
	for _, tt := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"a leader with a term claims it",
			[]string{"n1: leader 1"}, "n1 n1 1"},
		{"a leader without a term claims, with no term",
			[]string{"n1: is master"}, "n1 n1 -"},
		{"a follower naming a leader follows it, in its own term",
			[]string{"n1: leader 1", "n2: follows n1 at term 1"}, "n1 n1 1; n2 n1 1"},
		{"a follower naming no leader believes in no known leader",
			[]string{"n1: leader 1", "n2: follows n1 at term 1", "n2: following at term 1"}, "n1 n1 1; n2 n1 1; n2  1"},
		{"a leader that then follows naming no leader steps down, not a claimant of its own term",
			[]string{"n1: leader 1", "n1: following at term 1", "n2: leader 2"}, "n1 n1 1; n1  1; n2 n2 2"},
		{"role none believes in no leader",
			[]string{"n1: leader 1", "n1: stopped"}, "n1 n1 1; n1  -"},
		{"a reading with no role says nothing",
			[]string{"n1: leader 1", "n2: follows n1 at term 1", "n2: term 4", "n3: leader 4"}, "n1 n1 1; n2 n1 1; n3 n3 4"},
		{"a master takes no term from an earlier reading",
			[]string{"n2: follows n1 at term 0", "n2: epoch 0 master n1", "n2: is master", "n2: epoch 1 master n2"}, "n2 n1 0; n2 n2 -"},
		{"inherit_term: a leader without a term takes its node's last stated term",
			[]string{"n2: term 3", "n2: inheriting master"}, "n2 n2 3"},
		{"inherit_leader: a follower naming no leader follows the other claimant of its term",
			[]string{"n1: leader 2", "n2: inheriting follower at term 2"}, "n1 n1 2; n2 n1 2"},
		{"inherit_leader never follows itself",
			[]string{"n1: leader 1", "n1: inheriting follower at term 1"}, "n1 n1 1; n1  1"},
		{"inherit_leader follows nobody when the claimant has stepped down",
			[]string{"n1: leader 1", "n1: stopped", "n2: inheriting follower at term 1"}, "n1 n1 1; n1  -"},
		{"a leader named by a name not yet known is held until it is",
			[]string{"n2: follows n9 at term 1", "n1: n9 is my name", "n1: leader 1"}, "n2 n1 1; n1 n1 1"},
		{"two leaders in one term are both named as claimed",
			[]string{"n1: leader 2", "n3: follows n1 at term 2", "n3: leader 2"}, "n1 n1 2; n3 n1 2; n3 n3 2"},
		{"a poll with no answer makes a claim unknown",
			[]string{"n1: leader 1", "n1: unknown"}, "n1 n1 1; n1 unknown -"},
		{"a poll with no answer while the host is paused leaves its belief as it was",
			[]string{"n1: leader 1", "n1: pause", "n1: unknown", "n1: resume", "n1: leader 1"}, "n1 n1 1"},
		{"a belief known again after an unknown one is recorded again",
			[]string{"n1: leader 1", "n1: unknown", "n1: leader 1"}, "n1 n1 1; n1 unknown -; n1 n1 1"},
		{"before a first belief, an unknown one is not recorded",
			[]string{"n1: unknown", "n1: leader 1"}, "n1 n1 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(feed(t, tt.lines...), "; "); got != tt.want {
				t.Errorf("reports %q, want %q", got, tt.want)
			}
		})
	}
}
