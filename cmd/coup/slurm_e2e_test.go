package main

// An explore campaign on a scheduler that exists: its shards as a Slurm
// job array (contrib/slurm), on a slurmctld and slurmd of the test's own
// on this machine (internal/slurmtest).

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/internal/slurmtest"
)

// A campaign's shards, one a task of a job array, and the merge job
// after them, give exactly the failures (signatures, counts, runs) of the
// campaign run unsharded on the simulator with the same seed and lanes.
func TestExploreShardsOnSlurm(t *testing.T) {
	const shards, runs, seed = 3, 150, 1
	cluster := slurmtest.Start(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	scenario := scenarioPath(t, filepath.Join("explore", "bully-replace.toml"))
	submit, err := filepath.Abs(filepath.Join("..", "..", "contrib", "slurm", "submit"))
	if err != nil {
		t.Fatal(err)
	}

	cmd := cluster.Command(submit, scenario, fmt.Sprint(runs), fmt.Sprint(shards), fmt.Sprint(seed), out)
	cmd.Env = append(cmd.Env, "COUP="+coupBin)
	cmd.Dir = dir
	ids, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, ids)
	}
	f := strings.Fields(string(ids))
	if len(f) != 2 {
		t.Fatalf("submit printed %q, want the array's and the merge's job ids", ids)
	}
	array, merge := f[0], f[1]

	// Meanwhile, the whole campaign on one machine.
	whole := coupIn(t, dir, "explore", scenario, "--runs", fmt.Sprint(runs), "--lanes", fmt.Sprint(shards),
		"--seed", fmt.Sprint(seed), "--quiet", "--out", "whole.jsonl")
	if whole.code != 1 {
		t.Fatalf("the whole campaign: exit %d, want 1 (bully-replace's two leaders found)\n%s%s", whole.code, whole.stdout, whole.stderr)
	}

	jobs := cluster.Wait(90*time.Second, array, merge)
	tasks := 0
	for _, j := range jobs {
		switch {
		case j.ID == merge:
			// The merge found the failures: exit 1.
			if j.State != "FAILED" || j.ExitCode != "1:0" {
				t.Errorf("the merge job: %v, want FAILED exit 1:0 (failures found)", j)
			}
		case j.State == "COMPLETED" && j.ExitCode == "0:0":
			tasks++
		default:
			t.Errorf("a shard's task: %v, want COMPLETED exit 0:0", j)
		}
	}
	if tasks != shards {
		t.Errorf("%d tasks completed, want %d: %v", tasks, shards, jobs)
	}

	// The files the tasks wrote, merged, against the whole campaign's.
	var files []*explore.CampaignFile
	for k := 1; k <= shards; k++ {
		cf, err := explore.ReadCampaign(filepath.Join(out, fmt.Sprintf("shard-%d.jsonl", k)))
		if err != nil {
			t.Fatal(err)
		}
		if h := cf.Header; h.Shard != k || h.Shards != shards || !cf.Ended {
			t.Errorf("shard-%d.jsonl: shard %d/%d, ended %v", k, h.Shard, h.Shards, cf.Ended)
		}
		files = append(files, cf)
	}
	wf, err := explore.ReadCampaign(filepath.Join(dir, "whole.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := failures(t, wf)
	if len(want) == 0 {
		t.Fatal("the whole campaign found no failure: nothing to compare")
	}
	if got := failures(t, files...); !reflect.DeepEqual(got, want) {
		t.Errorf("merged shards' failures:\n%v\nthe whole campaign's:\n%v", got, want)
	}

	// And the merge job's report is the whole campaign's, but for where
	// the failing runs are kept.
	report, err := os.ReadFile(filepath.Join(out, "merge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	self := coupIn(t, dir, "explore", "merge", "whole.jsonl")
	wantReport := strings.Replace(self.stdout, "merged 1 files", fmt.Sprintf("merged %d files", shards), 1)
	if keptLine.ReplaceAllString(string(report), "") != keptLine.ReplaceAllString(wantReport, "") {
		t.Errorf("the merge job's report:\n%s\nthe whole campaign's:\n%s", report, wantReport)
	}
}

// failure is one kind of failure of a campaign, as a merge counts it.
type failure struct {
	Signature string
	Count     int
	Runs      []int
}

// failures merges files and lists their failures by kind, with the
// lanes any file lacks.
func failures(t *testing.T, files ...*explore.CampaignFile) []any {
	t.Helper()
	m, err := explore.MergeCampaigns(files)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for _, g := range m.Tally.Groups() {
		out = append(out, failure{g.Signature, g.Count, g.Runs})
	}
	return append(out, fmt.Sprintf("%d runs, missing lanes %v", m.Tally.Runs, m.MissingLanes))
}
