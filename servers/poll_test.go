package servers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coupharness/coup/verdict"
)

// Every question of every poll is counted per node, by how it ended: a
// command that answers is answered (its timeout is long, so that a slow
// fork does not matter); a file that is not there fails at once; a TCP
// port that accepts and says nothing (the test program's peer port) is
// unanswered within the poll timeout, however long it waits; and a node
// that is down has its rounds skipped. The counts reach results.json's stats,
// the console's summary and the report.
func TestPollsAreCounted(t *testing.T) {
	sc := peerScenarioWith(t, `poll_every = "50ms"
poll_timeout = "20ms"

[[server.poll]]
command = ["echo", "{{.ID}} is here"]
timeout = "10s"
  [[server.poll.match]]
  match = 'nothing to learn'

[[server.poll]]
file = "{{.Dir}}/no-such-file"
  [[server.poll.match]]
  match = 'nothing to learn'

[[server.poll]]
tcp = "{{.Addr.peer}}"
  [[server.poll.match]]
  match = 'nothing to learn'
`, `[checks]
run = ["two-leaders"]

[[faults]]
kind = "crash"
target = "n3"
at = "300ms"
`)
	if sc.Server.Poll[2].Timeout.D != sc.Server.PollTimeout.D {
		t.Fatalf("a poll's timeout %s, want the server's poll_timeout %s", sc.Server.Poll[2].Timeout.D, sc.Server.PollTimeout.D)
	}
	store := t.TempDir()
	res, dir, err := Run(context.Background(), sc, Options{Store: store})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %v", err, res)
	}
	polls := res.Stats.Polls
	for _, n := range []string{"n1", "n2"} {
		p := polls[n]
		if p.Answered == 0 || p.Unanswered != p.Answered || p.Failed != p.Answered || p.Skipped != 0 {
			t.Errorf("%s's polls %+v: want as many unanswered and failed as answered (each round asks all three), and some, none skipped", n, p)
		}
	}
	if p := polls["n3"]; p.Skipped == 0 || p.Answered == 0 {
		t.Errorf("n3's polls %+v: want rounds answered before its crash, and skipped after", p)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Stats struct {
			Polls map[string]verdict.PollStats `json:"polls"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.Stats.Polls["n1"] != polls["n1"] {
		t.Errorf("results.json's stats.polls %+v (%v), want %+v for n1", back.Stats.Polls, err, polls["n1"])
	}
	if s := res.Summary(); !strings.Contains(s, "  polls: ") || !strings.Contains(s, "unanswered within the timeout") {
		t.Errorf("the summary has no polls line:\n%s", s)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "polls of n3: answered, unanswered within the timeout, failed, rounds skipped (down)") {
		t.Error("the report does not count n3's polls")
	}
}
