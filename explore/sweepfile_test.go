package explore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shards of a sweep cover each of its seeds once, in order, and
// differ in size by one at most.
func TestShardCoversEverySeed(t *testing.T) {
	for _, count := range []int{0, 1, 3, 10, 1000, 1001} {
		for n := 1; n <= 12; n++ {
			next, smallest, largest := int64(5), count, 0
			for k := 1; k <= n; k++ {
				from, c := Shard(5, count, k, n)
				if from != next {
					t.Fatalf("%d seeds in %d: shard %d starts at %d, want %d", count, n, k, from, next)
				}
				next += int64(c)
				smallest, largest = min(smallest, c), max(largest, c)
			}
			if next != 5+int64(count) || largest-smallest > 1 {
				t.Errorf("%d seeds in %d shards: end at %d, sizes %d..%d", count, n, next, smallest, largest)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, tt := range []struct {
		in   string
		k, n int
	}{{"1/1", 1, 1}, {"3/8", 3, 8}, {"8/8", 8, 8}} {
		if k, n, err := ParseShard(tt.in); err != nil || k != tt.k || n != tt.n {
			t.Errorf("%q: %d/%d, %v", tt.in, k, n, err)
		}
	}
	for _, bad := range []string{"", "3", "0/4", "5/4", "1/0", "a/b", "1/4/2", "-1/4", "1 /4"} {
		if _, _, err := ParseShard(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func header(shard, shards int) SweepHeader {
	from, n := Shard(1, 10, shard, shards)
	return SweepHeader{File: "s.toml", SHA256: "abc", Scenario: "s", Strategy: "random", From: 1, Seeds: 10,
		Shard: shard, Shards: shards, ShardFrom: from, ShardSeeds: n, Build: "b1"}
}

// writeSweep writes a results file of the seeds of a shard; the seeds in
// fail fail with signature sig.
func writeSweep(t *testing.T, h SweepHeader, fail map[int64]string, end bool) string {
	t.Helper()
	var b bytes.Buffer
	w := NewSweepWriter(&b, h)
	for s := h.ShardFrom; s < h.ShardFrom+int64(h.ShardSeeds); s++ {
		r := SeedResult{Seed: s, Valid: "true", Outcome: "as expected"}
		if sig, ok := fail[s]; ok {
			r = SeedResult{Seed: s, Valid: "false", Outcome: "unexpected", Signature: sig, Hash: "h" + sig}
		}
		w.Seed(r)
	}
	if end {
		if err := w.End(h.ShardSeeds); err != nil {
			t.Fatal(err)
		}
	} else if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func read(t *testing.T, paths ...string) []*SweepFile {
	t.Helper()
	var out []*SweepFile
	for _, p := range paths {
		f, err := ReadSweep(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// Shards merged give the whole sweep's failures, grouped by signature,
// the most frequent first.
func TestMerge(t *testing.T) {
	fail := map[int64]string{2: "a", 5: "b", 7: "a", 9: "a"}
	var paths []string
	for k := 1; k <= 3; k++ {
		paths = append(paths, writeSweep(t, header(k, 3), fail, true))
	}
	m, err := Merge(read(t, paths[2], paths[0], paths[1], paths[0])) // any order; a shard twice
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Seeds) != 10 || len(m.Missing) != 0 || len(m.Incomplete) != 0 {
		t.Fatalf("%d seeds, missing %v, incomplete %v", len(m.Seeds), m.Missing, m.Incomplete)
	}
	if len(m.Groups) != 2 || m.Groups[0].Signature != "a" || len(m.Groups[0].Seeds) != 3 || m.Groups[0].Seeds[0] != 2 || m.Groups[1].First.Seed != 5 {
		t.Errorf("groups %+v", m.Groups)
	}
	if ok, un, _, _ := m.Counts(); ok != 6 || un != 4 {
		t.Errorf("counts %d as expected, %d unexpected", ok, un)
	}
	if h := m.Header; h.Shard != 1 || h.Shards != 1 || h.ShardSeeds != 10 {
		t.Errorf("merged header %+v", h)
	}

	// A shard not given, and one cut short, are said.
	cut := writeSweep(t, header(2, 3), fail, false)
	m, err = Merge(read(t, paths[0], cut))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Missing) != 4 || m.Missing[0] != 7 || len(m.Incomplete) != 1 || m.Incomplete[0] != cut {
		t.Errorf("missing %v, incomplete %v", m.Missing, m.Incomplete)
	}
}

// Files of different sweeps, or disagreeing on a seed, are not merged.
func TestMergeRefuses(t *testing.T) {
	base := writeSweep(t, header(1, 2), nil, true)
	other := func(change func(*SweepHeader)) SweepHeader {
		h := header(2, 2)
		change(&h)
		return h
	}
	for name, h := range map[string]SweepHeader{
		"another scenario": other(func(h *SweepHeader) { h.SHA256 = "def" }),
		"another strategy": other(func(h *SweepHeader) { h.Strategy = "pct" }),
		"another build":    other(func(h *SweepHeader) { h.Build = "b2" }),
		"other seeds":      other(func(h *SweepHeader) { h.Seeds = 12 }),
	} {
		if _, err := Merge(read(t, base, writeSweep(t, h, nil, true))); !errors.Is(err, ErrBadResults) {
			t.Errorf("%s: merged (%v)", name, err)
		}
	}
	failing := writeSweep(t, header(1, 2), map[int64]string{3: "a"}, true)
	if _, err := Merge(read(t, base, failing)); err == nil || !strings.Contains(err.Error(), "seed 3") {
		t.Errorf("two results of seed 3 merged: %v", err)
	}
}

// Bad files are refused with the file and line; a last line cut short is
// not an error.
func TestReadSweepBad(t *testing.T) {
	good := writeSweep(t, header(1, 1), nil, false)
	src, _ := os.ReadFile(good)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"empty":          "",
		"no header":      `{"kind":"seed","seed":1}` + "\n",
		"not json":       string(src[:20]) + "\n" + string(src),
		"unknown kind":   string(src) + `{"kind":"what"}` + "\n",
		"after end":      string(src) + `{"kind":"end","done":10}` + "\n" + `{"kind":"seed","seed":4}` + "\n",
		"bad shard":      strings.Replace(string(src), `"shard":1`, `"shard":3`, 1),
		"bad seed field": string(src) + `{"kind":"seed","seed":"x"}` + "\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(path, []byte(text), 0o644)
		if _, err := ReadSweep(path); !errors.Is(err, ErrBadResults) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
	path := filepath.Join(dir, "cut")
	os.WriteFile(path, append(src, []byte(`{"kind":"seed","se`)...), 0o644)
	if f, err := ReadSweep(path); err != nil || len(f.Seeds) != 10 || f.Ended {
		t.Errorf("cut short: %v", err)
	}
}
