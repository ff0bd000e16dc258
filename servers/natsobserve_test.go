package servers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/coupharness/coup/scenario"
)

// Hand-made answers of NATS's monitoring port, in the shapes its servers
// give: /jsz?streams=true&raft=true of 2.9.10 (no raft_group, no /raftz)
// and of 2.15 (with raft_group), and /raftz?acc=$G&group=G.
const (
	jszNoStream = `{"server_id":"NAP","now":"2026-12-01T22:31:02Z","streams":0,
  "meta_cluster":{"name":"coup","leader":"n3","peer":"BXScrY9i","cluster_size":3},
  "account_details":[{"name":"$G","id":"$G","memory":0}]}`
	jszFollower = `{"server_id":"NAP","streams":1,
  "meta_cluster":{"name":"coup","leader":"n3","peer":"BXScrY9i","cluster_size":3},
  "account_details":[{"name":"$G","id":"$G","stream_detail":[
    {"name":"other","cluster":{"name":"coup","leader":"n1"}},
    {"name":"coup","created":"2026-12-01T22:31:03Z","cluster":{"name":"coup","raft_group":"S-R3F-abc","leader":"n2",
      "replicas":[{"name":"n1","current":true,"peer":"p1"},{"name":"n3","current":true,"peer":"p3"}]},
     "state":{"messages":4}}]}]}`
	jszLeader = `{"meta_cluster":{"name":"coup","leader":"n3"},
  "account_details":[{"name":"$G","id":"$G","stream_detail":[{"name":"coup","cluster":{"name":"coup","leader":"n2",
    "replicas":[{"name":"n1","current":true}]},"stream_raft_group":"S-R3F-abc","consumer_raft_groups":[]}]}]}`
	jszNoLeader = `{"meta_cluster":{"name":"coup","cluster_size":3},
  "account_details":[{"name":"$G","id":"$G","stream_detail":[{"name":"coup","cluster":{"name":"coup","raft_group":"S-R3F-abc"}}]}]}`
	jszOld = `{"meta_cluster":{"name":"coup","leader":"n1"},
  "account_details":[{"name":"$G","id":"$G","stream_detail":[{"name":"coup","cluster":{"name":"coup","leader":"n1","replicas":[{"name":"n2"}]}}]}]}`
	raftzFollower = `{"$G":{"S-R3F-abc":{"id":"p1","state":"FOLLOWER","size":3,"leader":"p2","term":7,"voted_for":"p2",
  "peers":{"p2":{"name":"n2","known":true},"p3":{"name":"n3","known":true}}}}}`
	raftzLeader = `{"$G":{"S-R3F-abc":{"id":"p2","state":"LEADER","leader":"p2","term":8,
  "peers":{"p1":{"name":"n1"},"p3":{"name":"n3"}}}}}`
	raftzCandidate = `{"$G":{"S-R3F-abc":{"id":"p1","state":"CANDIDATE","term":9,"peers":{"p2":{"name":"n2"}}}}}`
)

func TestParseJsz(t *testing.T) {
	for _, tt := range []struct {
		name, answer string
		want         natsStreamView
	}{
		{"no stream yet", jszNoStream, natsStreamView{meta: "n3"}},
		{"a follower of n2", jszFollower, natsStreamView{found: true, leader: "n2", group: "S-R3F-abc", account: "$G", meta: "n3"}},
		{"the leader, its group the stream's", jszLeader, natsStreamView{found: true, leader: "n2", group: "S-R3F-abc", account: "$G", meta: "n3"}},
		{"no leader", jszNoLeader, natsStreamView{found: true, group: "S-R3F-abc", account: "$G"}},
		{"2.9.10: no raft group", jszOld, natsStreamView{found: true, leader: "n1", account: "$G", meta: "n1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseJsz([]byte(tt.answer), scenario.NatsStream)
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if _, err := parseJsz([]byte("<html>"), scenario.NatsStream); err == nil {
		t.Error("an answer that is no JSON read without an error")
	}
}

func TestParseRaftz(t *testing.T) {
	for _, tt := range []struct {
		name, answer, group string
		leader              string
		leads, ok           bool
		term                int64
	}{
		{"a follower", raftzFollower, "S-R3F-abc", "n2", false, true, 7},
		{"the leader", raftzLeader, "S-R3F-abc", "", true, true, 8},
		{"a candidate", raftzCandidate, "S-R3F-abc", "", false, true, 9},
		{"another group", raftzFollower, "S-R3F-xyz", "", false, false, 0},
		{"a leader not among its peers", strings.Replace(raftzFollower, `"leader":"p2"`, `"leader":"p9"`, 1), "S-R3F-abc", "", false, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			leader, leads, term, ok, err := parseRaftz([]byte(tt.answer), "$G", tt.group)
			if err != nil || leader != tt.leader || leads != tt.leads || ok != tt.ok || term != tt.term {
				t.Errorf("got leader %q leads %v term %d ok %v (%v); want %q %v %d %v", leader, leads, term, ok, err, tt.leader, tt.leads, tt.term, tt.ok)
			}
		})
	}
}

// describeReading is a reading as a test compares it.
func describeReading(rd *reading) string {
	term := "-"
	if rd.term != nil {
		term = fmt.Sprint(*rd.term)
	}
	return fmt.Sprintf("role=%s leader=%s term=%s", rd.role, rd.leader, term)
}

// The reader of one server's loop, on hand-made answers: /raftz's term,
// state and leader stand for /jsz's where the server answers it; a
// server whose /raftz answered 404 before it ever answered (2.9.10) is
// not asked again, and its readings have no term; a server that answered
// it once is asked again after a 404 (a group it does not know yet); a
// change of the meta leader is logged.
func TestNatsReader(t *testing.T) {
	const jsz = "http://127.0.1.5:8222/jsz?streams=true&raft=true"
	type step struct {
		jsz, raftz string // "" for raftz: 404
		want       string
	}
	for _, tt := range []struct {
		name       string
		steps      []step
		raftzAsked int
		logged     []string
	}{
		{"2.15", []step{
			{jszFollower, raftzFollower, "role=follower leader=n2 term=7"},
			{jszLeader, raftzLeader, "role=leader leader=n1 term=8"},
			{jszNoLeader, raftzCandidate, "role=none leader= term=9"},
			{jszFollower, "", "role=follower leader=n2 term=-"},
			{jszFollower, raftzFollower, "role=follower leader=n2 term=7"},
		}, 5, []string{"n1: JetStream's meta leader is n3", "n1: JetStream has no meta leader", "n1: JetStream's meta leader is n3"}},
		{"2.9.10", []step{
			{jszNoStream, "", "role=none leader= term=-"},
			{jszOld, "", "role=follower leader=n1 term=-"},
			{jszFollower, "", "role=follower leader=n2 term=-"},
			{jszFollower, raftzFollower, "role=follower leader=n2 term=-"},
		}, 1, []string{"n1: JetStream's meta leader is n3", "n1: JetStream's meta leader is n1", "n1: JetStream's meta leader is n3"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logged []string
			nr := &natsReader{node: "n1", logf: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }}
			asked := 0
			for i, s := range tt.steps {
				ask := func(url string) ([]byte, error) {
					switch {
					case url == jsz:
						return []byte(s.jsz), nil
					case url == "http://127.0.1.5:8222/raftz?acc=%24G&group=S-R3F-abc":
						asked++
						if s.raftz == "" {
							return nil, errors.New(url + ": 404 Not Found")
						}
						return []byte(s.raftz), nil
					}
					return nil, fmt.Errorf("asked %s", url)
				}
				rd := &reading{}
				if err := nr.read(jsz, ask, rd); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got := describeReading(rd); got != s.want {
					t.Errorf("step %d: %s, want %s", i, got, s.want)
				}
			}
			if asked != tt.raftzAsked {
				t.Errorf("/raftz asked %d times, want %d", asked, tt.raftzAsked)
			}
			if strings.Join(logged, "; ") != strings.Join(tt.logged, "; ") {
				t.Errorf("logged %q, want %q", logged, tt.logged)
			}
		})
	}
}
