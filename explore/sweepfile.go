package explore

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/coupharness/coup/verdict"
)

// A sweep's results file is JSON lines: a header (kind "sweep") that says
// which sweep, and which part of it, the file holds; one line per seed
// (kind "seed"), in seed order; and, when the sweep ran to its end, a
// last line (kind "end"). A shard that was killed leaves no end line, and
// a merge says so. docs/simulator.md documents every field.

// SweepHeader is a results file's first line.
type SweepHeader struct {
	Kind string `json:"kind"` // "sweep"
	// File is the scenario's path as the sweep was given it (and as the
	// replay commands use it); SHA256 the hash of its bytes; Scenario its
	// name.
	File     string `json:"file"`
	SHA256   string `json:"sha256"`
	Scenario string `json:"scenario"`
	// Strategy is the sweep's strategy (ParseStrategy reads it).
	Strategy string `json:"strategy"`
	// From and Seeds are the whole sweep's seeds: From, From+1, ...
	// From+Seeds−1.
	From  int64 `json:"from"`
	Seeds int   `json:"seeds"`
	// Shard and Shards say which part this file holds (1 of 1 for a whole
	// sweep), and ShardFrom and ShardSeeds that part's seeds.
	Shard      int   `json:"shard"`
	Shards     int   `json:"shards"`
	ShardFrom  int64 `json:"shard_from"`
	ShardSeeds int   `json:"shard_seeds"`
	// Build names the coup build that ran the sweep: the same seed gives
	// the same history only with the same build.
	Build string `json:"build,omitempty"`
}

// SeedResult is one seed's line.
type SeedResult struct {
	Kind string `json:"kind"` // "seed"
	Seed int64  `json:"seed"`
	// Strategy is the strategy the seed ran when the sweep's is a
	// portfolio.
	Strategy string `json:"strategy,omitempty"`
	// Valid and Outcome are the verdict and how it compares with the
	// scenario's expectation.
	Valid   string `json:"valid"`
	Outcome string `json:"outcome"`
	// Signature is how the run failed (see Signature), "" when it is as
	// expected with no violation. Hash is then the history's SHA-256, and
	// Note the first note of the verdict.
	Signature string `json:"signature,omitempty"`
	Hash      string `json:"hash,omitempty"`
	Note      string `json:"note,omitempty"`
	// Error is set when the seed could not be simulated.
	Error string `json:"error,omitempty"`
}

// SweepEnd is the last line of a sweep that ran to its end.
type SweepEnd struct {
	Kind string `json:"kind"` // "end"
	// Done is the number of seeds run (fewer than the shard's when the
	// sweep stopped at the first failure).
	Done int `json:"done"`
}

// Failed reports whether the seed is a failure: a violation, a verdict
// not as expected, or no verdict at all.
func (r *SeedResult) Failed() bool { return r.Signature != "" || r.Error != "" }

// Shard is the part k (1-based) of n of the seeds from, from+1, ...
// from+count−1: consecutive seeds, the parts as even as can be (their
// sizes differ by one at most), in order, covering every seed once.
func Shard(from int64, count, k, n int) (shardFrom int64, shardCount int) {
	lo := int64(count) * int64(k-1) / int64(n)
	hi := int64(count) * int64(k) / int64(n)
	return from + lo, int(hi - lo)
}

// ParseShard reads "k/n" (1 ≤ k ≤ n).
func ParseShard(s string) (k, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	k, errK := strconv.Atoi(a)
	n, errN := strconv.Atoi(b)
	if !ok || errK != nil || errN != nil || n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("shard %q: want k/n with 1 ≤ k ≤ n, like 2/8", s)
	}
	return k, n, nil
}

// SweepWriter writes a results file.
type SweepWriter struct {
	w   *bufio.Writer
	err error
}

// NewSweepWriter writes the header to w and returns the writer of the
// lines that follow.
func NewSweepWriter(w io.Writer, h SweepHeader) *SweepWriter {
	h.Kind = "sweep"
	sw := &SweepWriter{w: bufio.NewWriter(w)}
	sw.line(h)
	return sw
}

// Seed writes a seed's line.
func (sw *SweepWriter) Seed(r SeedResult) {
	r.Kind = "seed"
	sw.line(r)
}

// End writes the end line and flushes; it returns the first error.
func (sw *SweepWriter) End(done int) error {
	sw.line(SweepEnd{Kind: "end", Done: done})
	return sw.Flush()
}

// Flush writes what is buffered (a sweep flushes as it goes, so that a
// killed shard leaves its seeds so far); it returns the first error.
func (sw *SweepWriter) Flush() error {
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	return sw.err
}

func (sw *SweepWriter) line(v any) {
	if sw.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		sw.err = fmt.Errorf("encode results: %w", err)
		return
	}
	b = append(b, '\n')
	if _, err := sw.w.Write(b); err != nil {
		sw.err = fmt.Errorf("write results: %w", err)
	}
}

// SweepFile is a results file as read.
type SweepFile struct {
	Path   string
	Header SweepHeader
	Seeds  []SeedResult
	// Ended is whether it has its end line; Done the seeds it says ran.
	Ended bool
	Done  int
}

// ErrBadResults wraps the errors of a results file that cannot be read.
var ErrBadResults = errors.New("bad sweep results")

// ReadSweep reads a results file. A line that is not what its place
// requires is an error naming the file and the line; a last line cut
// short (a shard killed while writing) is ignored.
func ReadSweep(path string) (*SweepFile, error) {
	sf := &SweepFile{Path: path}
	err := readResults(path, "sweep", "coup sim --out", 1<<20, func(kind string, b []byte) error {
		switch kind {
		case "sweep":
			return json.Unmarshal(b, &sf.Header)
		case "seed":
			var r SeedResult
			if err := json.Unmarshal(b, &r); err != nil {
				return err
			}
			sf.Seeds = append(sf.Seeds, r)
		case "end":
			var e SweepEnd
			if err := json.Unmarshal(b, &e); err != nil {
				return err
			}
			sf.Ended, sf.Done = true, e.Done
		default:
			return fmt.Errorf("unknown kind %q", kind)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	h := sf.Header
	if h.Shards < 1 || h.Shard < 1 || h.Shard > h.Shards || h.Seeds < 0 || h.ShardSeeds < 0 {
		return nil, fmt.Errorf("%w: %s:1: shard %d/%d of %d seeds makes no sense", ErrBadResults, path, h.Shard, h.Shards, h.Seeds)
	}
	return sf, nil
}

// Merged is the union of a sweep's shards.
type Merged struct {
	Header SweepHeader // the first file's, as a whole sweep's: shard 1 of 1
	// Seeds are every seed's result, in seed order, each once.
	Seeds []SeedResult
	// Missing are the sweep's seeds that no file holds (a shard not given,
	// killed, or stopped at its first failure); Incomplete the files
	// without their end line.
	Missing    []int64
	Incomplete []string
	// Groups are the failures by signature, the most frequent first.
	Groups []FailureGroup
}

// FailureGroup is the seeds that failed one way.
type FailureGroup struct {
	Signature string
	// Seeds are the seeds, in order; the first is the one to replay.
	Seeds []int64
	// First is the first seed's result.
	First SeedResult
	// AsExpected is true when the scenario expects this violation.
	AsExpected bool
}

// Merge combines the results files of one sweep: the same scenario (by
// its bytes), strategy, seeds and number of shards, and the same build.
// A seed in two files (a shard given twice, or run again) must have the
// same result in both.
func Merge(files []*SweepFile) (*Merged, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no file to merge", ErrBadResults)
	}
	first := files[0].Header
	bySeed := map[int64]SeedResult{}
	m := &Merged{Header: first}
	m.Header.Shard, m.Header.Shards, m.Header.ShardFrom, m.Header.ShardSeeds = 1, 1, first.From, first.Seeds
	for _, f := range files {
		h := f.Header
		switch {
		case h.SHA256 != first.SHA256 || h.File != first.File:
			return nil, fmt.Errorf("%w: %s is a sweep of %s (sha256 %.12s), %s of %s (sha256 %.12s)", ErrBadResults, f.Path, h.File, h.SHA256, files[0].Path, first.File, first.SHA256)
		case h.Strategy != first.Strategy:
			return nil, fmt.Errorf("%w: %s ran strategy %s, %s strategy %s", ErrBadResults, f.Path, h.Strategy, files[0].Path, first.Strategy)
		case h.From != first.From || h.Seeds != first.Seeds || h.Shards != first.Shards:
			return nil, fmt.Errorf("%w: %s is shard %d/%d of seeds %d+%d, %s shard %d/%d of seeds %d+%d: not the same sweep",
				ErrBadResults, f.Path, h.Shard, h.Shards, h.From, h.Seeds, files[0].Path, first.Shard, first.Shards, first.From, first.Seeds)
		case h.Build != first.Build:
			return nil, fmt.Errorf("%w: %s was run by build %q, %s by %q: the same seed may give another history", ErrBadResults, f.Path, h.Build, files[0].Path, first.Build)
		}
		if !f.Ended {
			m.Incomplete = append(m.Incomplete, f.Path)
		}
		for _, r := range f.Seeds {
			if r.Seed < h.ShardFrom || r.Seed >= h.ShardFrom+int64(h.ShardSeeds) {
				return nil, fmt.Errorf("%w: %s holds seed %d, outside its shard's seeds %d..%d", ErrBadResults, f.Path, r.Seed, h.ShardFrom, h.ShardFrom+int64(h.ShardSeeds)-1)
			}
			if prev, ok := bySeed[r.Seed]; ok {
				if prev != r {
					return nil, fmt.Errorf("%w: seed %d has two different results (%s: %s %s; another file: %s %s): not the same build or scenario", ErrBadResults, r.Seed, f.Path, r.Outcome, r.Hash, prev.Outcome, prev.Hash)
				}
				continue
			}
			bySeed[r.Seed] = r
		}
	}
	for seed := first.From; seed < first.From+int64(first.Seeds); seed++ {
		r, ok := bySeed[seed]
		if !ok {
			m.Missing = append(m.Missing, seed)
			continue
		}
		m.Seeds = append(m.Seeds, r)
	}
	m.Groups = groupFailures(m.Seeds)
	return m, nil
}

// groupFailures groups failing seeds by signature (errors by their
// message), the most frequent first, ties by first seed.
func groupFailures(seeds []SeedResult) []FailureGroup {
	index := map[string]int{}
	var groups []FailureGroup
	for _, r := range seeds {
		if !r.Failed() {
			continue
		}
		sig := r.Signature
		if r.Error != "" {
			sig = "could not run: " + r.Error
		}
		i, ok := index[sig]
		if !ok {
			i = len(groups)
			index[sig] = i
			groups = append(groups, FailureGroup{Signature: sig, First: r, AsExpected: r.Outcome == verdict.AsExpected})
		}
		groups[i].Seeds = append(groups[i].Seeds, r.Seed)
	}
	sort.SliceStable(groups, func(i, j int) bool { return len(groups[i].Seeds) > len(groups[j].Seeds) })
	return groups
}

// Counts are how many seeds ended each way.
func (m *Merged) Counts() (asExpected, unexpected, unknown, broken int) {
	for _, r := range m.Seeds {
		switch {
		case r.Error != "":
			broken++
		case r.Outcome == verdict.AsExpected:
			asExpected++
		case r.Outcome == verdict.Unknown:
			unknown++
		default:
			unexpected++
		}
	}
	return
}
