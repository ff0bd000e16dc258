package explore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

func TestKind(t *testing.T) {
	tests := []struct{ explanation, want string }{
		{"n5 and n4 both believed they were the leader from 0.309s to 0.310s (819µs): n5 claimed leadership at 0.307s (restarted under the same id at 0.307s after it crashed at 0.302s), and n4 claimed it at 0.309s",
			"nodes both believed they were the leader"},
		{"n5 and n4 both believed they were the leader at 0.307s, for 115µs: n5 claimed leadership at 0.305s", "nodes both believed they were the leader"},
		{"n4 and n3 both believed they were the leader from 0.017s to 0.035s (17ms): n5 claimed leadership at 0.000s; 8 pairs of claims overlap in all",
			"nodes both believed they were the leader"},
		{"the 16 operations are not linearizable against a lock: the longest order porcupine can fit takes 1 operation", "the operations are not linearizable against a lock"},
		{"the 1 operation is not linearizable against a lock: the longest order", "the operations are not linearizable against a lock"},
		{"n1, n2, n3 and n5, live at 0.320s (300ms after the last elect request at 0.020s), believed in no leader: the election did not finish", "nodes, live, believed in no leader"},
		{"n5, live at 0.585s (400ms after the last nemesis event (crash start) at 0.185s), believed in no leader: the election", "a node, live, believed in no leader"},
		{"8 of the 8 acquires invoked at live nodes after the last nemesis event (crash start at 0.300s) were not granted within 300ms: the first", "some of the acquires invoked at live nodes after the last nemesis event were not granted"},
		{"1 of the 3 acquires invoked at live nodes after the last nemesis event (crash start at 0.300s) was not granted within 300ms: the first", "some of the acquires invoked at live nodes after the last nemesis event were not granted"},
		{`message 3 (election, n3→n4) was corrupted by the nemesis at 0.040s (field "round": 1 → 3; body now {}) and delivered`, "messages were corrupted by the nemesis"},
		{`message 3 (election, n3→n4) was altered by a joker, n3, at 0.038s (field "payload": "n1/1/c7e" → "i1/1/c7e"`, "messages were altered by a joker, a node"},
		{"every correct node (n1, n2, n3, n4 and n5) has trusted n1 since 1.019s, when n3 changed from n2 to n1: 419ms later", "every correct node has trusted a node, when a node changed from a node to a node"},
		// lost-writes: when and while which faults the writes were
		// acknowledged is the cause's business, not the kind's.
		{"346 of 2000 acknowledged adds are lost (no final read invoked after its acknowledgement has it), acknowledged from 1.470s to 2.604s by n1, while faults[0]#1 (partition isolate n1); lost: 17, 18; counts", "some of the acknowledged adds are lost"},
		{"1 of 12 acknowledged writes is lost (no final read …), acknowledged in 2 windows: 1 from 1.1s to 1.2s by n2", "some of the acknowledged writes are lost"},
		// validity: one node is live, not "a node are live".
		{"at the end of the run (1.000s) n1, n2 and n3 believe in n2 (id 2), but n3 (id 3) is live; n3, the live node with the highest id, should have been elected",
			"at the end of the run nodes believe in a node, but a node is live"},
		{"at the end of the run (1.000s) n1 believes in n3, but n3 is not live (crashed at 0.5s); a live node should have been elected",
			"at the end of the run a node believes in a node, but a node is not live"},
	}
	for _, tt := range tests {
		if got := Kind(tt.explanation); strings.ContainsAny(got, "#[]") {
			t.Errorf("Kind(%.60q…) = %q: a placeholder", tt.explanation, got)
		}
	}
	for _, tt := range tests {
		if got := Kind(tt.explanation); got != tt.want {
			t.Errorf("Kind(%.60q…) = %q, want %q", tt.explanation, got, tt.want)
		}
	}
}

func results(expect history.Expect, verdicts ...checks.Result) *verdict.Results {
	r := &verdict.Results{Expected: expect, Checks: map[string]checks.Result{}, Outcome: verdict.AsExpected, Valid: checks.True}
	for _, v := range verdicts {
		r.Checks[v.Name] = v
		r.Order = append(r.Order, v.Name)
		r.Valid = checks.Compose(r.Valid, v.Valid)
	}
	return r
}

func TestSignature(t *testing.T) {
	held := checks.Result{Name: "agreement", Valid: checks.True}
	two := checks.Result{Name: "two-leaders", Valid: checks.False, Explanation: "n1 and n2 both believed they were the leader at 0.1s, for 3ms: …"}
	term := checks.Result{Name: "termination", Valid: checks.False, Explanation: "n1, live at 0.3s, believed in no leader: …"}
	unk := checks.Result{Name: "termination", Valid: checks.Unknown, Explanation: "the history ends early"}
	tests := []struct {
		name string
		res  *verdict.Results
		want string
	}{
		{"as expected and valid", results(history.Expect{Valid: true}, with(two, checks.True), held), ""},
		{"a violation", results(history.Expect{Valid: true}, two, held), "two-leaders: nodes both believed they were the leader"},
		{"an expected violation", results(history.Expect{Violations: []string{"two-leaders"}}, two, held), "two-leaders: nodes both believed they were the leader"},
		{"two violations: the first alone", results(history.Expect{Valid: true}, two, held, term), "two-leaders: nodes both believed they were the leader"},
		{"a check of the outcome after one of the moments", results(history.Expect{Valid: true}, term, two), "two-leaders: nodes both believed they were the leader"},
		{"unknown", results(history.Expect{Valid: true}, held, unk), "termination: unknown"},
		{"an expected violation missing", results(history.Expect{Violations: []string{"termination"}}, held, with(term, checks.True)), "no violation: termination held (a violation was expected)"},
		{"any violation expected, none found", results(history.Expect{}, held), "no violation (one was expected)"},
		{"a node's own exit, every check held", exited(results(history.Expect{Valid: true}, held), false), "exit: n2 exited on its own (exit status 1)"},
		{"an expected exit is no signature", exited(results(history.Expect{Valid: true}, held), true), ""},
	}
	for _, tt := range tests {
		if tt.want != "" && tt.res.Valid != checks.False {
			tt.res.Outcome = verdict.Unexpected
		}
		if got := Signature(tt.res, nil); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func with(r checks.Result, v checks.Validity) checks.Result { r.Valid = v; return r }

// exited adds n2's own exit to res, expected by the scenario or not, with
// the outcome that follows.
func exited(res *verdict.Results, expected bool) *verdict.Results {
	res.Exits = []verdict.Exit{{Time: 1e9, Node: "n2", Process: "n2", Status: "exit status 1", Expected: expected}}
	if expected {
		res.Outcome = verdict.AsExpected
	}
	return res
}

// electionHistory is a hand-made history of an election on n1..n3
// checked by two-leaders and agreement: each event at its time in
// milliseconds, the end at endMS.
func electionHistory(t *testing.T, endMS float64, events ...history.Event) *history.History {
	t.Helper()
	meta := &history.Meta{Scenario: "hand", Algorithm: "bully", Nodes: []string{"n1", "n2", "n3"},
		Checks: []string{"two-leaders", "agreement"}, Expect: &history.Expect{Valid: true}}
	all := []history.Event{{Kind: history.KindMeta, Meta: meta}}
	for _, n := range meta.Nodes {
		all = append(all, history.Event{Kind: history.KindProcess, What: history.ProcStart, Node: n, Incarnation: 1})
	}
	all = append(all, events...)
	all = append(all, history.Event{Time: ms(endMS), Kind: history.KindEnd})
	for i := range all {
		all[i].Index = int64(i)
	}
	h, err := history.FromEvents(all)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func ms(x float64) int64 { return int64(x * 1e6) }

func leads(at float64, node, leader string) history.Event {
	return history.Event{Time: ms(at), Kind: history.KindReport, What: history.ReportLeader, Node: node, Value: leader}
}

func fault(at float64, kind, phase, name string, nodes ...string) history.Event {
	return history.Event{Time: ms(at), Kind: history.KindNemesis, What: kind, Phase: phase, Name: name, Nodes: nodes}
}

func process(at float64, node, what string, inc int) history.Event {
	return history.Event{Time: ms(at), Kind: history.KindProcess, What: what, Node: node, Incarnation: inc}
}

func judged(t *testing.T, h *history.History) *verdict.Results {
	t.Helper()
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// An overlap at start-up with no fault in force, and one after a node was
// restarted under the same id, are two failures: the same check and kind,
// two causes, two signatures, each its own group in a campaign's tally.
func TestSignatureStartUpAndRestartDiffer(t *testing.T) {
	startUp := electionHistory(t, 1000,
		leads(10, "n1", "n1"), leads(12, "n2", "n2"), leads(12, "n3", "n2"), leads(30, "n1", "n2"))
	restart := electionHistory(t, 1000,
		leads(5, "n1", "n3"), leads(5, "n2", "n3"), leads(5, "n3", "n3"),
		fault(300, "replace", history.PhaseStart, "faults[0]#1", "n3"),
		process(300, "n3", history.ProcCrash, 1), process(301, "n3", history.ProcStart, 2),
		leads(302, "n2", "n2"), leads(302, "n1", "n2"), leads(305, "n3", "n3"), leads(320, "n3", "n2"))
	a, b := Signature(judged(t, startUp), startUp), Signature(judged(t, restart), restart)
	if want := "two-leaders: nodes both believed they were the leader (at start-up, before any fault)"; a != want {
		t.Errorf("at start-up: %q, want %q", a, want)
	}
	if want := "two-leaders: nodes both believed they were the leader (restarted under the same id; no fault in force)"; b != want {
		t.Errorf("after a restart: %q, want %q", b, want)
	}

	// In a campaign's tally (what its summary prints), each is a kind of
	// its own with its own first run.
	runner := &cannedRunner{histories: []*history.History{startUp, restart, startUp, restart}}
	res, err := Campaign{Scenario: loadFake(t), Runner: runner, Strategy: Random, Seed: 1, Runs: 4}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	groups := res.Tally.Groups()
	if len(groups) != 2 || groups[0].Signature != a || groups[1].Signature != b ||
		groups[0].First.Run != 1 || groups[1].First.Run != 2 || groups[0].Count != 2 || groups[1].Count != 2 {
		for _, g := range groups {
			t.Logf("%d runs, first %d: %s", g.Count, g.First.Run, g.Signature)
		}
		t.Fatalf("%d groups, want the two signatures, first at runs 1 and 2, twice each", len(groups))
	}
}

// One cause, a leader cut off while another was elected, is one failure
// whatever else failed with it: two-leaders alone, with agreement (the
// old leader still led at the end), or with lost-writes (whose lost
// writes were acknowledged before the overlap began).
func TestSignatureOneCauseWithOtherChecks(t *testing.T) {
	cut := []history.Event{
		leads(5, "n1", "n1"), leads(5, "n2", "n1"), leads(5, "n3", "n1"),
		fault(1000, "partition", history.PhaseStart, "faults[0]#1", "n1"),
		leads(1500, "n2", "n2"), leads(1500, "n3", "n2"),
		fault(3000, "partition", history.PhaseEnd, "faults[0]#1", "n1"),
	}
	alone := electionHistory(t, 5000, append(slices.Clone(cut), leads(3100, "n1", "n2"))...)
	withAgreement := electionHistory(t, 5000, cut...)
	withLost := electionHistory(t, 5000, append(slices.Clone(cut), leads(3100, "n1", "n2"))...)

	r1, r2, r3 := judged(t, alone), judged(t, withAgreement), judged(t, withLost)
	r3.Checks["lost-writes"] = checks.Result{Name: "lost-writes", Valid: checks.False, Nodes: []string{"n1"},
		Interval:    &checks.Interval{From: ms(1200), To: ms(2900)},
		Explanation: "346 of 2000 acknowledged adds are lost (no final read has them), acknowledged from 1.200s to 2.900s by n1, while faults[0]#1 (partition isolate n1); lost: …"}
	r3.Order = append(r3.Order, "lost-writes")
	r3.Valid, r3.Outcome = checks.False, verdict.Unexpected
	if r1.Checks["agreement"].Valid != checks.True || r2.Checks["agreement"].Valid != checks.False {
		t.Fatalf("the histories are not what the test needs: agreement %v and %v", r1.Checks["agreement"].Valid, r2.Checks["agreement"].Valid)
	}
	want := "two-leaders: nodes both believed they were the leader (cut off; in force: partition)"
	for i, s := range []string{Signature(r1, alone), Signature(r2, withAgreement), Signature(r3, withLost)} {
		if s != want {
			t.Errorf("variant %d: %q, want %q", i+1, s, want)
		}
	}
}

// cannedRunner gives the histories it holds in turn, judged.
type cannedRunner struct {
	histories []*history.History
	n         atomic.Int64
}

func (r *cannedRunner) Exact() bool  { return false }
func (r *cannedRunner) Name() string { return "canned" }
func (r *cannedRunner) Run(ctx context.Context, sc *scenario.Scenario) (*Run, error) {
	h := r.histories[int(r.n.Add(1)-1)%len(r.histories)]
	res, err := verdict.Evaluate(h)
	return &Run{Results: res, History: h}, err
}

// Lost writes are lost by what follows their acknowledgement: writes
// acknowledged just before a power failure of their master, the first
// fault of the run, are lost by that crash, not "at start-up"; writes
// acknowledged long before any fault are lost with none begun.
func TestSignatureLostWritesByTheFaultAfterThem(t *testing.T) {
	crash := []history.Event{
		leads(5, "n1", "n1"), leads(5, "n2", "n1"), leads(5, "n3", "n1"),
		fault(4525, "crash", history.PhaseStart, "faults[0]#1", "n1"),
		process(4525, "n1", history.ProcCrash, 1),
		fault(4640, "crash", history.PhaseEnd, "faults[0]#1", "n1"),
		process(4640, "n1", history.ProcStart, 2),
	}
	for _, c := range []struct {
		from, to float64
		want     string
	}{
		{4492, 4523, "lost-writes: some of the acknowledged adds are lost (in force: crash)"},
		{1000, 1200, "lost-writes: some of the acknowledged adds are lost (at start-up, before any fault)"},
	} {
		h := electionHistory(t, 9000, crash...)
		res := judged(t, h)
		res.Checks["lost-writes"] = checks.Result{Name: "lost-writes", Valid: checks.False, Nodes: []string{"n1"},
			Interval:    &checks.Interval{From: ms(c.from), To: ms(c.to)},
			Explanation: "15 of 2931 acknowledged adds are lost (no final read invoked after its acknowledgement has it), acknowledged from 4.492s to 4.523s (31ms) by n1, while faults[0]#1 (crash n1: power failure: torn; for 114.3ms); lost: 669, 667"}
		res.Order = append(res.Order, "lost-writes")
		res.Valid, res.Outcome = checks.False, verdict.Unexpected
		if got := Signature(res, h); got != c.want {
			t.Errorf("lost from %gms to %gms: %q, want %q", c.from, c.to, got, c.want)
		}
	}
}

// bounded is h with a recovery bound (the termination bound a run's meta
// event gives) of boundMS.
func bounded(h *history.History, boundMS float64) *history.History {
	h.Meta.Termination = ms(boundMS)
	return h
}

// An overlap of a node restarted under the same id while it was cut off,
// the partition healed just before, and one of a node restarted with no
// fault near: two causes, two signatures (a correct bully shows the
// first, one that forgets its restart the second). A heal long before is
// no part of the cause; nor is one within the bound in a history that
// gives none.
func TestSignatureHealedJustBefore(t *testing.T) {
	restart := []history.Event{
		leads(5, "n1", "n3"), leads(5, "n2", "n3"), leads(5, "n3", "n3"),
		fault(300, "replace", history.PhaseStart, "faults[0]#1", "n3"),
		process(300, "n3", history.ProcCrash, 1), process(301, "n3", history.ProcStart, 2),
		leads(302, "n2", "n2"), leads(302, "n1", "n2"), leads(305, "n3", "n3"), leads(320, "n3", "n2"),
	}
	isolated := func(healMS float64) []history.Event {
		return []history.Event{
			leads(5, "n1", "n3"), leads(5, "n2", "n3"), leads(5, "n3", "n3"),
			fault(100, "partition", history.PhaseStart, "faults[0]#1", "n3"),
			leads(140, "n3", ""), leads(150, "n2", "n2"), leads(150, "n1", "n2"),
			fault(200, "replace", history.PhaseStart, "faults[1]#1", "n3"),
			process(200, "n3", history.ProcCrash, 1), process(201, "n3", history.ProcStart, 2),
			leads(202, "n3", ""),
			fault(healMS, "partition", history.PhaseEnd, "faults[0]#1", "n3"),
			leads(504, "n3", "n3"), leads(520, "n3", "n2"), leads(521, "n2", "n3"), leads(521, "n1", "n3"),
		}
	}
	healedNoRestart := []history.Event{
		leads(5, "n1", "n3"), leads(5, "n2", "n3"), leads(5, "n3", "n3"),
		fault(100, "partition", history.PhaseStart, "faults[0]#1", "n3"),
		leads(140, "n3", ""), leads(150, "n2", "n2"), leads(150, "n1", "n2"),
		fault(500, "partition", history.PhaseEnd, "faults[0]#1", "n3"),
		leads(504, "n3", "n3"), leads(520, "n2", "n3"), leads(520, "n1", "n3"),
	}
	const kind = "two-leaders: nodes both believed they were the leader"
	tests := []struct {
		name         string
		h            *history.History
		want, detail string
	}{
		{"restarted, no fault near", bounded(electionHistory(t, 1000, restart...), 300),
			kind + " (restarted under the same id; no fault in force)", ""},
		{"restarted while cut off, healed 4ms before", bounded(electionHistory(t, 1000, isolated(500)...), 300),
			kind + " (restarted under the same id; a partition healed just before)", "it began 4ms after a partition of n3 healed"},
		{"restarted while cut off, healed 100ms before", bounded(electionHistory(t, 1000, isolated(404)...), 300),
			kind + " (restarted under the same id; a partition healed just before)", "it began 100ms after a partition of n3 healed"},
		{"restarted while cut off, healed long before", bounded(electionHistory(t, 1000, isolated(203)...), 300),
			kind + " (restarted under the same id; no fault in force)", ""},
		{"cut off, healed 4ms before", bounded(electionHistory(t, 1000, healedNoRestart...), 300),
			kind + " (a partition healed just before)", "it began 4ms after a partition of n3 healed"},
		{"a history with no recovery bound", electionHistory(t, 1000, healedNoRestart...),
			kind + " (no fault in force)", ""},
		// A crash's end is its node's restart, which the cause names.
		{"restarted at a crash's end", bounded(electionHistory(t, 1000,
			leads(5, "n1", "n3"), leads(5, "n2", "n3"), leads(5, "n3", "n3"),
			fault(250, "crash", history.PhaseStart, "faults[0]#1", "n3"), process(250, "n3", history.ProcCrash, 1),
			leads(280, "n2", "n2"), leads(280, "n1", "n2"),
			fault(300, "crash", history.PhaseEnd, "faults[0]#1", "n3"), process(301, "n3", history.ProcStart, 2),
			leads(305, "n3", "n3"), leads(320, "n3", "n2")), 300),
			kind + " (restarted under the same id; no fault in force)", ""},
	}
	for _, tt := range tests {
		res := judged(t, tt.h)
		if got := Signature(res, tt.h); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if cs := Causes(res, tt.h); len(cs) == 0 || cs[0].Detail != tt.detail {
			t.Errorf("%s: causes %+v, want the first's detail %q", tt.name, cs, tt.detail)
		}
	}
}

// electsHistory is electionHistory on n1..n3 with ids 1..3, the highest
// elected, checked by two-leaders and validity.
func electsHistory(t *testing.T, endMS float64, events ...history.Event) *history.History {
	t.Helper()
	h := electionHistory(t, endMS, events...)
	h.Meta.IDs, h.Meta.Elects, h.Meta.Checks = []int{1, 2, 3}, "max", []string{"two-leaders", "validity"}
	return h
}

// A node that elects a lower id (n2 while n3 is live) from the start,
// and an overlap later while a partition cut n3 off: validity's wrong
// leader came first, so the run is found under a signature that names
// validity (the wrong leader chosen at start-up), and under the
// overlap's too, its second cause. A run whose validity fails for the
// overlap's own cause counts once.
func TestSignatureValidityFirst(t *testing.T) {
	lower := electsHistory(t, 1000,
		leads(5, "n1", "n2"), leads(5, "n2", "n2"), leads(5, "n3", "n2"),
		fault(400, "partition", history.PhaseStart, "faults[0]#1", "n3"),
		leads(450, "n3", "n3"),
		fault(600, "partition", history.PhaseEnd, "faults[0]#1", "n3"),
		leads(610, "n3", "n2"))
	res := judged(t, lower)
	if res.Checks["two-leaders"].Valid != checks.False || res.Checks["validity"].Valid != checks.False {
		t.Fatalf("the history is not what the test needs: two-leaders %v, validity %v", res.Checks["two-leaders"].Valid, res.Checks["validity"].Valid)
	}
	validity := "validity: at the end of the run nodes believe in a node, but a node is live (at start-up, before any fault)"
	overlap := "two-leaders: nodes both believed they were the leader (cut off; in force: partition)"
	if got := Signature(res, lower); got != validity {
		t.Errorf("signature %q, want %q", got, validity)
	}
	var sigs []string
	for _, c := range Causes(res, lower) {
		sigs = append(sigs, c.Signature)
	}
	if want := []string{validity, overlap}; !slices.Equal(sigs, want) {
		t.Errorf("causes %q, want %q", sigs, want)
	}

	// In a campaign, the validity signature's first run is the first
	// that showed it, although its overlap's signature came before.
	cut := electsHistory(t, 1000,
		leads(5, "n1", "n3"), leads(5, "n2", "n3"), leads(5, "n3", "n3"),
		fault(400, "partition", history.PhaseStart, "faults[0]#1", "n3"),
		leads(450, "n2", "n2"), leads(450, "n1", "n2"),
		fault(600, "partition", history.PhaseEnd, "faults[0]#1", "n3"),
		leads(610, "n2", "n3"), leads(610, "n1", "n3"))
	runner := &cannedRunner{histories: []*history.History{cut, lower, cut}}
	out, err := Campaign{Scenario: loadFake(t), Runner: runner, Strategy: Random, Seed: 1, Runs: 3}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range out.Tally.Groups() {
		got = append(got, fmt.Sprintf("%s: first %d, %d runs", g.Signature, g.First.Run, g.Count))
	}
	want := []string{overlap + ": first 1, 3 runs", validity + ": first 2, 1 runs"}
	if !slices.Equal(got, want) {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A campaign whose only violation is an overlap at start-up, before any
// fault, reports it apart from findings after faults (a finding of the
// machine: the nodes' own start, which no schedule drew); and an overlap
// at start-up does not hide a later one of the same run, after a fault:
// the run counts under each cause, the later one a finding of the
// system's.
func TestCampaignStartUpApart(t *testing.T) {
	startUp := func(later ...history.Event) *history.History {
		return electionHistory(t, 2000, append([]history.Event{
			leads(10, "n1", "n1"), leads(12, "n2", "n2"), leads(12, "n3", "n2"), leads(30, "n1", "n2")}, later...)...)
	}
	campaign := func(hs ...*history.History) []*RunGroup {
		t.Helper()
		for _, h := range hs {
			h.Meta.Simulated = true // its faults' times are the history's, not the drawn schedule's
		}
		res, err := Campaign{Scenario: loadFake(t), Runner: &cannedRunner{histories: hs}, Strategy: Random, Seed: 1, Runs: len(hs)}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res.Tally.Groups()
	}
	const atStart = "two-leaders: nodes both believed they were the leader (at start-up, before any fault)"
	only := campaign(startUp(), startUp())
	if len(only) != 1 || only[0].Signature != atStart || only[0].Count != 2 || !only[0].FromMachine() {
		t.Errorf("start-up alone: groups %+v, want the start-up overlap twice, of the machine", only)
	}

	cut := startUp(
		fault(1000, "partition", history.PhaseStart, "faults[0]#1", "n2"),
		leads(1100, "n3", "n3"), leads(1100, "n1", "n3"),
		fault(1500, "partition", history.PhaseEnd, "faults[0]#1", "n2"),
		leads(1510, "n2", "n3"))
	both := campaign(startUp(), cut)
	var got []string
	for _, g := range both {
		got = append(got, fmt.Sprintf("%s: first %d, %d runs, machine %v", g.Signature, g.First.Run, g.Count, g.FromMachine()))
	}
	want := []string{
		atStart + ": first 1, 2 runs, machine true",
		"two-leaders: nodes both believed they were the leader (cut off; in force: partition): first 2, 1 runs, machine false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
