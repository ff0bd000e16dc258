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
	for _, l := range lines {
		node, line, _ := strings.Cut(l, ": ")
		r.obs.line(node, sc.Server.Log, []byte(line))
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

// A reading that says its node leads names that node, in its own term,
// whatever the node's earlier readings named; a follower's reading in
// a new term takes no leader from another term.
func TestReadingsNameTheirOwnNode(t *testing.T) {
	for _, tt := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"a promoted replica's leader reading names itself, with its term",
			[]string{"n1: leader 1", "n2: follows n1 at term 1", "n2: leader 2"},
			"n1 n1 1; n2 n1 1; n2 n2 2"},
		{"a follower in a new term waits for that term's claim",
			[]string{"n1: leader 1", "n2: follows n1 at term 1", "n2: following at term 3", "n3: leader 3"},
			"n1 n1 1; n2 n1 1; n3 n3 3; n2 n3 3"},
		{"a follower in its leader's term keeps the name",
			[]string{"n1: leader 1", "n2: follows n1 at term 1", "n2: following at term 1"},
			"n1 n1 1; n2 n1 1"},
		{"a new term alone does not carry the old leader's name",
			[]string{"n1: leader 1", "n2: follows n1 at term 1", "n2: term 4", "n3: leader 4"},
			"n1 n1 1; n2 n1 1; n3 n3 4; n2 n3 4"},
		{"a master without terms takes no term that names another master",
			[]string{"n2: follows n1 at term 0", "n2: epoch 0 master n1", "n2: is master", "n2: epoch 1 master n2"},
			"n2 n1 0; n2 n2 -; n2 n2 1"},
		{"two leaders in one term are both named as claimed",
			[]string{"n1: leader 2", "n3: follows n1 at term 2", "n3: leader 2"},
			"n1 n1 2; n3 n1 2; n3 n3 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(feed(t, tt.lines...), "; "); got != tt.want {
				t.Errorf("reports %q, want %q", got, tt.want)
			}
		})
	}
}
