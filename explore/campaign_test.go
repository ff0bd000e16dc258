package explore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coupharness/coup/scenario"
)

// campaignFile runs a campaign into a results file and returns the file's
// text and the campaign's result.
func campaignFile(t *testing.T, c Campaign) (string, *CampaignResult) {
	t.Helper()
	var b bytes.Buffer
	c.Results = &b
	if c.Runner == nil {
		c.Runner = &fakeRunner{}
	}
	if c.Scenario == nil {
		c.Scenario = loadFake(t)
	}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), res
}

var wall = regexp.MustCompile(`,"wall_ns":\d+`)

// Each strategy gives the same campaign for the same seed on an exact
// runner: the same schedules, the same verdicts; and another seed gives
// others.
func TestCampaignDeterministic(t *testing.T) {
	for _, st := range Strategies {
		first, res := campaignFile(t, Campaign{Strategy: st, Seed: 7, Runs: 80})
		again, _ := campaignFile(t, Campaign{Strategy: st, Seed: 7, Runs: 80})
		if wall.ReplaceAllString(first, "") != wall.ReplaceAllString(again, "") {
			t.Errorf("%s: two campaigns of seed 7 differ", st)
		}
		if res.Tally.Runs != 80 {
			t.Errorf("%s: %d runs, want 80", st, res.Tally.Runs)
		}
		other, _ := campaignFile(t, Campaign{Strategy: st, Seed: 8, Runs: 80})
		if wall.ReplaceAllString(first, "") == wall.ReplaceAllString(other, "") {
			t.Errorf("%s: seeds 7 and 8 gave the same campaign", st)
		}
		if strings.Count(first, `"kind":"run"`) != 80 || !strings.Contains(first, `{"kind":"end","done":80,`) {
			t.Errorf("%s: results file:\n%s", st, first)
		}
	}
}

// The fake's failure (a pause of the leader begun from 200ms to 260ms)
// is found, and each failing run is counted under its signature.
func TestCampaignFindsTheFailure(t *testing.T) {
	for _, st := range Strategies {
		_, res := campaignFile(t, Campaign{Strategy: st, Seed: 1, Runs: 400})
		groups := res.Tally.Groups()
		if len(groups) != 1 || !strings.HasPrefix(groups[0].Signature, "two-leaders:") {
			t.Fatalf("%s: groups %+v", st, groups)
		}
		g := groups[0]
		if g.Count != res.Tally.Unexpected || g.First.Run != g.Runs[0] || !strings.Contains(g.First.Schedule, "pause leader") {
			t.Errorf("%s: %d failures counted, %d unexpected; first %+v", st, g.Count, res.Tally.Unexpected, g.First)
		}
		if !strings.Contains(g.First.Faults, "[[faults]]\nkind = \"pause\"") {
			t.Errorf("%s: the first failure's faults: %q", st, g.First.Faults)
		}
	}
}

// Merged shards give the signatures, counts and runs of the unsharded
// campaign over the same seeds: lanes split across shards run as they
// run together, for both strategies and with runs under way at once.
func TestShardsMergeLikeTheWhole(t *testing.T) {
	for _, tt := range []struct {
		strategy       string
		lanes, workers int
		shards         int
		runs           int
	}{
		{Random, 4, 1, 4, 150},
		{Guided, 4, 1, 4, 800},
		{Guided, 4, 1, 2, 800},
		{Guided, 3, 2, 3, 600},
	} {
		whole, res := campaignFile(t, Campaign{Strategy: tt.strategy, Seed: 3, Runs: tt.runs, Lanes: tt.lanes, Workers: tt.workers})
		if len(res.Tally.Groups()) == 0 {
			t.Fatalf("%+v: the whole campaign found nothing to compare", tt)
		}
		var files []*CampaignFile
		for k := 1; k <= tt.shards; k++ {
			text, _ := campaignFile(t, Campaign{Strategy: tt.strategy, Seed: 3, Runs: tt.runs, Lanes: tt.lanes, Workers: tt.workers, Shard: k, Shards: tt.shards})
			files = append(files, readText(t, text))
		}
		slices.Reverse(files) // any order
		m, err := MergeCampaigns(files)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.MissingLanes) != 0 || len(m.Incomplete) != 0 {
			t.Errorf("%+v: missing %v, incomplete %v", tt, m.MissingLanes, m.Incomplete)
		}
		if got, want := describe(m.Tally), describe(res.Tally); got != want {
			t.Errorf("%+v: merged\n%s\nwhole\n%s", tt, got, want)
		}
		// The merge of the whole campaign's own file is itself.
		self, err := MergeCampaigns([]*CampaignFile{readText(t, whole)})
		if err != nil || describe(self.Tally) != describe(res.Tally) {
			t.Errorf("%+v: the whole file merged alone: %v", tt, err)
		}
	}
}

// describe writes a tally's counts and failures, to compare two.
func describe(t *Tally) string {
	var b strings.Builder
	b.WriteString(strings.Join([]string{itoa(t.Runs), itoa(t.AsExpected), itoa(t.Unexpected), itoa(t.Unknown)}, " ") + "\n")
	for _, g := range t.Groups() {
		b.WriteString(g.Signature + " × " + itoa(g.Count) + " first " + itoa(g.First.Run) + " " + g.First.Schedule + "\n")
		for _, r := range g.Runs {
			b.WriteString(" " + itoa(r))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

func readText(t *testing.T, text string) *CampaignFile {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadCampaign(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Files of different campaigns are not merged; a missing shard is said.
func TestMergeCampaignsRefuses(t *testing.T) {
	a, _ := campaignFile(t, Campaign{Strategy: Guided, Seed: 3, Runs: 40, Lanes: 2, Shard: 1, Shards: 2})
	for name, c := range map[string]Campaign{
		"another seed":     {Strategy: Guided, Seed: 4, Runs: 40, Lanes: 2, Shard: 2, Shards: 2},
		"another strategy": {Strategy: Random, Seed: 3, Runs: 40, Lanes: 2, Shard: 2, Shards: 2},
		"another budget":   {Strategy: Guided, Seed: 3, Runs: 50, Lanes: 2, Shard: 2, Shards: 2},
		"other workers":    {Strategy: Guided, Seed: 3, Runs: 40, Lanes: 2, Shard: 2, Shards: 2, Workers: 2},
	} {
		b, _ := campaignFile(t, c)
		if _, err := MergeCampaigns([]*CampaignFile{readText(t, a), readText(t, b)}); !errors.Is(err, ErrBadResults) {
			t.Errorf("%s: merged (%v)", name, err)
		}
	}
	m, err := MergeCampaigns([]*CampaignFile{readText(t, a)})
	if err != nil || !slices.Equal(m.MissingLanes, []int{1}) {
		t.Errorf("one shard of two: missing lanes %v (%v)", m.MissingLanes, err)
	}
}

// A bad results file is refused with its path and line; a last line cut
// short is not an error.
func TestReadCampaignBad(t *testing.T) {
	good, _ := campaignFile(t, Campaign{Strategy: Random, Seed: 1, Runs: 5})
	dir := t.TempDir()
	for name, text := range map[string]string{
		"empty":        "",
		"a sweep":      `{"kind":"sweep","file":"x"}` + "\n",
		"not json":     good[:40] + "\n" + good,
		"unknown kind": good + `{"kind":"what"}` + "\n",
		"after end":    good + `{"kind":"run","run":1}` + "\n",
		"bad lanes":    strings.Replace(good, `"lanes":1`, `"lanes":0`, 1),
		"foreign run":  strings.Replace(good, `"run":3,`, `"run":9,`, 1),
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(path, []byte(text), 0o644)
		if _, err := ReadCampaign(path); !errors.Is(err, ErrBadResults) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
	cut := strings.TrimSuffix(good, "\n")
	cut = cut[:strings.LastIndex(cut, "\n")+1] + `{"kind":"ru`
	path := filepath.Join(dir, "cut")
	os.WriteFile(path, []byte(cut), 0o644)
	if f, err := ReadCampaign(path); err != nil || len(f.Runs) != 5 || f.Ended {
		t.Errorf("cut short: %v", err)
	}
}

// A cancelled context ends a campaign: the runs under way are stopped and
// not counted, nothing is left running, and what was found is written,
// the end line saying the campaign was interrupted.
func TestCampaignInterrupted(t *testing.T) {
	r := &fakeRunner{blockAbove: 12} // a random campaign of seed 1: runs from the 13th on block
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var b bytes.Buffer
	c := Campaign{Scenario: loadFake(t), Runner: r, Strategy: Random, Seed: 1, Runs: 1000, Workers: 3, Results: &b,
		Progress: func(p CampaignProgress) {
			if p.Runs == 12 {
				cancel()
			}
		}}
	res, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Tally.Runs != 12 {
		t.Errorf("interrupted %v after %d runs, want 12", res.Interrupted, res.Tally.Runs)
	}
	if n := r.active.Load(); n != 0 {
		t.Errorf("%d runs still under way", n)
	}
	text := b.String()
	if !strings.HasSuffix(text, `{"kind":"end","done":12,"behaviours":`+itoa(res.Behaviours)+`,"interrupted":true}`+"\n") {
		t.Errorf("end of the results file:\n%s", text[max(0, len(text)-300):])
	}
	if strings.Count(text, `"interrupted":true`) < 2 {
		t.Errorf("no run marked interrupted:\n%s", text)
	}
}

// A guided campaign keeps its corpus on disk as scenario files, within
// its bound, each a scenario that loads; a passing run's folder is not
// kept, a failing one's is.
func TestCorpusOnDisk(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "0099.toml"), []byte("left by an earlier campaign"), 0o644)
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("not coup's"), 0o644)
	_, res := campaignFile(t, Campaign{Strategy: Guided, Seed: 1, Runs: 300, Corpus: 5, CorpusDir: dir})
	files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
	if len(files) != res.Corpus || res.Corpus == 0 || res.Corpus > 5 {
		t.Fatalf("%d corpus files, corpus of %d (bound 5): %v", len(files), res.Corpus, files)
	}
	for _, f := range files {
		if _, err := scenario.Load(f); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mine.txt")); err != nil {
		t.Error("a file not coup's was removed")
	}
}

// Every failing run is kept whole in the store, with the scenario that
// runs it again; a passing run's folder is removed, and latest never
// names a removed one.
func TestFailuresKept(t *testing.T) {
	store := t.TempDir()
	r := &fakeRunner{store: store}
	_, res := campaignFile(t, Campaign{Runner: r, Strategy: Guided, Seed: 1, Runs: 400})
	g := res.Tally.Groups()
	if len(g) != 1 {
		t.Fatalf("groups %+v", g)
	}
	dirs, _ := filepath.Glob(filepath.Join(store, "fake", "run-*"))
	if len(dirs) != g[0].Count || g[0].First.Dir == "" {
		t.Fatalf("%d folders kept for %d failures (first %q)", len(dirs), g[0].Count, g[0].First.Dir)
	}
	kept, err := scenario.Load(filepath.Join(g[0].First.Dir, ScenarioFile))
	if err != nil {
		t.Fatal(err)
	}
	run, err := r.Run(context.Background(), kept)
	if err != nil || Signature(run.Results, run.History) != g[0].Signature {
		t.Errorf("the kept scenario fails as %q (%v), the run as %q", Signature(run.Results, run.History), err, g[0].Signature)
	}
	if g[0].First.Hash == "" {
		t.Error("no hash of the kept history")
	}
	if target, err := os.Readlink(filepath.Join(store, "fake", "latest")); err == nil {
		if _, err := os.Stat(filepath.Join(store, "fake", target)); err != nil {
			t.Errorf("latest names a removed folder: %v", err)
		}
	}
}
