package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/scenario"
)

// The zoo's figure is the geometric mean of the bugs' ratios of medians,
// a missed campaign counted as its budget.
func TestZooRatio(t *testing.T) {
	cases := []ZooCase{
		{Scenario: "zoo-a", Runs: [2][]int{{100, 1000, 10}, {1, 10, 5}}},                       // 100 against 5
		{Scenario: "zoo-b", Runs: [2][]int{{4, 6}, {20, 20}}},                                  // 5 against 20
		{Scenario: "zoo-c", Runs: [2][]int{{3000, 3000, 7}, {30, 2, 1}}, Missed: [2]int{2, 0}}, // 3000 against 2
	}
	for i, want := range []float64{0.05, 4, 2.0 / 3000} {
		if got := cases[i].Ratio(); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: ratio %g, want %g", cases[i].Scenario, got, want)
		}
	}
	want := math.Cbrt(0.05 * 4 * 2.0 / 3000)
	if got := ZooRatio(cases); math.Abs(got-want) > 1e-12 {
		t.Fatalf("zoo ratio %g, want %g", got, want)
	}
	if got := ZooRatio(nil); !math.IsNaN(got) {
		t.Fatalf("zoo ratio of no bug %g, want NaN", got)
	}
}

// The table names each bug, marks what was missed, and says whether
// guided met its target and found every bug.
func TestPrintExplore(t *testing.T) {
	r := &Results{Config: Config{ZooDir: "scenarios/zoo"}, Explore: []ZooCase{
		{Bug: ZooBug{Budget: 3000}, Scenario: "zoo-a", Driver: "simulator", Runs: [2][]int{{3000, 3000, 900}, {8, 30, 12}},
			Wall: [2][]time.Duration{{time.Second, time.Second, time.Second}, {time.Millisecond, time.Millisecond, time.Millisecond}}, Missed: [2]int{2, 0}},
		{Bug: ZooBug{Budget: 6}, Scenario: "zoo-b", Driver: "servers", Runs: [2][]int{{2, 3, 2}, {6, 6, 3}},
			Wall: [2][]time.Duration{{9 * time.Second, 9 * time.Second, 9 * time.Second}, {time.Minute, time.Minute, time.Minute}}, Missed: [2]int{0, 1}},
	}}
	var b bytes.Buffer
	r.printExplore(&b)
	out := b.String()
	for _, want := range []string{
		"a  ", "3000 (2 missed)", "6 (1 missed)",
		"geometric mean of 2 bugs' ratios): 0.11  (target ≤ 0.33 ✓)",
		"guided found every bug within its budget in every campaign: no ✗",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// --zoo names bugs of the zoo by file, ".toml" optional: each once, in
// the order named, with the zoo's campaigns and budget; a file that is
// not the zoo's is refused by name.
func TestZooNamed(t *testing.T) {
	bugs, err := ZooNamed([]string{"bully-replace.toml", " etcd-lock-paused-holder", "bully-replace"})
	if err != nil {
		t.Fatal(err)
	}
	if len(bugs) != 2 || bugs[0] != Zoo[0] || bugs[1].File != "etcd-lock-paused-holder.toml" || bugs[1].Budget == 0 {
		t.Fatalf("bugs %+v, want bully-replace and etcd-lock-paused-holder as the zoo has them", bugs)
	}
	for _, bad := range [][]string{{"bully-replace", "no-such-bug.toml"}, {""}, {}} {
		if _, err := ZooNamed(bad); err == nil {
			t.Errorf("%q: no error", bad)
		} else if len(bad) == 2 && !strings.Contains(err.Error(), `"no-such-bug.toml"`) {
			t.Errorf("%q: %v, want the file named", bad, err)
		}
	}
}

// failingRunner's every run fails to start.
type failingRunner struct{}

func (failingRunner) Run(context.Context, *scenario.Scenario) (*explore.Run, error) {
	return nil, errors.New("the servers did not start")
}
func (failingRunner) Exact() bool  { return false }
func (failingRunner) Name() string { return "servers" }

// A campaign none of whose runs had a verdict is an error that says why,
// not a bug missed within its budget.
func TestFirstViolationNeedsAVerdict(t *testing.T) {
	sc, err := scenario.Parse("bully.toml", "algorithm = \"bully\"\nnodes = 3\nduration = \"1s\"\n")
	if err != nil {
		t.Fatal(err)
	}
	_, _, found, err := firstViolation(context.Background(), sc, failingRunner{}, explore.Random, 1, 3)
	if err == nil || found || !strings.Contains(err.Error(), "the servers did not start") {
		t.Fatalf("found %v, error %v; want an error naming why no run had a verdict", found, err)
	}
}

// A campaign's store leaves room, under a temporary folder, for a run's
// folder and PostgreSQL's socket in a host's: a Unix socket's path holds
// 107 bytes (Patroni's runs did not start under a longer one).
func TestCampaignStoreFitsASocket(t *testing.T) {
	for _, strat := range exploreStrategies {
		store := campaignStore("/tmp/coup-bench-4294967295", strat, 5)
		socket := filepath.Join(store, "zoo-patroni-primary-isolated", "20261202T011613.643Z", "n3", ".s.PGSQL.20002")
		if len(socket) > 107 {
			t.Errorf("%s: a socket's path is %d bytes, more than 107: %s", strat, len(socket), socket)
		}
	}
}
