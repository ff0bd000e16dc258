package explore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// Keeper is a Runner that can run a scenario again into the store: an
// exact runner (the simulator) runs a campaign without a store, and keeps
// a failing run by running its seed again with one.
type Keeper interface {
	// Keep runs sc into the store and returns the run's folder.
	Keep(ctx context.Context, sc *scenario.Scenario) (string, error)
}

// ScenarioFile is the name of the scenario file a campaign writes into a
// failing run's folder: the scenario with the run's schedule and seed,
// which `coup run` (or `coup sim`) runs again.
const ScenarioFile = "scenario.toml"

// Campaign is a campaign: a scenario explored by a strategy on a driver,
// within a budget.
type Campaign struct {
	// Scenario is the scenario explored: its vocabulary ([explore] or the
	// defaults of its kind), its own faults (kept in every run, before
	// the schedule's), its checks and expectation.
	Scenario *scenario.Scenario
	// Runner runs each schedule.
	Runner Runner
	// Strategy is Random or Guided.
	Strategy string
	// Seed seeds the campaign: every choice of its strategy, and the
	// seeds of its runs.
	Seed int64
	// Runs is the budget in runs of the whole campaign (all its lanes and
	// shards); Time the budget in time of this part. At least one is
	// set; the campaign ends at the first spent.
	Runs int
	Time time.Duration
	// Lanes is how many independent searches the campaign has (default
	// 1): run i is lane i mod Lanes's t-th run, t = i div Lanes, and a
	// guided lane learns from its own runs only, so that lanes split
	// across shards give the runs they give together.
	Lanes int
	// Shard and Shards pick the part of the lanes this campaign runs
	// (default 1 of 1): Shard's of Shards nearly equal consecutive
	// parts. There must be at least as many lanes as shards.
	Shard, Shards int
	// Workers is how many runs are under way at once (default 1). A
	// guided lane's run t is made from what its runs up to t−Workers
	// showed, so the same Workers gives the same campaign.
	Workers int
	// Corpus bounds a guided lane's corpus (default DefaultCorpus);
	// CorpusDir, when set, keeps every lane's corpus there as scenario
	// files, one per schedule, added and removed as the corpus changes.
	Corpus    int
	CorpusDir string
	// First ends the campaign at its first run not as expected (the runs
	// under way are judged all the same).
	First bool
	// KeepPassing keeps the store folders of runs as expected, which a
	// campaign otherwise removes once they are judged.
	KeepPassing bool
	// Results, when set, receives the results file; Header is its
	// header's file, hash and build (the rest is filled in).
	Results io.Writer
	Header  CampaignHeader
	// Progress, when set, is called after each run is judged.
	Progress func(CampaignProgress)
	// Now is the clock of the time budget (default time.Now).
	Now func() time.Time
}

// CampaignProgress is a campaign's state after a run, for a person to follow.
type CampaignProgress struct {
	// Runs are the runs judged so far; Budget this part's runs budget (0
	// without one).
	Runs, Budget int
	// Elapsed is the time since the start; Left the time budget's rest
	// (0 without one).
	Elapsed, Left time.Duration
	// Behaviours is how many distinct features the runs showed; Corpus
	// how many schedules the lanes keep.
	Behaviours, Corpus int
	// Tally counts the runs and the failures by signature.
	Tally *Tally
	// Last is the run just judged; NewKind is true when it failed in a
	// way no earlier run did.
	Last    RunResult
	NewKind bool
}

// CampaignResult is how a campaign ended.
type CampaignResult struct {
	Header CampaignHeader
	Tally  *Tally
	// Behaviours and Corpus are as in CampaignProgress, at the end.
	Behaviours, Corpus int
	// Interrupted is true when the context ended the campaign before its
	// budget was spent.
	Interrupted bool
	Wall        time.Duration
}

// ErrBadCampaign wraps a configuration a campaign cannot run.
var ErrBadCampaign = errors.New("bad campaign")

// Run runs the campaign: it draws each run's schedule from its strategy,
// runs it, judges it with the scenario's checks (the Runner does), and
// goes on until its budget is spent or ctx ends. Every failing run is kept
// whole in the store, with its scenario file (ScenarioFile); a passing
// run's folder is removed. When ctx ends, the runs under way are stopped
// by their Runner, are not counted, and everything found so far is
// written: the results file's end line says the campaign was interrupted.
func (cfg Campaign) Run(ctx context.Context) (*CampaignResult, error) {
	c, err := newCampaign(cfg)
	if err != nil {
		return nil, err
	}
	return c.run(ctx)
}

// campaign is a campaign under way.
type campaign struct {
	cfg    Campaign
	header CampaignHeader
	lanes  []*lane
	out    *CampaignWriter
	tally  *Tally
	seen   map[string]struct{}
	start  time.Time
	kept   string // the last run folder kept, for store/<scenario>/latest
	vocab  scenario.Vocabulary
	// writeErr is the first error writing the results or a run's files.
	writeErr error
	// found is set at the first run not as expected.
	found bool
}

// lane is one independent search of a campaign.
type lane struct {
	index int
	st    strategy
	// observed holds what its runs showed until next applies it: run t
	// learns from runs up to t−Workers, however fast the others ended.
	observed map[int]*observation
	applied  int // runs applied: 0..applied−1
	judged   int // runs judged (its runs are judged in order)
	// ran holds a hash of every schedule the lane ran (its faults and
	// seed, as Schedule.String writes them): no schedule runs twice.
	ran map[uint64]struct{}
}

// schedule is the schedule of lane l's run t, the campaign's run i: its
// strategy's, without the faults that cannot act (actable; one with none
// that can is drawn again, up to 16 times in all), with a fault that
// starts by itself (startable), and one the lane has not run. A strategy that gives a schedule run before is asked
// again, a few times; then the schedule runs with a seed of its own
// (below the campaign's, where no fresh draw's lies).
func (c *campaign) schedule(l *lane, t, i int) Schedule {
	key := func(s Schedule) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s.String()))
		return h.Sum64()
	}
	var sched Schedule
	for try := 0; try < 16; try++ {
		sched = l.st.next(t, i)
		faults, acts := actable(c.cfg.Scenario, sched.Faults)
		sched.Faults = startable(c.cfg.Scenario, c.vocab, faults)
		if _, ok := l.ran[key(sched)]; (!ok || try >= 3) && acts {
			break
		}
	}
	for k := int64(1); ; k++ {
		if _, ok := l.ran[key(sched)]; !ok {
			break
		}
		sched.Seed = c.cfg.Seed - k*int64(c.cfg.Lanes) - int64(l.index)
	}
	l.ran[key(sched)] = struct{}{}
	return sched
}

func newCampaign(cfg Campaign) (*campaign, error) {
	switch {
	case cfg.Scenario == nil || cfg.Runner == nil:
		return nil, fmt.Errorf("%w: a campaign needs a scenario and a runner", ErrBadCampaign)
	case cfg.Runs <= 0 && cfg.Time <= 0:
		return nil, fmt.Errorf("%w: give a budget: runs or time", ErrBadCampaign)
	}
	if cfg.Lanes < 1 {
		cfg.Lanes = 1
	}
	if cfg.Shards < 1 {
		cfg.Shard, cfg.Shards = 1, 1
	}
	if cfg.Shard < 1 || cfg.Shard > cfg.Shards {
		return nil, fmt.Errorf("%w: shard %d/%d", ErrBadCampaign, cfg.Shard, cfg.Shards)
	}
	if cfg.Lanes < cfg.Shards {
		return nil, fmt.Errorf("%w: %d lanes cannot be split into %d shards: a shard runs whole lanes (give at least %d)", ErrBadCampaign, cfg.Lanes, cfg.Shards, cfg.Shards)
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.Corpus < 1 {
		cfg.Corpus = DefaultCorpus
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Scenario.Vocabulary().Kinds) == 0 {
		return nil, fmt.Errorf("%w: %s: the vocabulary names no fault", ErrBadCampaign, cfg.Scenario.File)
	}
	from, count := Shard(0, cfg.Lanes, cfg.Shard, cfg.Shards)
	c := &campaign{cfg: cfg, tally: NewTally(), seen: map[string]struct{}{}, vocab: cfg.Scenario.Vocabulary()}
	h := cfg.Header
	h.Kind, h.Strategy, h.Driver, h.Seed = "campaign", cfg.Strategy, cfg.Runner.Name(), cfg.Seed
	h.Runs, h.TimeNS, h.Lanes, h.Workers = cfg.Runs, int64(cfg.Time), cfg.Lanes, cfg.Workers
	h.Shard, h.Shards, h.LaneFrom, h.LaneCount, h.Exact = cfg.Shard, cfg.Shards, int(from), count, cfg.Runner.Exact()
	if h.Scenario == "" {
		h.Scenario = cfg.Scenario.Name
	}
	if h.File == "" {
		h.File = cfg.Scenario.File
	}
	if cfg.Strategy == Guided {
		h.Corpus = cfg.Corpus
	}
	c.header = h
	for l := int(from); l < int(from)+count; l++ {
		st, err := newStrategy(cfg.Strategy, cfg.Scenario, cfg.Seed, l, cfg.Corpus)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadCampaign, err)
		}
		if g, ok := st.(*guided); ok {
			g.real = !cfg.Runner.Exact()
		}
		c.lanes = append(c.lanes, &lane{index: l, st: st, observed: map[int]*observation{}, ran: map[uint64]struct{}{}})
	}
	if cfg.CorpusDir != "" && cfg.Strategy == Guided {
		if err := os.MkdirAll(cfg.CorpusDir, 0o755); err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		if err := clearCorpus(cfg.CorpusDir); err != nil {
			return nil, err
		}
		for _, l := range c.lanes {
			cf := &corpusFiles{dir: cfg.CorpusDir, sc: cfg.Scenario, lane: l.index, lanes: cfg.Lanes, files: map[int]string{}}
			l.st.(*guided).corpus.watch = cf.changed
		}
	}
	return c, nil
}

// slot is a run under way.
type slot struct {
	lane  *lane
	t, i  int
	sched Schedule
	sc    *scenario.Scenario
	err   error
	run   *Run
	done  chan struct{}
}

func (c *campaign) run(ctx context.Context) (*CampaignResult, error) {
	c.start = c.cfg.Now()
	if c.cfg.Results != nil {
		c.out = NewCampaignWriter(c.cfg.Results, c.header)
		if err := c.out.Flush(); err != nil {
			return nil, err
		}
	}
	var queue []*slot
	W, L := c.cfg.Workers, c.cfg.Lanes
	deadline := time.Time{}
	if c.cfg.Time > 0 {
		deadline = c.start.Add(c.cfg.Time)
	}
	spent := func() bool {
		return ctx.Err() != nil || (c.cfg.First && c.found) || (!deadline.IsZero() && !c.cfg.Now().Before(deadline))
	}
issue:
	for t := 0; ; t++ {
		more := false
		for _, l := range c.lanes {
			i := t*L + l.index
			if c.cfg.Runs > 0 && i >= c.cfg.Runs {
				continue
			}
			more = true
			// At most W runs under way, and the lane's run t−W judged.
			for len(queue) > 0 && (len(queue) >= W || l.judged <= t-W) {
				c.judge(ctx, queue[0])
				queue = queue[1:]
			}
			if spent() {
				break issue
			}
			for ; l.applied <= t-W; l.applied++ {
				o := l.observed[l.applied]
				delete(l.observed, l.applied)
				if o == nil {
					o = &observation{run: 0} // a run that could not be carried out showed nothing
				}
				l.st.observe(l.applied, o)
			}
			s := &slot{lane: l, t: t, i: i, sched: c.schedule(l, t, i), done: make(chan struct{})}
			s.sc, s.err = s.sched.Scenario(c.cfg.Scenario)
			go func() {
				defer close(s.done)
				if s.err == nil {
					s.run, s.err = c.cfg.Runner.Run(ctx, s.sc)
				}
			}()
			queue = append(queue, s)
		}
		if !more {
			break
		}
	}
	for _, s := range queue {
		c.judge(ctx, s)
	}
	res := &CampaignResult{Header: c.header, Tally: c.tally, Behaviours: len(c.seen), Corpus: c.corpusSize(),
		Interrupted: ctx.Err() != nil, Wall: c.cfg.Now().Sub(c.start)}
	var err error
	if c.out != nil {
		err = c.out.End(CampaignEnd{Done: c.tally.Runs, Behaviours: res.Behaviours, Interrupted: res.Interrupted})
	}
	return res, errors.Join(err, c.writeErr)
}

// judge waits for a run, judges it, keeps or removes its folder, writes
// its line and tells its lane what it showed.
func (c *campaign) judge(ctx context.Context, s *slot) {
	<-s.done
	l := s.lane
	l.judged = s.t + 1
	r := RunResult{Run: s.i + 1, Lane: l.index, Seed: s.sched.Seed, Schedule: s.sched.String()}
	run := s.run
	defer run.Free()
	interrupted := ctx.Err() != nil && (run == nil || run.History == nil || !run.History.Ended)
	switch {
	case interrupted:
		r.Interrupted = true
		if run != nil && run.Dir != "" {
			r.Dir = run.Dir // a prefix, recorded: kept
		}
	case s.err != nil || run == nil || run.Results == nil || run.History == nil:
		r.Error = errorText(s.err, "the runner returned no run")
		if run != nil {
			r.Dir = run.Dir
		}
	default:
		r.WallNS = int64(run.Wall)
		res := run.Results
		r.Valid, r.Outcome = res.Valid.String(), res.Outcome
		fs, moments := Abstract(run.History, res)
		r.Features = len(fs)
		learn(c.seen, fs)
		l.observed[s.t] = &observation{run: s.i + 1, sched: s.sched, features: fs, moments: moments}
		if r.Signature = Signature(res, run.History); r.Signature != "" || res.Valid == checks.False {
			r.Note = strings.TrimPrefix(firstNote(res.Notes), ": ")
		}
		r.Also = alsoFailed(res, run.History)
		for i, c := range Causes(res, run.History) {
			if i == 0 {
				r.Detail = c.Detail
				continue
			}
			r.Causes = append(r.Causes, c.Signature)
		}
		if r.Signature != "" {
			r.Machine = LateTimers(s.sc, run.History)
		}
		r.Unfired, r.Idle = unfired(s.sc, len(c.cfg.Scenario.Faults), run.History)
		r.Dir = run.Dir
	}
	if r.Failed() || r.Interrupted {
		c.keep(ctx, s, &r)
	} else if r.Dir != "" && !c.cfg.KeepPassing {
		c.discard(r.Dir)
		r.Dir = ""
	}
	newKind := c.tally.Add(r)
	c.found = c.found || (r.Failed() && r.Outcome != verdict.AsExpected)
	if c.out != nil {
		c.out.Run(r)
		if r.Failed() || c.tally.Runs%64 == 0 {
			if err := c.out.Flush(); err != nil && c.writeErr == nil {
				c.writeErr = err
			}
		}
	}
	if c.cfg.Progress != nil {
		p := CampaignProgress{Runs: c.tally.Runs, Budget: c.budget(), Elapsed: c.cfg.Now().Sub(c.start),
			Behaviours: len(c.seen), Corpus: c.corpusSize(), Tally: c.tally, Last: r, NewKind: newKind}
		if c.cfg.Time > 0 {
			p.Left = max(0, c.cfg.Time-p.Elapsed)
		}
		c.cfg.Progress(p)
	}
}

// keep makes a failing run's folder whole: the run again into the store
// when it ran without one (an exact runner), its scenario file, and the
// hash of its history.
func (c *campaign) keep(ctx context.Context, s *slot, r *RunResult) {
	if s.sc != nil {
		r.Faults = faultTables(s.sc, len(c.cfg.Scenario.Faults))
	}
	if r.Dir == "" && s.sc != nil && !r.Interrupted {
		if k, ok := c.cfg.Runner.(Keeper); ok {
			dir, err := k.Keep(context.WithoutCancel(ctx), s.sc)
			if err != nil && r.Error == "" {
				r.Note = "not kept: " + err.Error()
			}
			r.Dir = dir
		}
	}
	if r.Dir == "" {
		return
	}
	c.kept = r.Dir
	if s.sc != nil {
		head := fmt.Sprintf("run %d of a %s campaign of %s (seed %d): %s\n", s.i+1, c.cfg.Strategy, c.header.File, c.cfg.Seed, s.sched)
		if r.Signature != "" {
			head += "signature: " + r.Signature + "\n"
		}
		for _, c := range r.Causes {
			head += "also caused: " + c + "\n"
		}
		if r.Detail != "" {
			head += "detail: " + r.Detail + "\n"
		}
		if r.Machine != "" {
			head += r.Machine + "\n"
		}
		if err := os.WriteFile(filepath.Join(r.Dir, ScenarioFile), s.sc.Encode(head), 0o644); err != nil && c.writeErr == nil {
			c.writeErr = fmt.Errorf("keep run %d: %w", s.i+1, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(r.Dir, "history.jsonl")); err == nil {
		sum := sha256.Sum256(b)
		r.Hash = hex.EncodeToString(sum[:])
	}
}

// discard removes a passing run's folder, and store/<scenario>/latest if
// it named it (pointing it at the last run kept, when that is a sibling).
func (c *campaign) discard(dir string) {
	if err := os.RemoveAll(dir); err != nil {
		return
	}
	latest := filepath.Join(filepath.Dir(dir), "latest")
	if target, err := os.Readlink(latest); err == nil && target == filepath.Base(dir) {
		os.Remove(latest)
		if c.kept != "" && filepath.Dir(c.kept) == filepath.Dir(dir) {
			os.Symlink(filepath.Base(c.kept), latest)
		}
	}
}

// budget is this part's runs budget: the runs of its lanes below Runs.
func (c *campaign) budget() int {
	if c.cfg.Runs <= 0 {
		return 0
	}
	n := 0
	for _, l := range c.lanes {
		if l.index < c.cfg.Runs {
			n += (c.cfg.Runs-1-l.index)/c.cfg.Lanes + 1
		}
	}
	return n
}

func (c *campaign) corpusSize() int {
	n := 0
	for _, l := range c.lanes {
		n += l.st.corpusSize()
	}
	return n
}

// faultTables writes the faults a schedule added to sc (those after its
// first own) as [[faults]] tables.
func faultTables(sc *scenario.Scenario, own int) string {
	c := *sc
	c.Faults = sc.Faults[min(own, len(sc.Faults)):]
	text := string(c.Encode(""))
	var b strings.Builder
	for _, block := range strings.Split(text, "\n[[faults]]\n")[1:] {
		if i := strings.Index(block, "\n["); i >= 0 {
			block = block[:i+1]
		}
		b.WriteString("[[faults]]\n" + strings.TrimRight(block, "\n") + "\n")
	}
	return b.String()
}

// alsoFailed are the checks that found a violation besides the first
// (see Signature), in the order they ran.
func alsoFailed(res *verdict.Results, h *history.History) []string {
	first, ok := firstViolation(res, h)
	if !ok {
		return nil
	}
	var out []string
	for _, name := range res.Order {
		if name != first && res.Checks[name].Valid == checks.False {
			out = append(out, name)
		}
	}
	return out
}

// unfired counts the faults of a run's schedule (sc's faults from own on)
// armed on a trigger that no event fired: the history has no start of
// theirs. idle is true when the schedule has faults and none of them
// started (a fault that found no target does not start either).
func unfired(sc *scenario.Scenario, own int, h *history.History) (n int, idle bool) {
	if sc == nil || h == nil || own >= len(sc.Faults) {
		return 0, false
	}
	started := map[string]bool{}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind == history.KindNemesis && e.Phase == history.PhaseStart {
			name, _, _ := strings.Cut(e.Name, "#")
			started[name] = true
		}
	}
	idle = true
	for i := own; i < len(sc.Faults); i++ {
		name := fmt.Sprintf("faults[%d]", i)
		if started[name] {
			idle = false
		} else if sc.Faults[i].When != nil {
			n++
		}
	}
	return n, idle
}

func firstNote(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return notes[0]
}

func errorText(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}

// corpusFiles keeps one lane's corpus on disk, as scenario files.
type corpusFiles struct {
	dir         string
	sc          *scenario.Scenario
	lane, lanes int
	files       map[int]string // entry id -> file
}

// corpusName matches the files a campaign writes into a corpus folder.
var corpusName = regexp.MustCompile(`^(lane\d+-)?\d{4,}\.toml$`)

// clearCorpus removes an earlier campaign's corpus files from dir.
func clearCorpus(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	for _, e := range entries {
		if corpusName.MatchString(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("corpus: %w", err)
			}
		}
	}
	return nil
}

// changed writes an entry added to the corpus and removes one evicted.
func (cf *corpusFiles) changed(added, evicted *entry) {
	if evicted != nil {
		if f, ok := cf.files[evicted.id]; ok {
			os.Remove(f)
			delete(cf.files, evicted.id)
		}
	}
	if added == nil {
		return
	}
	name := fmt.Sprintf("%04d.toml", added.id)
	if cf.lanes > 1 {
		name = fmt.Sprintf("lane%d-%04d.toml", cf.lane, added.id)
	}
	sc, err := added.sched.Scenario(cf.sc)
	if err != nil {
		return
	}
	head := fmt.Sprintf("corpus of lane %d: run %d, %s\nshowed %d features first, of %d: %s", cf.lane, added.run, added.sched, added.fresh, added.features, strings.Join(added.novel, "; "))
	path := filepath.Join(cf.dir, name)
	if err := os.WriteFile(path, sc.Encode(head), 0o644); err == nil {
		cf.files[added.id] = path
	}
}
