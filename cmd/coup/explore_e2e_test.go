package main

// End-to-end tests of coup explore: campaigns on the simulator (the same
// seed gives the same campaign; shards merge into it) and on node
// processes (a signal ends a campaign, leaving every file written and no
// process behind).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/history"
)

// raceToExplore is the bully race of scenarios/sim with its faults taken
// out and a vocabulary in their place.
const raceToExplore = `name = "race"
algorithm = "bully"
nodes = 5
duration = "1s"
recovery = "500ms"

[params]
t_trans = "3ms"
t_process = "1ms"
probe_every = "20ms"

[network]
latency = "2ms"
jitter = "1ms"

[workload]
kind = "election"
initiators = ["all"]
at = "300ms"

[explore]
kinds = ["replace"]
`

var (
	wallField = regexp.MustCompile(`,"wall_ns":\d+|,"dir":"[^"]*"|,"build":"[^"]*"`)
	keptLine  = regexp.MustCompile(`(?m)^\s*(kept|rerun): .*\n`)
)

// On the simulator, a guided campaign finds the race, keeps the failing
// run with a scenario that fails the same way again, and the same seed
// gives the same campaign.
func TestExploreOnTheSimulator(t *testing.T) {
	dir := t.TempDir()
	file := writeScenario(t, dir, "race.toml", raceToExplore)
	first := coupIn(t, dir, "explore", file, "--runs", "120", "--seed", "3", "--out", "a.jsonl", "--junit", "a.xml")
	if first.code != 1 {
		t.Fatalf("exit %d, want 1 (the race found)\n%s%s", first.code, first.stdout, first.stderr)
	}
	if !strings.Contains(first.stdout, "two-leaders: nodes both believed they were the leader") {
		t.Errorf("no two-leaders failure:\n%s", first.stdout)
	}
	f, err := explore.ReadCampaign(filepath.Join(dir, "a.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var failing *explore.RunResult
	for i := range f.Runs {
		if f.Runs[i].Failed() {
			failing = &f.Runs[i]
			break
		}
	}
	if !f.Ended || len(f.Runs) != 120 || failing == nil || failing.Dir == "" {
		t.Fatalf("ended %v, %d runs, first failing %+v", f.Ended, len(f.Runs), failing)
	}
	// The kept run is whole, and its scenario fails the same way again.
	for _, name := range []string{"history.jsonl", "results.json", "report.html", explore.ScenarioFile} {
		if _, err := os.Stat(filepath.Join(dir, failing.Dir, name)); err != nil {
			t.Error(err)
		}
	}
	// Passing runs' folders are not kept.
	folders, _ := filepath.Glob(filepath.Join(first.store, "race", "2*"))
	failures := 0
	for _, r := range f.Runs {
		if r.Failed() {
			failures++
		}
	}
	if len(folders) != failures {
		t.Errorf("%d run folders kept for %d failing runs", len(folders), failures)
	}
	again := coupIn(t, dir, "sim", filepath.Join(failing.Dir, explore.ScenarioFile))
	if again.code != 1 || !strings.Contains(again.stdout, "signature: "+failing.Signature) {
		t.Errorf("the kept scenario: exit %d\n%s", again.code, again.stdout)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.xml")); err != nil || !strings.Contains(string(b), `<failure message="two-leaders: nodes both believed`) {
		t.Errorf("JUnit file: %v\n%s", err, b)
	}
	corpus, _ := filepath.Glob(filepath.Join(first.store, "race", "corpus", "*.toml"))
	if len(corpus) == 0 {
		t.Error("no corpus on disk")
	}

	second := coupIn(t, dir, "explore", file, "--runs", "120", "--seed", "3", "--out", "b.jsonl")
	a, _ := os.ReadFile(filepath.Join(dir, "a.jsonl"))
	b, _ := os.ReadFile(filepath.Join(dir, "b.jsonl"))
	if wallField.ReplaceAllString(string(a), "") != wallField.ReplaceAllString(string(b), "") {
		t.Error("two campaigns of the same seed differ")
	}
	if second.code != first.code {
		t.Errorf("second campaign: exit %d", second.code)
	}
	// And so does a random one.
	var randoms []string
	for _, out := range []string{"r1.jsonl", "r2.jsonl"} {
		coupIn(t, dir, "explore", file, "--runs", "60", "--seed", "3", "--strategy", "random", "--quiet", "--out", out)
		b, err := os.ReadFile(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		randoms = append(randoms, wallField.ReplaceAllString(string(b), ""))
	}
	if randoms[0] != randoms[1] || strings.Count(randoms[0], `"kind":"run"`) != 60 {
		t.Error("two random campaigns of the same seed differ")
	}
}

// Merged shards give the failures of the unsharded campaign over the same
// seeds, each kind once.
func TestExploreShardsMerge(t *testing.T) {
	dir := t.TempDir()
	file := writeScenario(t, dir, "race.toml", raceToExplore)
	whole := coupIn(t, dir, "explore", file, "--runs", "90", "--lanes", "3", "--seed", "5", "--quiet", "--out", "whole.jsonl")
	if whole.code != 1 {
		t.Fatalf("the whole campaign: exit %d, want 1\n%s", whole.code, whole.stdout)
	}
	var shards []string
	for _, k := range []string{"1", "2", "3"} {
		out := "shard-" + k + ".jsonl"
		r := coupIn(t, dir, "explore", file, "--runs", "90", "--seed", "5", "--shard", k+"/3", "--quiet", "--out", out)
		if r.code != 0 && r.code != 1 {
			t.Fatalf("shard %s: exit %d\n%s%s", k, r.code, r.stdout, r.stderr)
		}
		shards = append(shards, out)
	}
	merged := coupIn(t, dir, append([]string{"explore", "merge"}, shards...)...)
	self := coupIn(t, dir, "explore", "merge", "whole.jsonl")
	if merged.code != 1 || self.code != 1 {
		t.Fatalf("merge: exit %d and %d\n%s", merged.code, self.code, merged.stdout)
	}
	// The whole campaign's file says it had 3 lanes, so does the merge.
	if keptLine.ReplaceAllString(merged.stdout, "") != keptLine.ReplaceAllString(strings.Replace(self.stdout, "merged 1 files", "merged 3 files", 1), "") {
		t.Errorf("merged shards:\n%s\nthe whole campaign:\n%s", merged.stdout, self.stdout)
	}
	if strings.Count(merged.stdout, "first at run") < 1 {
		t.Errorf("no failure in the merge:\n%s", merged.stdout)
	}
	// A shard missing is said, and is not as good as the whole.
	part := coupIn(t, dir, "explore", "merge", shards[0], shards[2])
	if !strings.Contains(part.stdout, "MISSING lanes 1 of 3") {
		t.Errorf("a shard missing:\n%s", part.stdout)
	}
}

// A node-process scenario, explored: SIGINT or SIGTERM in the middle of
// a run ends the campaign at once, the run under way is stopped, no
// process survives, and the results file, its end line, the JUnit file
// and the interrupted run's folder are written.
func TestExploreSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			file := writeScenario(t, dir, "bully.toml", `name = "bully"
algorithm = "bully"
nodes = 3
duration = "1s"
recovery = "300ms"

[explore]
kinds = ["pause", "partition"]
`)
			tag := tagged(t)
			// Once a run is judged (its progress line) and the next one's
			// nodes are up: coup, its reaper and three nodes.
			f, out := interruptCampaign(t, dir, tag, sig, func(out string) bool {
				return strings.Contains(out, "[1/10 runs]") && len(survivors(tag)) == 5
			}, file, "--driver", "processes", "--runs", "10", "--store", "store", "--out", "out.jsonl", "--junit", "junit.xml")
			var stopped *explore.RunResult
			for i := range f.Runs {
				if f.Runs[i].Interrupted {
					stopped = &f.Runs[i]
				}
			}
			if stopped == nil || stopped.Dir == "" {
				t.Fatalf("no interrupted run kept: %+v", f.Runs)
			}
			h, err := history.ReadFile(filepath.Join(dir, stopped.Dir, "history.jsonl"))
			if err != nil || h.Ended {
				t.Errorf("the interrupted run's history: %v, ended %v", err, h != nil && h.Ended)
			}
			b, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
			if err != nil || !strings.Contains(string(b), "<testsuites") {
				t.Errorf("JUnit file: %v", err)
			}
			if !strings.Contains(out, "interrupted") {
				t.Errorf("no word of the interruption:\n%s", out)
			}
		})
	}
}

// Bad input is an input error, with the file and line of a bad
// vocabulary.
func TestExploreBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := writeScenario(t, dir, "bad.toml", strings.Replace(raceToExplore, `kinds = ["replace"]`, `kinds = ["replce"]`, 1))
	r := coupIn(t, dir, "explore", bad)
	if r.code != 2 || !strings.Contains(r.stderr, "bad.toml:22:1: explore.kinds: unknown fault \"replce\" (did you mean \"replace\"?") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	good := writeScenario(t, dir, "race.toml", raceToExplore)
	for _, args := range [][]string{
		{"explore", good, "--strategy", "guidd"},
		{"explore", good, "--driver", "servers"},
		{"explore", good, "--cluster", "episodes"},
		{"explore", good, "--cluster", "fersh"},
		{"explore", good, "--shard", "3/2"},
		{"explore", good, "--shard", "1/4", "--lanes", "2"},
		{"explore"},
		{"explore", "merge", filepath.Join(dir, "race.toml")},
	} {
		if r := coupIn(t, dir, args...); r.code != 2 {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// The results file's lines are what docs/explore.md says they are.
func TestExploreResultsFields(t *testing.T) {
	dir := t.TempDir()
	file := writeScenario(t, dir, "race.toml", raceToExplore)
	coupIn(t, dir, "explore", file, "--runs", "5", "--strategy", "random", "--quiet", "--out", "r.jsonl")
	b, err := os.ReadFile(filepath.Join(dir, "r.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var head map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &head); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "file", "sha256", "scenario", "strategy", "driver", "seed", "runs", "lanes", "workers", "shard", "shards", "lane_from", "lane_count", "exact"} {
		if _, ok := head[k]; !ok {
			t.Errorf("the header has no %s: %s", k, lines[0])
		}
	}
	if len(lines) != 7 || !strings.HasPrefix(lines[6], `{"kind":"end","done":5,`) {
		t.Errorf("lines:\n%s", b)
	}
}

// etcdEpisodes is the zoo's etcd scenario with serializable reads,
// shortened: its workload and faults once etcd has elected.
const etcdEpisodes = `name = "zoo-etcd-serializable-reads"
nodes = 3
duration = "3500ms"
recovery = "1s"

[server]
preset = "etcd"
reads = "serializable"

[workload]
kind = "lin-kv"
at = "2500ms"
timeout = "1s"
clients = 4
rate = 50
keys = 1
values = 20

[explore]
max_faults = 1
at = ["2600ms", "3000ms"]
for = ["200ms", "500ms"]

[checks]
run = ["kv-linearizable", "one-leader-per-term"]

[expect]
valid = true
`

// With --cluster episodes, a campaign on real etcd runs its schedules on
// one cluster: every run is kept with a history of its own (its meta
// event first, its end event last), the runs after the first begin with
// what was seen of the cluster before them, no cluster is closed for
// another, and nothing is left running.
func TestExploreEpisodes(t *testing.T) {
	needs(t, "etcd")
	dir := t.TempDir()
	file := writeScenario(t, dir, "etcd.toml", etcdEpisodes)
	r := coupIn(t, dir, "explore", file, "--cluster", "episodes", "--runs", "3", "--strategy", "random", "--seed", "1",
		"--keep-passing", "--out", "out.jsonl", "--store", "store")
	// Exit 3 is a run without a verdict, which the runs' own errors below
	// tell from a run that could not be carried out: on a loaded machine
	// etcd may answer so few of the workload's second of operations that
	// none returned ok after a crash, and kv-linearizable has nothing to
	// judge (8 operations, 4 failed and 4 timed out, seen under two busy
	// loops). What the cluster did is not this test's subject.
	switch r.code {
	case 0, 1:
	case 3:
		t.Logf("a run had no verdict:\n%s", undecided(dir, "out.jsonl"))
	default:
		t.Fatalf("exit %d\n%s%s%s", r.code, r.stdout, r.stderr, undecided(dir, "out.jsonl"))
	}
	if strings.Contains(r.stderr, "episodes:") {
		t.Errorf("a cluster was closed for another:\n%s", r.stderr)
	}
	f, err := explore.ReadCampaign(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 3 {
		t.Fatalf("%d runs, want 3", len(f.Runs))
	}
	for i, run := range f.Runs {
		if run.Dir == "" || run.Error != "" {
			t.Fatalf("run %d: dir %q, error %q", i, run.Dir, run.Error)
		}
		h, err := history.ReadFile(filepath.Join(dir, run.Dir, "history.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var first, last *history.Event
		seenBefore := 0
		n := 0
		for e := range h.All() {
			if n == 0 {
				first = e
			}
			last = e
			n++
			if e.Kind == history.KindReport && e.Detail == "as seen before the episode" {
				seenBefore++
			}
		}
		if first.Kind != history.KindMeta || last.Kind != history.KindEnd {
			t.Errorf("run %d: history from %s to %s, want meta to end", i, first.Kind, last.Kind)
		}
		if (i > 0) != (seenBefore == 3) {
			t.Errorf("run %d: %d reports of what was seen before it, want 3 after the first run, none in it", i, seenBefore)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "store", ".clusters", "*")); len(left) > 0 {
		t.Errorf("cluster folders left: %v", left)
	}
}

// undecided lists, for a failed test's output, the checks of a campaign's
// kept runs that were not true or false, with their explanations.
func undecided(dir, out string) string {
	f, err := explore.ReadCampaign(filepath.Join(dir, out))
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for i, run := range f.Runs {
		raw, err := os.ReadFile(filepath.Join(dir, run.Dir, "results.json"))
		if err != nil {
			continue
		}
		var res struct {
			Checks map[string]struct {
				Valid       any    `json:"valid"`
				Explanation string `json:"explanation"`
			} `json:"checks"`
		}
		if json.Unmarshal(raw, &res) != nil {
			continue
		}
		for name, c := range res.Checks {
			if c.Valid != true && c.Valid != false {
				fmt.Fprintf(&b, "run %d: %s %v: %s\n", i+1, name, c.Valid, c.Explanation)
			}
		}
	}
	return b.String()
}

// With --cluster episodes, SIGTERM while an episode is under way on the
// long-lived cluster ends the campaign: every server of the cluster is
// stopped, no process survives, the cluster's folder is removed and the
// results file ends, interrupted.
func TestExploreEpisodesSignal(t *testing.T) {
	needs(t, "etcd")
	dir := t.TempDir()
	file := writeScenario(t, dir, "etcd.toml", etcdEpisodes)
	tag := tagged(t)
	// once the first episode is judged, the second runs on the same
	// cluster: coup, its reaper and three servers at least
	interruptCampaign(t, dir, tag, syscall.SIGTERM, func(out string) bool {
		return strings.Contains(out, "[1/10 runs]") && len(survivors(tag)) >= 5
	}, file, "--cluster", "episodes", "--runs", "10", "--strategy", "random", "--seed", "1", "--store", "store", "--out", "out.jsonl")
	if left, _ := filepath.Glob(filepath.Join(dir, "store", ".clusters", "*")); len(left) > 0 {
		t.Errorf("cluster folders left: %v", left)
	}
}

// interruptCampaign runs `coup explore args…` in dir, its processes
// tagged, until ready(its output so far) holds, then sends it sig: no
// process may survive, it exits 3 (or 1 if a run failed), and its
// results file (out.jsonl, a campaign of 10 runs) ends interrupted
// after at least one run. It returns the results file and the output.
func interruptCampaign(t *testing.T, dir, tag string, sig syscall.Signal, ready func(out string) bool, args ...string) (*explore.CampaignFile, string) {
	t.Helper()
	cmd := exec.Command(coupBin, append([]string{"explore"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), tag)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !ready(out.String()) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no second run under way:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(sig)
	err := cmd.Wait()
	checkNoSurvivors(t, tag)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 3 && code != 1 {
		t.Errorf("exit %d, want 3 (or 1 if a run failed)\n%s", code, out.String())
	}
	f, err := explore.ReadCampaign(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Ended || !f.End.Interrupted || f.End.Done < 1 || f.End.Done >= 10 {
		t.Errorf("end line %+v (ended %v)", f.End, f.Ended)
	}
	return f, out.String()
}
