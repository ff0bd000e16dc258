package servers

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// stepDownScenario is three servers that are shell scripts: n1 says it
// leads term 1 and, at 300ms, that it follows in term 1 naming no
// leader; n2 and n3 follow n1, and from 800ms n2 leads term 2 (n3
// follows it). rest is appended ([server] keys first, then the rest).
func stepDownScenario(t *testing.T, server, rest string) *scenario.Scenario {
	t.Helper()
	if !strings.Contains(server, "ready") {
		server += "\nready = { command = [\"true\"] }"
	}
	src := `nodes = 3
duration = "1500ms"
recovery = "300ms"

[server]
command = ["sh", "-c", '''
case {{.ID}} in
n1) echo "n1 leads term 1"; sleep 0.3; echo "n1 follows nobody in term 1" ;;
n2) echo "n2 follows n1 in term 1"; sleep 0.8; echo "n2 leads term 2" ;;
n3) echo "n3 follows n1 in term 1"; sleep 0.8; echo "n3 follows n2 in term 2" ;;
esac
exec sleep 30''']
start_timeout = "5s"
ports = ["peer"]
peer = ["peer"]
` + server + `

[[server.log]]
match = '^(?P<self>n[0-9]) leads term (?P<term>[0-9]+)'
role = "leader"

[[server.log]]
match = '^n[0-9] follows (?P<leader>n[0-9]) in term (?P<term>[0-9]+)'
role = "follower"

[[server.log]]
match = '^n[0-9] follows nobody in term (?P<term>[0-9]+)'
role = "follower"

[checks]
run = ["two-leaders", "one-leader-per-term"]
` + rest
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "stepdown.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// runHistory runs sc and reads its history back.
func runHistory(t *testing.T, sc *scenario.Scenario) *history.History {
	t.Helper()
	h, _ := runHistoryResult(t, sc)
	return h
}

// runHistoryResult runs sc and returns its history and its result.
func runHistoryResult(t *testing.T, sc *scenario.Scenario) (*history.History, *verdict.Results) {
	t.Helper()
	return runWith(t, sc, Options{Store: t.TempDir()})
}

// runWith runs sc with opts, fails the test when it did not start or
// its harness.log is out of time order, and returns its history and its
// result.
func runWith(t *testing.T, sc *scenario.Scenario, opts Options) (*history.History, *verdict.Results) {
	t.Helper()
	res, dir, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.NotStarted() {
		t.Fatalf("not started: %s", res.Error)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	inTimeOrder(t, filepath.Join(dir, "harness.log"))
	return h, res
}

// inTimeOrder fails the test when a line of harness.log is stamped
// before the line above it (lines before the run's zero, "start+…",
// come first, on their own clock).
func inTimeOrder(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stamp := regexp.MustCompile(`^\s*(start\+)?([0-9.]+)s `)
	prev, prevLine := math.Inf(-1), ""
	for _, l := range strings.Split(string(b), "\n") {
		m := stamp.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		at, _ := strconv.ParseFloat(m[2], 64)
		if m[1] != "" {
			at -= 1e9 // before the zero
		}
		if at < prev {
			t.Errorf("harness.log is not in time order:\n%s\n%s", prevLine, l)
		}
		prev, prevLine = max(prev, at), l
	}
}

// A follower that names no leader believes in no known leader: n1's step
// down in term 1 ends its claim there, so n2's claim of term 2 half a
// second later overlaps nothing, and two-leaders holds. The history
// shows the step-down as a report of no leader, with its log line.
func TestAFollowerNamingNoLeaderEndsItsClaim(t *testing.T) {
	h := runHistory(t, stepDownScenario(t, "", ""))
	var down, claim2 *history.Event
	for e := range h.All() {
		if e.Kind != history.KindReport || e.What != history.ReportLeader {
			continue
		}
		if e.Node == "n1" && e.Value == "" && down == nil {
			down = e
		}
		if e.Node == "n2" && e.Value == "n2" {
			claim2 = e
		}
	}
	if down == nil {
		t.Fatalf("no report of n1 believing in no leader; reports:\n%s", reports(h))
	}
	if down.Term == nil || *down.Term != 1 || len(down.Evidence) != 1 || down.Evidence[0].Text != "n1 follows nobody in term 1" ||
		down.Evidence[0].From != "n1.log" || down.Evidence[0].Line < 2 {
		t.Errorf("n1's step-down %+v (evidence %+v), want term 1 and its log line as evidence", down, down.Evidence)
	}
	if claim2 == nil || claim2.Time <= down.Time || time.Duration(claim2.Time-down.Time) < 200*time.Millisecond {
		t.Fatalf("n2's claim %+v, n1's step-down at %v: want the claim about half a second later", claim2, down.Duration())
	}
	if r := check(t, h, "two-leaders"); r.Valid != checks.True {
		t.Errorf("two-leaders %v (%s), want true: n1 had stepped down; reports:\n%s", r.Valid, r.Explanation, reports(h))
	}
	for e := range h.All() {
		if e.Kind == history.KindReport && e.What == history.ReportLeader &&
			(len(e.Evidence) != 1 || e.Evidence[0].From != e.Node+".log" || e.Evidence[0].Line < 1 || !strings.HasPrefix(e.Evidence[0].Text, e.Node+" ")) {
			t.Errorf("a report read from a log without its line as evidence: %+v (evidence %+v)", e, e.Evidence)
		}
	}
}

// The same cluster read by polls: each node's script writes what it
// believes to a file, and n1's file goes away at 300ms (a poll that
// fails). Its belief is then unknown, which is no claim: two-leaders
// holds, and the claim cut short is counted.
func TestAFailedPollIsNoClaim(t *testing.T) {
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "polled.toml"), `nodes = 3
duration = "1500ms"
recovery = "300ms"

[server]
command = ["sh", "-c", '''
cd {{.Dir}}
case {{.ID}} in
n1) echo "leader 1" > role; sleep 0.3; rm role ;;
n2) echo "follower n1 1" > role; sleep 0.8; echo "leader 2" > role ;;
n3) echo "follower n1 1" > role; sleep 0.8; echo "follower n2 2" > role ;;
esac
exec sleep 30''']
start_timeout = "5s"
ports = ["peer"]
peer = ["peer"]
ready = { command = ["true"] }
poll_every = "50ms"

[[server.poll]]
file = "{{.Dir}}/role"
  [[server.poll.match]]
  match = '^leader (?P<term>[0-9]+)'
  role = "leader"
  [[server.poll.match]]
  match = '^follower (?P<leader>n[0-9]) (?P<term>[0-9]+)'
  role = "follower"

[checks]
run = ["two-leaders"]
`)
	if err != nil {
		t.Fatal(err)
	}
	h, res := runHistoryResult(t, sc)
	if p := res.Stats.Polls["n1"]; p.Unknown != 1 {
		t.Errorf("results' polls of n1 %+v, want 1 belief made unknown", p)
	}
	var unknown *history.Event
	for e := range h.All() {
		if e.Kind == history.KindReport && e.Node == "n1" && e.Detail == history.LeaderUnknown {
			unknown = e
			break
		}
	}
	if unknown == nil || unknown.Value != "" || len(unknown.Evidence) == 0 || !strings.Contains(unknown.Evidence[0].Text, "no answer") {
		t.Fatalf("n1's unknown belief %+v, want a report of no leader whose evidence says the poll had no answer; reports:\n%s", unknown, reports(h))
	}
	if r := check(t, h, "two-leaders"); r.Valid != checks.True {
		t.Errorf("two-leaders %v (%s), want true: n1's poll had failed; reports:\n%s", r.Valid, r.Explanation, reports(h))
	}
	if n := checks.ClaimsCutShort(h); n != 1 {
		t.Errorf("%d claims cut short by an unknown belief, want 1", n)
	}
	for e := range h.All() {
		if e.Kind == history.KindReport && e.Detail != history.LeaderUnknown && e.Value != "" && len(e.Evidence) == 0 {
			t.Errorf("a polled report without its evidence: %+v", e)
		}
	}
}

// A restarted node's readings belong to its new incarnation: its start
// is in the history before any of them, though it is ready only later.
func TestAReadingFollowsItsProcessStart(t *testing.T) {
	sc := stepDownScenario(t, `ready = { command = ["sleep", "0.3"] }`, `
[[faults]]
kind = "crash"
target = "n3"
at = "100ms"
for = "100ms"
`)
	h := runHistory(t, sc)
	starts, down := 0, false
	for e := range h.All() {
		if e.Node != "n3" {
			continue
		}
		if e.Kind == history.KindProcess && (e.What == history.ProcCrash || e.What == history.ProcStop) {
			down = true // between its crash and its next start
		}
		if e.Kind == history.KindProcess && e.What == history.ProcStart {
			starts, down = starts+1, false
		}
		if e.Kind == history.KindReport && down {
			t.Errorf("n3's reading %+v is recorded before its process's start", e)
		}
	}
	if starts != 2 {
		t.Fatalf("n3 started %d times, want 2 (once more after its crash); history:\n%s", starts, reports(h))
	}
}

// reports lists a history's process and leader events, for a failure's
// message.
func reports(h *history.History) string {
	var b strings.Builder
	for e := range h.All() {
		if e.Kind == history.KindReport || e.Kind == history.KindProcess || e.Kind == history.KindNemesis {
			b.WriteString("  " + e.Duration().String() + " " + string(e.Kind) + " " + e.Node + " " + e.What + " " + e.Value + " " + e.Detail + "\n")
		}
	}
	return b.String()
}

// check runs one check on h.
func check(t *testing.T, h *history.History, name string) checks.Result {
	t.Helper()
	c, ok := checks.Lookup(name)
	if !ok {
		t.Fatalf("no check %q", name)
	}
	return c.Run(h)
}

// A run on the TCP proxy network (what a user gets where no namespace
// can be had) says in one line what it cannot fault, on the console, in
// results.json and on the page.
func TestTheProxyNetworkSaysWhatIsLost(t *testing.T) {
	sc := peerScenario(t, "")
	sc.Server.Network = scenario.NetworkProxy
	var console strings.Builder
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir(), Progress: &console})
	if err != nil {
		t.Fatal(err)
	}
	if res.NotStarted() {
		t.Fatalf("not started: %s", res.Error)
	}
	if !strings.Contains(console.String(), verdict.ProxyLoses) {
		t.Errorf("the console does not say what the proxy cannot fault:\n%s", console.String())
	}
	if !slices.Contains(res.Warnings, verdict.ProxyLoses) {
		t.Errorf("results' warnings %q lack what the proxy cannot fault", res.Warnings)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "only TCP between hosts is faulted; UDP and other protocols pass untouched") {
		t.Error("the report does not say what the proxy cannot fault")
	}
}
