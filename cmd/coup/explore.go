package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/drivers"
	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
	"github.com/coupharness/coup/verdict/catalogue"
)

const exploreUsage = `usage: coup explore [flags] FILE
  coup explore FILE [--runs N | --time D] [--strategy random|guided] [--seed S]
      [--driver sim|processes|servers] [--cluster fresh|episodes] [--shard k/n [--lanes L]] [--workers N]
      [--out RESULTS.jsonl] [--store DIR] [--corpus DIR] [--junit FILE] [--quiet] [--first]
                                     explore the scenario's vocabulary ([explore], or its
                                     kind's defaults): run schedules nobody wrote until the
                                     budget is spent, judge each, keep each failure whole
  coup explore merge RESULTS.jsonl...
                                     combine a campaign's shards; failures deduplicated by signature

Each run adds a schedule of faults, drawn from the vocabulary, to the
scenario's own faults. random draws every schedule afresh, as Jepsen's
random nemesis does; guided (the default) keeps the schedules whose runs
showed behaviour not seen before, mutates and splices them, and aims
faults at moments their runs showed. Every failing run is kept in the
store with scenario.toml, the scenario that runs it again; passing runs'
folders are removed. docs/explore.md explains it all.

The driver is the simulator for a built-in state machine (the fastest),
node processes for a node program of one's own (or with --driver
processes), real servers for a [server] scenario. On real servers,
--cluster episodes runs every schedule on one long-lived cluster (healed
and recovered between runs) instead of a fresh cluster per run.

Ctrl-C (or SIGTERM) ends the campaign: the runs under way are stopped,
and everything found so far is written (exit 3 if nothing failed).

exit codes: 0 no run failed, 1 a run was not as expected, 2 usage or input
error, 3 interrupted, or runs without a verdict.

flags:
`

// exploreFlags are the flags of coup explore.
type exploreFlags struct {
	runs     int
	time     time.Duration
	strategy string
	seed     int64
	seedSet  bool
	driver   string
	cluster  string
	shard    string
	lanes    int
	workers  int
	out      string
	store    string
	corpus   string
	junit    string
	quiet    bool
	keep     bool
	first    bool
}

func exploreCmd(args []string) int {
	if len(args) > 0 && args[0] == "merge" {
		return exploreMerge(args[1:])
	}
	var f exploreFlags
	fs := newFlags("explore")
	fs.IntVar(&f.runs, "runs", 0, "the budget: this many runs in all (default 100 when --time is not given)")
	fs.DurationVar(&f.time, "time", 0, "the budget: this long (of this shard), like 10m")
	fs.StringVar(&f.strategy, "strategy", explore.Guided, "how schedules are chosen: random or guided")
	fs.Func("seed", "the campaign's seed (default: the scenario's)", func(s string) error {
		_, err := fmt.Sscan(s, &f.seed)
		f.seedSet = err == nil
		return err
	})
	fs.StringVar(&f.driver, "driver", "", "what runs the schedules: sim, processes or servers (default: the fastest the scenario allows)")
	fs.StringVar(&f.cluster, "cluster", "", "on real servers: fresh (a cluster per run) or episodes (runs on one long-lived cluster) (default "+defaultCluster+")")
	fs.StringVar(&f.shard, "shard", "", "run only part k of n (k/n) of the campaign's lanes")
	fs.IntVar(&f.lanes, "lanes", 0, "independent searches of the campaign, split among shards (default: n of --shard, else 1)")
	fs.IntVar(&f.workers, "workers", 1, "runs under way at once")
	fs.StringVar(&f.out, "out", "", "write each run's result to this JSON-lines `file`, for coup explore merge")
	fs.StringVar(&f.store, "store", defaultStore(), storeUsage)
	fs.StringVar(&f.corpus, "corpus", "", "keep the guided corpus as scenario files in this `folder` (default STORE/<scenario>/corpus)")
	fs.StringVar(&f.junit, "junit", "", "write a JUnit XML `file`: one test case per kind of failure")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress line, no line per new kind of failure: the summary only")
	fs.BoolVar(&f.first, "first", false, "end the campaign at its first run not as expected")
	fs.BoolVar(&f.keep, "keep-passing", false, "keep the store folders of runs as expected too")
	files, code, ok := parseArgs(fs, exploreUsage, args)
	if !ok {
		return code
	}
	switch {
	case len(files) != 1:
		return usageError(fs, exploreUsage, "give one scenario file")
	case f.runs < 0 || f.time < 0:
		return usageError(fs, exploreUsage, "the budget must be positive")
	case f.workers < 1:
		return usageError(fs, exploreUsage, "--workers %d: want at least 1", f.workers)
	case f.strategy != explore.Random && f.strategy != explore.Guided:
		return usageError(fs, exploreUsage, "--strategy %q: want random or guided%s", f.strategy, scenario.DidYouMean(f.strategy, explore.Strategies))
	case f.cluster != "" && f.cluster != clusterFresh && f.cluster != clusterEpisodes:
		return usageError(fs, exploreUsage, "--cluster %q: want fresh or episodes%s", f.cluster, scenario.DidYouMean(f.cluster, []string{clusterFresh, clusterEpisodes}))
	}
	if f.runs == 0 && f.time == 0 {
		f.runs = 100
	}
	shard, shards := 1, 1
	if f.shard != "" {
		var err error
		if shard, shards, err = explore.ParseShard(f.shard); err != nil {
			return usageError(fs, exploreUsage, "--shard: %v", err)
		}
	}
	if f.lanes == 0 {
		f.lanes = shards
	}
	if f.lanes < shards {
		return usageError(fs, exploreUsage, "--lanes %d: a shard runs whole lanes, so %d shards need at least %d", f.lanes, shards, shards)
	}
	sc, err := scenario.Load(files[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	runner, err := pickRunner(sc, f)
	if err != nil {
		if errors.Is(err, errClusterFlag) {
			return usageError(fs, exploreUsage, "%v", err)
		}
		fmt.Fprintf(os.Stderr, "coup explore: %v\n", err)
		return verdict.ExitInput
	}
	if c, ok := runner.(io.Closer); ok {
		defer c.Close() // every cluster a session kept, stopped by pid
	}
	if !f.seedSet {
		f.seed = sc.Seed
	}
	if f.corpus == "" {
		f.corpus = filepath.Join(f.store, lifecycle.SafeName(sc.Name), "corpus")
	}
	return runCampaign(sc, runner, f, shard, shards)
}

// The ways real servers run a campaign's schedules (--cluster).
const (
	clusterFresh    = "fresh"    // a cluster per run
	clusterEpisodes = "episodes" // runs as episodes of one long-lived cluster (servers.Session)
)

// defaultCluster is --cluster's default: docs/performance.md's figures
// of runs per hour (coup bench --only episodes) chose it.
const defaultCluster = clusterFresh

// errClusterFlag marks a --cluster the scenario's driver cannot honour.
var errClusterFlag = errors.New("--cluster")

// pickRunner is the driver that runs the scenario's schedules.
func pickRunner(sc *scenario.Scenario, f exploreFlags) (explore.Runner, error) {
	d, err := drivers.Choose(sc, f.driver)
	if err != nil {
		return nil, fmt.Errorf("--driver %w", err)
	}
	if f.cluster != "" && d.Name != drivers.Servers {
		return nil, fmt.Errorf("%w %s: only real servers (--driver servers) have a cluster; %s runs on %s", errClusterFlag, f.cluster, sc.File, d.Name)
	}
	opts := drivers.Options{Store: f.store}
	if d.Name == drivers.Servers {
		cluster := f.cluster
		if cluster == "" {
			cluster = defaultCluster
		}
		opts.Episodes = cluster == clusterEpisodes
		if !f.quiet {
			opts.Notes = os.Stderr
		}
	}
	r, err := d.Runner(sc, opts)
	if err != nil && opts.Episodes {
		return nil, fmt.Errorf("--cluster episodes: %w", err)
	}
	return r, err
}

// runCampaign runs the campaign and prints what it finds as it goes, and
// its summary at the end.
func runCampaign(sc *scenario.Scenario, runner explore.Runner, f exploreFlags, shard, shards int) int {
	src, err := os.ReadFile(sc.File)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	sum := sha256.Sum256(src)
	camp := explore.Campaign{
		Scenario: sc, Runner: runner, Strategy: f.strategy, Seed: f.seed,
		Runs: f.runs, Time: f.time, Lanes: f.lanes, Shard: shard, Shards: shards, Workers: f.workers,
		KeepPassing: f.keep, First: f.first,
		Header: explore.CampaignHeader{File: sc.File, SHA256: hex.EncodeToString(sum[:]), Scenario: sc.Name, Build: build()},
	}
	if f.strategy == explore.Guided {
		camp.CorpusDir = f.corpus
	}
	if f.out != "" {
		out, err := os.Create(f.out)
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup explore: --out: %v\n", err)
			return verdict.ExitInput
		}
		defer out.Close()
		camp.Results = out
	}
	if f.junit != "" {
		// A path that cannot be written is a usage error, found at once.
		if err := writeCampaignJUnit(f.junit, sc, nil, time.Now()); err != nil {
			fmt.Fprintf(os.Stderr, "coup explore: %v\n", err)
			return verdict.ExitInput
		}
	}
	budget := fmt.Sprintf("%d runs", f.runs)
	switch {
	case f.time > 0 && f.runs > 0:
		budget = fmt.Sprintf("%d runs or %s", f.runs, f.time)
	case f.time > 0:
		budget = f.time.String()
	}
	part := ""
	if shards > 1 {
		from, n := explore.Shard(0, f.lanes, shard, shards)
		part = fmt.Sprintf(", shard %d/%d (lanes %d..%d of %d)", shard, shards, from, from+int64(n)-1, f.lanes)
	} else if f.lanes > 1 {
		part = fmt.Sprintf(", %d lanes", f.lanes)
	}
	fmt.Printf("%s: exploring on the %s, strategy %s, seed %d, %s%s\n", console.Printable(sc.File), driverWord(runner), f.strategy, f.seed, budget, part)
	fmt.Printf("  vocabulary: %s\n", vocabularyLine(sc.Vocabulary()))

	var last explore.CampaignProgress
	started := time.Now()
	line := console.NewStatus(os.Stdout, !f.quiet && isTerminal(os.Stdout), func() string { return campaignLine(last, time.Since(started), statusWidth) })
	tenths := 0
	camp.Progress = func(p explore.CampaignProgress) {
		line.Set(func() { last = p })
		if f.quiet {
			return
		}
		if p.NewKind {
			for _, g := range groupsOf(p.Tally, p.Last) {
				line.Printf("run %d %s: %s\n", p.Last.Run, newKindWords(g), console.Printable(g.Signature))
			}
			line.Printf("  schedule: %s\n", console.Printable(p.Last.Schedule))
			if p.Last.Dir != "" {
				line.Printf("  kept: %s   rerun: %s\n", console.Printable(p.Last.Dir), rerun(runner, p.Last.Dir))
			}
		}
		if !isTerminal(os.Stdout) {
			if tenth := progressTenth(p, camp); tenth > tenths {
				tenths = tenth
				line.Printf("  %s\n", campaignLine(p, time.Since(started), 0))
			}
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A second signal kills every process and leaves at once.
		<-ctx.Done()
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		<-again
		proc.KillAll()
		fmt.Fprintln(os.Stderr, "\ncoup: a second signal: every process was killed; stopping now (exit 3)")
		os.Exit(verdict.ExitUnknown)
	}()
	res, err := camp.Run(ctx)
	line.Close()
	if res == nil {
		fmt.Fprintf(os.Stderr, "coup explore: %v\n", err)
		if errors.Is(err, explore.ErrBadCampaign) {
			return verdict.ExitInput
		}
		return verdict.ExitUnknown
	}
	code := printCampaign(res, runner, camp, f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup explore: %v\n", err)
		code = catalogue.Worst(code, verdict.ExitUnknown)
	}
	if f.junit != "" {
		if err := writeCampaignJUnit(f.junit, sc, res, started); err != nil {
			fmt.Fprintf(os.Stderr, "coup explore: %v\n", err)
			code = catalogue.Worst(code, verdict.ExitUnknown)
		}
	}
	return code
}

func driverWord(r explore.Runner) string {
	switch r.Name() {
	case "simulator":
		return "simulator"
	case "servers":
		return "real servers"
	}
	return "node processes"
}

// rerun is the command that runs a kept run's scenario again.
func rerun(r explore.Runner, dir string) string {
	file := console.ShellQuote(filepath.Join(dir, explore.ScenarioFile))
	if r.Exact() {
		return "coup sim " + file
	}
	return "coup run " + file
}

// vocabularyLine is the vocabulary on one line.
func vocabularyLine(v scenario.Vocabulary) string {
	var kinds, triggers []string
	for _, k := range v.Kinds {
		kinds = append(kinds, string(k))
	}
	for _, t := range v.Triggers {
		triggers = append(triggers, string(t))
	}
	faults := "faults"
	if v.MaxFaults == 1 {
		faults = "fault"
	}
	return fmt.Sprintf("%s · targets %s · on %s · up to %d %s, each for %s–%s",
		strings.Join(kinds, ", "), strings.Join(v.Targets, ", "), strings.Join(triggers, ", "), v.MaxFaults, faults, v.For[0], v.For[1])
}

// progressTenth is how many tenths of its budget a campaign has spent.
func progressTenth(p explore.CampaignProgress, c explore.Campaign) int {
	t := 0
	if p.Budget > 0 {
		t = p.Runs * 10 / p.Budget
	}
	if c.Time > 0 {
		t = max(t, int(p.Elapsed*10/c.Time))
	}
	return t
}

// statusWidth is the most a progress line kept below the output on a
// terminal takes: a longer one would wrap, and be drawn again below.
const statusWidth = 79

// newKindWords says what a run that showed a kind of failure first is, in
// terms its summary's counts agree with: a failure not as expected, a
// violation the scenario expects, or a run that could not be carried out.
func newKindWords(g *explore.RunGroup) string {
	switch {
	case g.First.Error != "":
		return "could not be carried out"
	case g.AsExpected:
		return "showed a violation the scenario expects, a new kind"
	case g.FromMachine():
		return "failed a new way, from the machine, not a fault (at start-up, or timers late)"
	case g.First.Outcome == verdict.Unknown:
		return "had no verdict, a new way"
	}
	return "failed a new way"
}

// campaignLine is the progress line: runs, distinct behaviours, corpus,
// failures by kind, faults that never fired, the time, the time left. It
// is cut to width when width is positive (the line on a terminal), whole
// otherwise (a line among the output, in a file).
func campaignLine(p explore.CampaignProgress, elapsed time.Duration, width int) string {
	s := fmt.Sprintf("[%d", p.Runs)
	if p.Budget > 0 {
		s += fmt.Sprintf("/%d", p.Budget)
	}
	s += fmt.Sprintf(" runs] %d behaviours", p.Behaviours)
	if p.Corpus > 0 {
		s += fmt.Sprintf(" · corpus %d", p.Corpus)
	}
	if p.Tally != nil {
		groups := p.Tally.Groups()
		switch len(groups) {
		case 0:
			s += " · no failure"
		default:
			var parts []string
			for _, g := range groups {
				parts = append(parts, fmt.Sprintf("%s %d", shortKind(g.Signature), g.Count))
			}
			s += " · failed: " + strings.Join(parts, ", ")
		}
	}
	if p.Tally != nil && p.Tally.Unfired > 0 {
		s += fmt.Sprintf(" · %s with a fault that never fired", console.Plural(p.Tally.Unfired, "run", "runs"))
	}
	s += " · " + elapsed.Round(time.Second).String()
	if p.Left > 0 {
		s += fmt.Sprintf(" (%s left)", p.Left.Round(time.Second))
	}
	if r := []rune(s); width > 0 && len(r) > width {
		s = string(r[:width-1]) + "…"
	}
	return console.Printable(s)
}

// shortKind is a signature shortened for the progress line: its check and
// the first words of its cause, "two-leaders (restarted under the same
// id)" for "two-leaders: nodes both … (restarted under the same id; no
// fault in force)"; a signature without a cause, its check alone.
func shortKind(sig string) string {
	name, rest, _ := strings.Cut(sig, ":")
	i := strings.LastIndex(rest, " (")
	if i < 0 || !strings.HasSuffix(rest, ")") {
		return name
	}
	cause := rest[i+2 : len(rest)-1]
	if j := strings.IndexAny(cause, ",;"); j >= 0 {
		cause = cause[:j]
	}
	return name + " (" + cause + ")"
}

// groupsOf are the groups a failing run was the first of: one per
// distinct cause it showed first.
func groupsOf(t *explore.Tally, r explore.RunResult) []*explore.RunGroup {
	var out []*explore.RunGroup
	for _, g := range t.Groups() {
		if g.First.Run == r.Run {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		out = append(out, &explore.RunGroup{Signature: r.Signature, First: r})
	}
	return out
}

// printCampaign prints a campaign's summary and returns its exit code.
func printCampaign(res *explore.CampaignResult, runner explore.Runner, c explore.Campaign, f exploreFlags) int {
	t := res.Tally
	fmt.Printf("%d runs in %s: %d as expected, %d unexpected, %d unknown", t.Runs, res.Wall.Round(time.Millisecond), t.AsExpected, t.Unexpected, t.Unknown)
	if t.Error > 0 {
		fmt.Printf(", %d could not run", t.Error)
	}
	fmt.Printf("; %d behaviours", res.Behaviours)
	if c.Strategy == explore.Guided {
		fmt.Printf(", corpus of %d schedules in %s", res.Corpus, console.Printable(c.CorpusDir))
	}
	fmt.Println()
	printGroups(t, func(g *explore.RunGroup) string {
		if g.First.Dir == "" {
			return ""
		}
		return rerun(runner, g.First.Dir)
	})
	if f.out != "" {
		fmt.Printf("results of every run: %s\n", f.out)
	}
	if f.junit != "" {
		fmt.Printf("JUnit: %s\n", f.junit)
	}
	code := campaignCode(t, res.Interrupted)
	if res.Interrupted {
		fmt.Fprintf(os.Stderr, "coup: interrupted: the runs under way were stopped and not counted; what was found is written (exit %d)\n", code)
	}
	return code
}

// unfiredLine says how many runs had a fault that never fired, "" for
// none.
func unfiredLine(t *explore.Tally) string {
	if t.Unfired == 0 {
		return ""
	}
	s := fmt.Sprintf("faults that never fired: %s in %s of %d (a trigger nothing in the run set off: those faults never happened)",
		console.Plural(t.UnfiredFaults, "fault", "faults"), console.Plural(t.Unfired, "run", "runs"), t.Runs)
	if t.Idle > 0 {
		s += fmt.Sprintf("; in %s no fault of the schedule happened at all", console.Plural(t.Idle, "run", "runs"))
	}
	return s
}

// alsoLine says which other checks failed in a group's runs besides the
// one its signature names, "" for none.
func alsoLine(g *explore.RunGroup) string {
	if len(g.Also) == 0 {
		return ""
	}
	names := make([]string, 0, len(g.Also))
	for name := range g.Also {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s in %d", name, g.Also[name])
	}
	return fmt.Sprintf("other checks that failed too, of its %d runs: %s", g.Count, strings.Join(parts, ", "))
}

// printGroups prints each kind of failure, in the order of their first
// runs: how often, where the first is kept, and how to run it again; the
// findings of the machine (an overlap at start-up, before any fault;
// runs whose timers all ran late) apart, after those of the system under
// the schedules' faults.
func printGroups(t *explore.Tally, rerunOf func(*explore.RunGroup) string) {
	if line := unfiredLine(t); line != "" {
		fmt.Println(line)
	}
	groups := t.Groups()
	if len(groups) == 0 {
		fmt.Printf("no run failed; %s\n", explore.Findability{Found: 0, Seeds: t.Runs}.In("run"))
		return
	}
	var system, machine []*explore.RunGroup
	for _, g := range groups {
		if g.FromMachine() {
			machine = append(machine, g)
		} else {
			system = append(system, g)
		}
	}
	switch {
	case len(system) > 0:
		fmt.Printf("failures, by kind (signature):\n")
		printGroupList(t, system, rerunOf)
	default:
		fmt.Printf("no failure after a fault of a schedule; %s\n", explore.Findability{Found: 0, Seeds: t.Runs}.In("run"))
	}
	if len(machine) > 0 {
		fmt.Printf("from the machine, not the schedules' faults (an overlap at start-up, before any fault; timers late past the scenario's bounds):\n")
		printGroupList(t, machine, rerunOf)
	}
}

func printGroupList(t *explore.Tally, groups []*explore.RunGroup, rerunOf func(*explore.RunGroup) string) {
	for _, g := range groups {
		what := "not as expected"
		if g.AsExpected {
			what = "as expected"
		}
		fmt.Printf("  %s (%s)\n", console.Printable(g.Signature), what)
		fmt.Printf("    %s\n", t.Found(g).In("run"))
		if also := alsoLine(g); also != "" {
			fmt.Printf("    %s\n", also)
		}
		if g.Late > 0 {
			fmt.Printf("    timers ran late past the scenario's bounds in %d of its %d runs\n", g.Late, g.Count)
		}
		fmt.Printf("    first at run %d: %s\n", g.First.Run, console.Printable(g.First.Schedule))
		if g.First.Detail != "" && g.First.Signature == g.Signature {
			fmt.Printf("    %s\n", console.Printable(g.First.Detail))
		}
		if g.First.Machine != "" {
			fmt.Printf("    %s\n", console.Printable(g.First.Machine))
		}
		if g.First.Dir != "" {
			fmt.Printf("    kept: %s\n", console.Printable(g.First.Dir))
		}
		if cmd := rerunOf(g); cmd != "" {
			fmt.Printf("    rerun: %s\n", cmd)
		}
	}
}

// campaignCode is a campaign's exit code: 1 when a run was not as
// expected, else 3 when one had no verdict or the campaign was
// interrupted, else 0.
func campaignCode(t *explore.Tally, interrupted bool) int {
	switch {
	case t.Unexpected > 0:
		return verdict.ExitUnexpected
	case t.Unknown > 0 || t.Error > 0 || interrupted:
		return verdict.ExitUnknown
	}
	return verdict.ExitOK
}

// writeCampaignJUnit writes the campaign as JUnit XML: a test case per
// kind of failure (failed when not as expected), or one passing case when
// nothing failed. res nil writes the file as it stands before any run.
func writeCampaignJUnit(path string, sc *scenario.Scenario, res *explore.CampaignResult, started time.Time) error {
	var runs []catalogue.Run
	interrupted := false
	if res != nil {
		interrupted = res.Interrupted
		t := res.Tally
		for _, g := range t.Groups() {
			r := catalogue.Planned(sc.Name+": "+g.Signature, sc.File, 1, 1)
			r.Outcome, r.ExitCode, r.Store = g.First.Outcome, verdict.ExitUnexpected, g.First.Dir
			switch {
			case g.First.Error != "":
				r.Outcome, r.ExitCode, r.Error = verdict.Unknown, verdict.ExitUnknown, g.First.Error
			case g.AsExpected:
				r.ExitCode = verdict.ExitOK
			case g.First.Outcome == verdict.Unknown:
				r.ExitCode = verdict.ExitUnknown
			}
			var v checks.Validity
			if err := v.UnmarshalJSON([]byte(validJSON(g.First.Valid))); err == nil && g.First.Valid != "" {
				r.Valid = &v
			}
			r.Started, r.Duration = started.UTC(), g.First.WallNS
			r.Notes = []string{fmt.Sprintf("%s: %s", g.Signature, t.Found(g).In("run")),
				fmt.Sprintf("first at run %d: %s", g.First.Run, g.First.Schedule)}
			if g.First.Note != "" {
				r.Notes = append(r.Notes, g.First.Note)
			}
			runs = append(runs, r)
		}
		if len(runs) == 0 {
			r := catalogue.Planned(fmt.Sprintf("%s: %d runs explored", sc.Name, t.Runs), sc.File, 1, 1)
			r.Outcome, r.ExitCode, r.Started, r.Duration = verdict.AsExpected, verdict.ExitOK, started.UTC(), int64(res.Wall)
			if interrupted || t.Unknown > 0 {
				r.Outcome, r.ExitCode = verdict.Unknown, verdict.ExitUnknown
				r.Error = "the campaign was interrupted before its budget was spent"
			}
			runs = append(runs, r)
		}
	}
	cat := catalogue.New(started, runs)
	cat.Stop(interrupted, time.Now())
	return cat.WriteJUnitFile(path)
}

// validJSON is a results line's valid as JSON.
func validJSON(v string) string {
	if v == "true" || v == "false" {
		return v
	}
	return `"` + v + `"`
}

const exploreMergeUsage = `usage: coup explore merge RESULTS.jsonl...
  combine the results files of a campaign's shards (coup explore FILE --shard k/n --out FILE):
  the failures by kind (signature), deduplicated, how findable each is, and where the first is kept
flags:
`

// exploreMerge combines the results files of one campaign.
func exploreMerge(args []string) int {
	fs := newFlags("explore merge")
	paths, code, ok := parseArgs(fs, exploreMergeUsage, args)
	if !ok {
		return code
	}
	if len(paths) == 0 {
		return usageError(fs, exploreMergeUsage, "give the results files to merge")
	}
	var files []*explore.CampaignFile
	for _, p := range paths {
		cf, err := explore.ReadCampaign(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "coup: %v\n", err)
			return verdict.ExitInput
		}
		files = append(files, cf)
	}
	m, err := explore.MergeCampaigns(files)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		return verdict.ExitInput
	}
	h := m.Header
	fmt.Printf("merged %d files: the %s campaign of %s on the %s, seed %d, %d lanes\n", len(files), h.Strategy, console.Printable(h.File), h.Driver, h.Seed, h.Lanes)
	t := m.Tally
	fmt.Printf("%d runs: %d as expected, %d unexpected, %d unknown", t.Runs, t.AsExpected, t.Unexpected, t.Unknown)
	if t.Error > 0 {
		fmt.Printf(", %d could not run", t.Error)
	}
	fmt.Println()
	printGroups(t, func(g *explore.RunGroup) string {
		if g.First.Dir == "" {
			return ""
		}
		if h.Exact {
			return "coup sim " + console.ShellQuote(filepath.Join(g.First.Dir, explore.ScenarioFile))
		}
		return "coup run " + console.ShellQuote(filepath.Join(g.First.Dir, explore.ScenarioFile))
	})
	if len(m.MissingLanes) > 0 {
		fmt.Printf("MISSING lanes %s of %d (a shard not given)\n", intList(m.MissingLanes), h.Lanes)
	}
	for _, p := range m.Incomplete {
		fmt.Printf("INCOMPLETE: %s has no end line: its shard did not finish\n", p)
	}
	for _, p := range m.Interrupted {
		fmt.Printf("INTERRUPTED: %s: its shard was stopped before its budget was spent\n", p)
	}
	code = campaignCode(t, false)
	if code == verdict.ExitOK && (len(m.MissingLanes) > 0 || len(m.Incomplete) > 0 || len(m.Interrupted) > 0) {
		code = verdict.ExitUnknown
	}
	return code
}

func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
