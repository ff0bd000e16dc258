package explore

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/coupharness/coup/verdict"
)

// A campaign's results file is JSON lines, a sibling of a sweep's: a
// header (kind "campaign") that says which campaign, and which of its
// lanes, the file holds; one line per run (kind "run"), in the order the
// runs were judged; and, when the campaign came to its end (its budget
// spent, or interrupted), a last line (kind "end"). A shard that was
// killed leaves no end line, and a merge says so. docs/explore.md
// documents every field.

// CampaignHeader is a campaign results file's first line.
type CampaignHeader struct {
	Kind string `json:"kind"` // "campaign"
	// File is the scenario's path as the campaign was given it; SHA256
	// the hash of its bytes; Scenario its name.
	File     string `json:"file"`
	SHA256   string `json:"sha256"`
	Scenario string `json:"scenario"`
	// Strategy is "random" or "guided"; Driver the Runner's name.
	Strategy string `json:"strategy"`
	Driver   string `json:"driver"`
	// Seed is the campaign's seed: run i of a fresh schedule has seed
	// Seed+i.
	Seed int64 `json:"seed"`
	// Runs is the budget in runs of the whole campaign (0: none), TimeNS
	// in time, per shard (0: none).
	Runs   int   `json:"runs,omitempty"`
	TimeNS int64 `json:"time_ns,omitempty"`
	// Lanes is how many independent searches the campaign has: run i is
	// lane i mod Lanes's. Workers is how many runs are under way at once;
	// a guided lane's run t learns from its runs up to t−Workers.
	Lanes   int `json:"lanes"`
	Workers int `json:"workers"`
	// Shard and Shards say which part this file holds (1 of 1 for a whole
	// campaign); LaneFrom and LaneCount that part's lanes.
	Shard     int `json:"shard"`
	Shards    int `json:"shards"`
	LaneFrom  int `json:"lane_from"`
	LaneCount int `json:"lane_count"`
	// Corpus bounds each lane's corpus.
	Corpus int `json:"corpus,omitempty"`
	// Build names the coup build: on the simulator, the same campaign
	// seed gives the same runs only with the same build.
	Build string `json:"build,omitempty"`
	// Exact is true when the driver gives the same run for the same
	// scenario and seed (the simulator).
	Exact bool `json:"exact,omitempty"`
}

// RunResult is one run's line.
type RunResult struct {
	Kind string `json:"kind"` // "run"
	// Run is the run's number in the campaign, from 1, as every line of
	// coup explore numbers it (run n is lane (n−1) mod Lanes's); Lane its
	// lane; Seed its scenario's seed.
	Run  int   `json:"run"`
	Lane int   `json:"lane"`
	Seed int64 `json:"seed"`
	// Schedule is its faults, on one line, for people.
	Schedule string `json:"schedule"`
	// Valid and Outcome are the verdict and how it compares with the
	// scenario's expectation.
	Valid   string `json:"valid,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	// Features is how many features the run showed.
	Features int `json:"features,omitempty"`
	// Signature is how the run failed (see Signature), "" when it is as
	// expected with no violation. A failing run also has Hash, its
	// history's SHA-256; Note, the verdict's first note; Dir, its store
	// folder, with its history whole and its scenario as scenario.toml;
	// and Faults, the schedule's faults as [[faults]] tables.
	Signature string `json:"signature,omitempty"`
	Hash      string `json:"hash,omitempty"`
	Note      string `json:"note,omitempty"`
	Dir       string `json:"dir,omitempty"`
	Faults    string `json:"faults,omitempty"`
	// Also are the other checks that found a violation, which the
	// signature leaves out (it is the first violation's alone).
	Also []string `json:"also,omitempty"`
	// Causes are the signatures of the run's other distinct causes (see
	// Causes): a tally counts the run under each. Detail is what the
	// signature leaves out of its cause ("it began 4ms after a partition
	// of n3 healed"). Machine, when set, says the run's timers ran late
	// past the scenario's bounds: its failure may be the machine's, not
	// the system's (LateTimers).
	Causes  []string `json:"causes,omitempty"`
	Detail  string   `json:"detail,omitempty"`
	Machine string   `json:"machine,omitempty"`
	// Unfired counts the schedule's faults armed on a trigger that no
	// event of the run fired: they never happened; Idle is true when no
	// fault of the schedule happened at all.
	Unfired int  `json:"unfired,omitempty"`
	Idle    bool `json:"idle,omitempty"`
	// WallNS is the real time the run took.
	WallNS int64 `json:"wall_ns,omitempty"`
	// Error is set when the run could not be carried out; Interrupted
	// when a signal cut it short (it is not judged, nor counted).
	Error       string `json:"error,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
}

// Failed reports whether the run is a failure: a violation, a verdict not
// as expected, or no verdict at all.
func (r *RunResult) Failed() bool { return !r.Interrupted && (r.Signature != "" || r.Error != "") }

// CampaignEnd is the last line of a campaign that came to its end.
type CampaignEnd struct {
	Kind string `json:"kind"` // "end"
	// Done is the runs judged; Behaviours the features its lanes saw;
	// Interrupted whether a signal ended it.
	Done        int  `json:"done"`
	Behaviours  int  `json:"behaviours"`
	Interrupted bool `json:"interrupted,omitempty"`
}

// CampaignWriter writes a campaign's results file.
type CampaignWriter struct {
	w   *bufio.Writer
	err error
}

// NewCampaignWriter writes the header to w and returns the writer of the
// lines that follow.
func NewCampaignWriter(w io.Writer, h CampaignHeader) *CampaignWriter {
	h.Kind = "campaign"
	cw := &CampaignWriter{w: bufio.NewWriter(w)}
	cw.line(h)
	return cw
}

// Run writes a run's line.
func (cw *CampaignWriter) Run(r RunResult) {
	r.Kind = "run"
	cw.line(r)
}

// End writes the end line and flushes; it returns the first error.
func (cw *CampaignWriter) End(e CampaignEnd) error {
	e.Kind = "end"
	cw.line(e)
	return cw.Flush()
}

// Flush writes what is buffered; it returns the first error.
func (cw *CampaignWriter) Flush() error {
	if cw.err == nil {
		cw.err = cw.w.Flush()
	}
	return cw.err
}

func (cw *CampaignWriter) line(v any) {
	if cw.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		cw.err = fmt.Errorf("encode results: %w", err)
		return
	}
	if _, err := cw.w.Write(append(b, '\n')); err != nil {
		cw.err = fmt.Errorf("write results: %w", err)
	}
}

// CampaignFile is a campaign results file as read.
type CampaignFile struct {
	Path   string
	Header CampaignHeader
	Runs   []RunResult
	// Ended is whether it has its end line, End the line.
	Ended bool
	End   CampaignEnd
}

// ReadCampaign reads a campaign results file. A line that is not what its
// place requires is an error naming the file and the line; a last line
// cut short (a shard killed while writing) is ignored.
func ReadCampaign(path string) (*CampaignFile, error) {
	cf := &CampaignFile{Path: path}
	err := readResults(path, "campaign", "coup explore --out", 4<<20, func(kind string, b []byte) error {
		switch kind {
		case "campaign":
			return json.Unmarshal(b, &cf.Header)
		case "run":
			var r RunResult
			if err := json.Unmarshal(b, &r); err != nil {
				return err
			}
			cf.Runs = append(cf.Runs, r)
		case "end":
			if err := json.Unmarshal(b, &cf.End); err != nil {
				return err
			}
			cf.Ended = true
		default:
			return fmt.Errorf("unknown kind %q", kind)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	h := cf.Header
	if h.Shards < 1 || h.Shard < 1 || h.Shard > h.Shards || h.Lanes < 1 || h.LaneFrom < 0 || h.LaneCount < 0 || h.LaneFrom+h.LaneCount > h.Lanes {
		return nil, fmt.Errorf("%w: %s:1: shard %d/%d of lanes %d+%d of %d makes no sense", ErrBadResults, path, h.Shard, h.Shards, h.LaneFrom, h.LaneCount, h.Lanes)
	}
	for _, r := range cf.Runs {
		if l := (r.Run - 1) % h.Lanes; r.Run < 1 || l < h.LaneFrom || l >= h.LaneFrom+h.LaneCount || (h.Runs > 0 && r.Run > h.Runs) {
			return nil, fmt.Errorf("%w: %s holds run %d, not one of its lanes' (%d+%d of %d)", ErrBadResults, path, r.Run, h.LaneFrom, h.LaneCount, h.Lanes)
		}
	}
	return cf, nil
}

// MergedCampaign is the union of a campaign's shards.
type MergedCampaign struct {
	Header CampaignHeader // the first file's, as a whole campaign's: shard 1 of 1
	Tally  *Tally
	// MissingLanes are the campaign's lanes that no file holds;
	// Incomplete the files without their end line (killed, or still
	// running); Interrupted the files whose campaign a signal ended.
	MissingLanes []int
	Incomplete   []string
	Interrupted  []string
}

// MergeCampaigns combines the results files of one campaign: the same
// scenario (by its bytes), strategy, driver, seed, budget, lanes,
// workers, number of shards and build. A run in two files (a shard given
// twice) is counted once; on an exact driver its two results must agree.
// Failures are grouped by signature, so that each kind shows once
// however many shards found it.
func MergeCampaigns(files []*CampaignFile) (*MergedCampaign, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no file to merge", ErrBadResults)
	}
	first := files[0].Header
	m := &MergedCampaign{Header: first}
	m.Header.Shard, m.Header.Shards, m.Header.LaneFrom, m.Header.LaneCount = 1, 1, 0, first.Lanes
	byRun := map[int]RunResult{}
	lanes := make([]bool, first.Lanes)
	for _, f := range files {
		h := f.Header
		switch {
		case h.SHA256 != first.SHA256 || h.File != first.File:
			return nil, fmt.Errorf("%w: %s is a campaign of %s (sha256 %.12s), %s of %s (sha256 %.12s)", ErrBadResults, f.Path, h.File, h.SHA256, files[0].Path, first.File, first.SHA256)
		case h.Strategy != first.Strategy || h.Driver != first.Driver:
			return nil, fmt.Errorf("%w: %s ran strategy %s on %s, %s strategy %s on %s", ErrBadResults, f.Path, h.Strategy, h.Driver, files[0].Path, first.Strategy, first.Driver)
		case h.Seed != first.Seed || h.Runs != first.Runs || h.TimeNS != first.TimeNS || h.Lanes != first.Lanes || h.Shards != first.Shards || h.Workers != first.Workers || h.Corpus != first.Corpus:
			return nil, fmt.Errorf("%w: %s is shard %d/%d of a campaign of seed %d (runs %d, lanes %d, workers %d), %s shard %d/%d of seed %d (runs %d, lanes %d, workers %d): not the same campaign",
				ErrBadResults, f.Path, h.Shard, h.Shards, h.Seed, h.Runs, h.Lanes, h.Workers, files[0].Path, first.Shard, first.Shards, first.Seed, first.Runs, first.Lanes, first.Workers)
		case h.Build != first.Build:
			return nil, fmt.Errorf("%w: %s was run by build %q, %s by %q", ErrBadResults, f.Path, h.Build, files[0].Path, first.Build)
		}
		for l := h.LaneFrom; l < h.LaneFrom+h.LaneCount; l++ {
			lanes[l] = true
		}
		if !f.Ended {
			m.Incomplete = append(m.Incomplete, f.Path)
		} else if f.End.Interrupted {
			m.Interrupted = append(m.Interrupted, f.Path)
		}
		for _, r := range f.Runs {
			if r.Interrupted {
				continue
			}
			if prev, ok := byRun[r.Run]; ok {
				if first.Exact && (prev.Signature != r.Signature || prev.Hash != r.Hash || prev.Outcome != r.Outcome) {
					return nil, fmt.Errorf("%w: run %d has two different results (%s: %q; another file: %q) on an exact driver: not the same build or scenario", ErrBadResults, r.Run, f.Path, r.Signature, prev.Signature)
				}
				continue
			}
			byRun[r.Run] = r
		}
	}
	for l, ok := range lanes {
		if !ok {
			m.MissingLanes = append(m.MissingLanes, l)
		}
	}
	runs := make([]int, 0, len(byRun))
	for i := range byRun {
		runs = append(runs, i)
	}
	sort.Ints(runs)
	m.Tally = NewTally()
	for _, i := range runs {
		m.Tally.Add(byRun[i])
	}
	return m, nil
}

// MaxListed bounds the runs a group lists: the count goes on.
const MaxListed = 200

// Tally counts a campaign's runs as they are judged, by outcome, and its
// failures by signature. It keeps the first run of each kind of failure
// and the first MaxListed runs of each, so that its memory does not grow
// with the campaign.
type Tally struct {
	// Runs are the runs judged (interrupted ones are not).
	Runs                                   int
	AsExpected, Unexpected, Unknown, Error int
	// Unfired counts the runs with a fault that never fired (a trigger
	// nothing in the run set off), UnfiredFaults those faults, Idle the
	// runs in which no fault of the schedule happened at all.
	Unfired, UnfiredFaults, Idle int
	groups                       []*RunGroup
	index                        map[string]*RunGroup
}

// RunGroup is the runs that failed one way.
type RunGroup struct {
	Signature string
	// Count is how many runs; Runs the first MaxListed of them, in the
	// order they were added; First the first's result.
	Count int
	Runs  []int
	First RunResult
	// AsExpected is true when the scenario expects this violation.
	AsExpected bool
	// Also counts, by check, the runs of the group in which another
	// check failed too (the signature names the first violation's).
	Also map[string]int
	// Late counts the runs of the group whose timers ran late past the
	// scenario's bounds (RunResult.Machine).
	Late int
}

// FromMachine reports whether a group's failure came from the machine
// the runs ran on, not from the system under the schedule's faults: a
// failure at start-up, before any fault (the nodes' own start, which no
// schedule drew), or one whose every run had its timers late past the
// scenario's bounds.
func (g *RunGroup) FromMachine() bool {
	return StartUp(g.Signature) || (g.Late > 0 && g.Late == g.Count)
}

// NewTally returns an empty tally.
func NewTally() *Tally { return &Tally{index: map[string]*RunGroup{}} }

// Add counts a run's result; it reports whether the run showed a kind of
// failure not seen before. Interrupted runs are not counted.
func (t *Tally) Add(r RunResult) (newKind bool) {
	if r.Interrupted {
		return false
	}
	t.Runs++
	if r.Unfired > 0 {
		t.Unfired++
		t.UnfiredFaults += r.Unfired
	}
	if r.Idle {
		t.Idle++
	}
	switch {
	case r.Error != "":
		t.Error++
	case r.Outcome == verdict.AsExpected:
		t.AsExpected++
	case r.Outcome == verdict.Unknown:
		t.Unknown++
	default:
		t.Unexpected++
	}
	if !r.Failed() {
		return false
	}
	sig := r.Signature
	if r.Error != "" {
		sig = "could not run: " + r.Error
	}
	// The run counts under each of its distinct causes.
	for _, s := range append([]string{sig}, r.Causes...) {
		g, ok := t.index[s]
		if !ok {
			g = &RunGroup{Signature: s, First: r, AsExpected: r.Outcome == verdict.AsExpected && r.Error == ""}
			t.index[s] = g
			t.groups = append(t.groups, g)
			newKind = true
		}
		g.Count++
		if r.Machine != "" {
			g.Late++
		}
		for _, c := range r.Also {
			if g.Also == nil {
				g.Also = map[string]int{}
			}
			g.Also[c]++
		}
		if len(g.Runs) < MaxListed {
			g.Runs = append(g.Runs, r.Run)
		}
	}
	return newKind
}

// Groups are the failures by signature, in the order of their first runs.
func (t *Tally) Groups() []*RunGroup {
	out := append([]*RunGroup(nil), t.groups...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].First.Run < out[j].First.Run })
	return out
}

// Found is how findable g's failure was in the runs counted.
func (t *Tally) Found(g *RunGroup) Findability { return Findability{Found: g.Count, Seeds: t.Runs} }
