package verdict

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/scenario"
)

// Exit codes of `coup run` and `coup check` (the interface contract).
const (
	ExitOK         = 0 // every outcome as expected
	ExitUnexpected = 1 // a check failed unexpectedly, or an expected violation was not found
	ExitInput      = 2 // usage or input error
	ExitUnknown    = 3 // a verdict could not be reached
)

// Outcomes of comparing a verdict with the scenario's expectation.
const (
	AsExpected = "as expected"
	Unexpected = "unexpected"
	Unknown    = "unknown"
)

// ResultsSchema is the version of the shape of results.json (documented in
// docs/results.md). It changes only when a field changes meaning or goes;
// new fields may appear without a change.
const ResultsSchema = 1

// Results is what results.json holds. docs/results.md documents every
// field.
type Results struct {
	// Schema is ResultsSchema.
	Schema    int    `json:"schema"`
	Scenario  string `json:"scenario"`
	File      string `json:"file,omitempty"`
	Algorithm string `json:"algorithm"`
	Seed      int64  `json:"seed"`
	// Valid is the composed verdict of every check: true, false or
	// "unknown" (false beats unknown beats true).
	Valid checks.Validity `json:"valid"`
	// Expected is what the scenario expects, and Outcome how the verdict
	// compares: "as expected", "unexpected" or "unknown".
	Expected history.Expect `json:"expected"`
	Outcome  string         `json:"outcome"`
	// Headline says the verdict and the outcome in one sentence, as the
	// report's first line does: what the scenario expected (and which
	// checks it allows either way, with what each gave), and so the
	// outcome.
	Headline string `json:"headline"`
	// Notes explain every check whose verdict differs from the
	// expectation, one sentence each, and say when a fault began before
	// the cluster was ready (Ready).
	Notes    []string `json:"notes,omitempty"`
	ExitCode int      `json:"exit_code"`
	// Checks holds each check's verdict and evidence, by name.
	Checks map[string]checks.Result `json:"checks"`
	// Order is the order the checks ran in.
	Order []string `json:"order"`
	Stats Stats    `json:"stats"`
	// Complete is false when the history has no end event: the run was
	// interrupted or killed, and only a prefix was checked.
	Complete bool `json:"complete"`
	// Skipped lists history lines that could not be parsed.
	Skipped []history.BadLine `json:"skipped_lines,omitempty"`
	// Error is set when the run itself failed (a node would not start).
	Error string `json:"error,omitempty"`
	// Ready says when the cluster was first seen ready and which faults
	// began before, for a run that watched it form (real servers).
	Ready *Ready `json:"ready,omitempty"`
	// Warnings are what a person must know to trust the run that no
	// check judges (a node that sent no checksums while checksums were
	// on), one sentence each; they do not change the outcome.
	Warnings []string `json:"warnings,omitempty"`
	// Exits are the processes that exited on their own (nodes, servers,
	// sidecars, client processes), in the order they did: each a finding
	// that makes the run unexpected unless the scenario expects it
	// (Expected.Exits).
	Exits []Exit `json:"exits,omitempty"`
	// Unstarted says how a run whose nodes did not all start ended
	// (history.UnstartedFailed or history.UnstartedInterrupted); "" for a
	// run that started. Error then says why.
	Unstarted string `json:"unstarted,omitempty"`
	// Isolation says what held each real server's host's processes
	// (history.Meta.Isolation): "cgroup", "namespace" or "group".
	Isolation string `json:"isolation,omitempty"`
	// Network is what carried the packets between real servers' hosts
	// (history.Meta.Network): "namespaces" or "proxy"; "" for protocol
	// nodes.
	Network string `json:"network,omitempty"`
}

// Stats are message and operation counts.
type Stats struct {
	Events   int              `json:"events"`
	Duration int64            `json:"duration_ns"`
	Messages MessageStats     `json:"messages"`
	Ops      map[string]int64 `json:"ops"`
	// Refused counts what the harness refused from nodes, by class
	// (output, line, report, reply, dest, …): see docs/results.md.
	Refused map[string]int64 `json:"refused,omitempty"`
	// Counts are the run's raw counters (the end event's, or rebuilt from
	// the events), every one whether or not a field above shows it.
	Counts map[string]int64 `json:"counts,omitempty"`
	// Polls count a real server's polls, by node.
	Polls map[string]PollStats `json:"polls,omitempty"`
	// Disk says what each storage fault did, a line per disk event:
	// "0.300s n1 faults[0]#1 lost: wal/0.wal: 4400 of 4400 unsynced bytes
	// lost, synced to offset 3000".
	Disk []string `json:"disk,omitempty"`
}

// MessageStats count messages between nodes. Every copy of a message ends
// delivered or dropped, so with duplicates Delivered + Dropped may exceed
// Sent.
type MessageStats struct {
	Sent      int64            `json:"sent"`
	Delivered int64            `json:"delivered"`
	Dropped   int64            `json:"dropped"`
	ByType    map[string]int64 `json:"by_type"`
	// Drops counts the dropped by why: partition, loss (the nemesis), down
	// (the receiver was not running), overflow (its queue was full),
	// write-failed.
	Drops map[string]int64 `json:"drops,omitempty"`
	// Duplicated counts the copies the nemesis added.
	Duplicated int64 `json:"duplicated"`
	// Corrupted counts the deliveries whose body the nemesis altered, and
	// Corruptions the same by how: bitflip, mutate, joker.
	Corrupted   int64            `json:"corrupted"`
	Corruptions map[string]int64 `json:"corruptions,omitempty"`
}

// Evaluate runs the history's checks and compares the verdict with the
// expectation the history's meta event carries. A history whose run did
// not start (it has an unstarted event) is not judged: its results say
// why, as coup run said.
func Evaluate(h *history.History) (*Results, error) {
	if h.Unstarted != nil {
		return unstarted(h), nil
	}
	m := &h.Meta
	names := m.Checks
	if len(names) == 0 {
		names = scenario.DefaultChecks(m.Algorithm, m.Workload)
	}
	list, valid, err := checks.Run(h, names)
	if err != nil {
		return nil, err
	}
	res := &Results{
		Schema:    ResultsSchema,
		Scenario:  m.Scenario,
		File:      m.File,
		Algorithm: m.Algorithm,
		Seed:      m.Seed,
		Valid:     valid,
		Checks:    map[string]checks.Result{},
		Stats:     computeStats(h),
		Complete:  h.Ended,
		Skipped:   h.Bad,
		Ready:     readyOf(h),
		Isolation: m.Isolation,
		Network:   m.Network,
	}
	if m.Expect != nil {
		res.Expected = *m.Expect
	} else {
		res.Expected = history.Expect{Valid: true}
	}
	for _, r := range list {
		res.Checks[r.Name] = r
		res.Order = append(res.Order, r.Name)
	}
	res.Exits = exitsOf(h, res.Expected.Exits)
	res.Warnings = warningsOf(h, res.Stats.Counts)
	res.compare()
	return res, nil
}

// compare sets Outcome, Notes and ExitCode. A check listed among the
// expected violations must be false; every other check must be true. When
// the scenario expects an invalid run without naming checks, any violation
// will do. An unknown verdict where a definite one was expected makes the
// outcome unknown, unless something else is unexpected.
//
// An incomplete history (the run was interrupted or killed) is never
// unexpected: what its prefix shows may be the start of what the whole run
// would have shown, or not, so its outcome is unknown, and the notes say
// what the prefix showed.
func (r *Results) compare() {
	r.Notes = nil
	prefix := ""
	if !r.Complete {
		prefix = "in the recorded prefix, "
		r.Notes = append(r.Notes, "the history has no end event: the run did not finish, and only its prefix was checked, so its outcome is unknown")
	}
	j := newJudge(r.Expected)
	unexpected, unknown := false, false
	for _, name := range r.Order {
		c := r.Checks[name]
		want := j.want(name)
		switch {
		case j.asExpected(name, c.Valid):
		case c.Valid == checks.Unknown:
			unknown = true
			r.Notes = append(r.Notes, fmt.Sprintf("%s%s: could not be judged (expected %s): %s", prefix, name, want, c.Explanation))
		case want == checks.False:
			unexpected = true
			r.Notes = append(r.Notes, fmt.Sprintf("%s%s: expected a violation, but the check holds", prefix, name))
		default:
			unexpected = true
			r.Notes = append(r.Notes, fmt.Sprintf("%s%s: unexpected violation: %s", prefix, name, c.Explanation))
		}
	}
	for _, x := range r.Exits {
		if !x.Expected {
			unexpected = true
			r.Notes = append(r.Notes, prefix+x.line(false)+": a finding of its own, whatever the checks say (list its node in [expect] exits if the scenario means it to exit)")
		}
	}
	if j.anyFailure && r.Valid == checks.True {
		unexpected = true
		r.Notes = append(r.Notes, prefix+"expected the run to be invalid, but every check holds")
	}
	if n := r.Ready.note(); n != "" {
		r.Notes = append(r.Notes, n)
	}
	switch {
	case unexpected && r.Complete:
		r.Outcome, r.ExitCode = Unexpected, ExitUnexpected
	case unexpected || unknown || !r.Complete || r.Error != "":
		r.Outcome, r.ExitCode = Unknown, ExitUnknown
	default:
		r.Outcome, r.ExitCode = AsExpected, ExitOK
	}
	r.Headline = r.headline()
}

// judge is what a scenario expects of each check.
type judge struct {
	mustFail map[string]bool // expect.violations: must be false
	either   map[string]bool // expect.either: true or false will do
	// anyFailure: the scenario expects an invalid run without naming
	// checks, so any violation will do.
	anyFailure bool
}

func newJudge(e history.Expect) judge {
	j := judge{mustFail: map[string]bool{}, either: map[string]bool{}}
	for _, v := range e.Violations {
		j.mustFail[v] = true
	}
	for _, v := range e.Either {
		j.either[v] = true
	}
	j.anyFailure = !e.Valid && len(j.mustFail) == 0
	return j
}

// want is the verdict the scenario expects of a check: false for an
// expected violation, true otherwise.
func (j judge) want(name string) checks.Validity {
	if j.mustFail[name] {
		return checks.False
	}
	return checks.True
}

// asExpected reports whether a check's verdict is one the scenario
// expects of it.
func (j judge) asExpected(name string, v checks.Validity) bool {
	return v == j.want(name) || (j.either[name] && v != checks.Unknown) || (j.anyFailure && v == checks.False)
}

// unstarted is the results of a run whose nodes did not all start (h's
// unstarted event): no check judged it and the outcome is unknown. Error
// holds the one message that says why. The exit code is an input error's
// when the start failed (a node or its program that would not start, like
// a bad scenario, is for the user to mend), and unknown's when coup was
// interrupted first.
func unstarted(h *history.History) *Results {
	m, u := &h.Meta, h.Unstarted
	res := &Results{
		Schema: ResultsSchema, Scenario: m.Scenario, File: m.File, Algorithm: m.Algorithm, Seed: m.Seed,
		Valid: checks.Unknown, Expected: history.Expect{Valid: true}, Outcome: Unknown, ExitCode: ExitInput,
		Checks: map[string]checks.Result{}, Order: []string{}, Stats: computeStats(h), Complete: h.Ended,
		Skipped: h.Bad, Error: u.Detail, Unstarted: u.What, Isolation: m.Isolation, Network: m.Network,
	}
	if u.What == history.UnstartedInterrupted {
		res.ExitCode = ExitUnknown
	}
	if res.Error == "" {
		res.Error = "the run did not start (" + u.What + "), and its history says no more"
	}
	if m.Expect != nil {
		res.Expected = *m.Expect
	}
	res.Headline = res.headline()
	return res
}

// NotStarted reports whether the run could not be carried out because its
// nodes did not all start: no check judged it, and Error says why.
func (r *Results) NotStarted() bool { return r.Error != "" && len(r.Order) == 0 }

// StartInterrupted reports whether the run did not start because coup was
// interrupted (Ctrl-C) before every node was up: it has no verdict.
func (r *Results) StartInterrupted() bool {
	return r.NotStarted() && r.Unstarted == history.UnstartedInterrupted
}

// Failed marks results of a run that did not end as planned (it was
// interrupted): err is its Error, and the outcome is compared again, so
// that it is never as expected.
func (r *Results) Failed(err error) {
	r.Error = err.Error()
	r.compare()
}

// computeStats counts from the end event when there is one (it holds every
// counter, recorded messages or not) and from the message events otherwise.
func computeStats(h *history.History) Stats {
	s := Stats{Events: h.Len(), Duration: h.End(), Ops: map[string]int64{}}
	s.Messages.ByType = map[string]int64{}
	s.Messages.Drops = map[string]int64{}
	s.Messages.Corruptions = map[string]int64{}
	var counts map[string]int64
	for i := len(h.Events) - 1; i >= 0; i-- {
		if h.Events[i].Kind == history.KindEnd {
			counts = h.Events[i].Counts
			break
		}
	}
	if counts == nil {
		counts = countEvents(h)
	}
	if len(counts) > 0 {
		s.Counts = counts
	}
	s.Polls = pollStats(counts)
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == history.KindDisk {
			s.Disk = append(s.Disk, fmt.Sprintf("%.3fs %s %s %s: %s", float64(e.Time)/1e9, e.Node, e.Name, e.What, e.Detail))
		}
	}
	for k, v := range counts {
		switch {
		case k == history.CountSent:
			s.Messages.Sent = v
		case k == history.CountDelivered:
			s.Messages.Delivered = v
		case k == history.CountDropped:
			s.Messages.Dropped = v
		case k == history.CountDuplicated:
			s.Messages.Duplicated = v
		case k == history.CountCorrupted:
			s.Messages.Corrupted = v
		case strings.HasPrefix(k, history.CountCorrupted+"."):
			s.Messages.Corruptions[strings.TrimPrefix(k, history.CountCorrupted+".")] = v
		case strings.HasPrefix(k, history.CountSent+"."):
			s.Messages.ByType[strings.TrimPrefix(k, history.CountSent+".")] = v
		case strings.HasPrefix(k, history.CountDropped+"."):
			s.Messages.Drops[strings.TrimPrefix(k, history.CountDropped+".")] = v
		case strings.HasPrefix(k, "ops."):
			s.Ops[strings.TrimPrefix(k, "ops.")] = v
		case strings.HasPrefix(k, history.CountRefused+"."):
			if s.Refused == nil {
				s.Refused = map[string]int64{}
			}
			s.Refused[strings.TrimPrefix(k, history.CountRefused+".")] = v
		}
	}
	return s
}

// countEvents rebuilds the counters from the events of a history.
func countEvents(h *history.History) map[string]int64 {
	c := map[string]int64{}
	for e := range h.All() {
		switch e.Kind {
		case history.KindMsg:
			switch e.What {
			case history.MsgSend:
				c[history.CountSent]++
				c[history.CountSent+"."+e.MType]++
			case history.MsgDeliver:
				c[history.CountDelivered]++
			case history.MsgDrop:
				c[history.CountDropped]++
				c[history.CountDropped+"."+e.Reason]++
			case history.MsgDuplicate:
				c[history.CountDuplicated]++
			case history.MsgCorrupt:
				c[history.CountCorrupted]++
				c[history.CountCorrupted+"."+e.Reason]++
			}
		case history.KindOp:
			c["ops."+e.Type]++
		case history.KindRefused:
			c[history.CountRefused]++
			c[history.CountRefused+"."+e.What]++
		}
	}
	return c
}

// indentLines is a message of several lines (a start error with the end
// of a node's log) made printable line by line, every line after the first
// indented: none can pass for a line of coup's own.
func indentLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = console.Printable(l)
		if i > 0 && !strings.HasPrefix(lines[i], " ") {
			lines[i] = "  " + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// joinCounts writes counts as "a 1, b 2", sorted by name; the names (such
// as message types, which nodes choose) made printable.
func joinCounts(c map[string]int64) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", console.Printable(k), c[k])
	}
	return strings.Join(parts, ", ")
}

// Summary is a few lines for a person: the verdict, each check, the notes.
// Every string that came from the history (and so, perhaps, from a node)
// is passed through Printable, so that no control character reaches the
// terminal and no line can be forged.
//
// A run whose nodes did not start has only its error, with no verdict
// lines above it.
func (r *Results) Summary() string {
	if r.NotStarted() {
		return fmt.Sprintf("%s: not run (exit %d): %s\n", console.Printable(r.Scenario), r.ExitCode, indentLines(r.Error))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: valid=%s, %s (exit %d)", console.Printable(r.Scenario), r.Valid, r.Outcome, r.ExitCode)
	if e, ok := r.eitherWay(); ok {
		// The verdict alone would not say why it is as expected: a check
		// allowed either way may have made it false.
		fmt.Fprintf(&b, " — %s", console.Printable(e))
	}
	b.WriteString("\n")
	width := 0
	for _, name := range r.Order {
		width = max(width, len(console.Printable(name)))
	}
	for _, name := range r.Order {
		c := r.Checks[name]
		fmt.Fprintf(&b, "  %-*s %-7s %s\n", width, console.Printable(name), c.Valid, console.Printable(c.Explanation))
		if long := c.Longest(); c.ViolationCount > 1 && long != nil && long != c.First() {
			fmt.Fprintf(&b, "  %-*s         the longest of %d (%s in all): %s\n", width, "", c.ViolationCount, fmtNs(c.ViolationTime), console.Printable(long.Explanation))
		}
	}
	if links := linksLine(r.Stats.Counts); links != "" {
		b.WriteString(links)
	} else if net := netLine(r.Stats.Counts); net != "" {
		b.WriteString(net)
	} else {
		r.messagesLine(&b)
	}
	b.WriteString(pollsLine(r.Stats.Polls))
	if ops := r.Stats.Ops; ops[history.OpInvoke] > 0 {
		fmt.Fprintf(&b, "  client operations: %d invoked, %d ok, %d failed, %d info (may or may not have happened)\n",
			ops[history.OpInvoke], ops[history.OpOK], ops[history.OpFail], ops[history.OpInfo])
	}
	if len(r.Stats.Refused) > 0 {
		fmt.Fprintf(&b, "  refused from nodes: %s (the history's refused events and harness.log say what and why)\n", console.Printable(joinCounts(r.Stats.Refused)))
	}
	if n := r.Stats.Counts[history.CountFaultsSkipped]; n > 0 {
		fmt.Fprintf(&b, "  faults skipped: %s did not happen, for want of a target (harness.log says which and why)\n", console.Plural(int(n), "fault occurrence", "fault occurrences"))
	}
	if n := r.Stats.Counts[history.CountFaultsUnfired]; n > 0 {
		fmt.Fprintf(&b, "  faults never fired: %s armed on a trigger that nothing in the run set off (harness.log says which)\n", console.Plural(int(n), "fault", "faults"))
	}
	if n := r.Stats.Counts[history.CountUnrecorded]; n > 0 {
		fmt.Fprintf(&b, "  recording: %d messages past history.max_messages were counted, not recorded one by one (the history's limit event says when and on whose message)\n", n)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "  WARNING: %s\n", console.Printable(w))
	}
	for _, x := range r.Exits {
		fmt.Fprintf(&b, "  exit: %s\n", x.line(true))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", console.Printable(n))
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "  error: %s\n", console.Printable(r.Error))
	}
	return b.String()
}

// messagesLine is the summary's line of message counts.
func (r *Results) messagesLine(b *strings.Builder) {
	m := &r.Stats.Messages
	fmt.Fprintf(b, "  messages: %d sent", m.Sent)
	if len(m.ByType) > 0 {
		fmt.Fprintf(b, " (%s)", joinCounts(m.ByType))
	}
	fmt.Fprintf(b, ", %d delivered, %d dropped", m.Delivered, m.Dropped)
	if len(m.Drops) > 0 {
		fmt.Fprintf(b, " (%s)", joinCounts(m.Drops))
	}
	if m.Duplicated > 0 {
		fmt.Fprintf(b, ", %d duplicated", m.Duplicated)
	}
	if m.Corrupted > 0 {
		fmt.Fprintf(b, ", %d corrupted (%s)", m.Corrupted, joinCounts(m.Corruptions))
	}
	b.WriteString("\n")
}

// netLine is the summary's line for a run of real servers on coup's
// network (a namespace per host), whose links carry packets: "" for any
// other run.
func netLine(c map[string]int64) string {
	if _, ok := c[history.CountNetPackets]; !ok {
		return ""
	}
	return fmt.Sprintf("  network: %s (%d bytes) delivered by coup's network, %d dropped by a stalled cut, %d refused, %d lost, %d delayed, %d duplicated, %d corrupted\n",
		console.Plural(int(c[history.CountNetPackets]), "packet", "packets"), c[history.CountNetBytes], c[history.CountNetCut],
		c[history.CountNetRefused], c[history.CountNetLost], c[history.CountNetDelayed], c[history.CountNetDuplicated], c[history.CountNetCorrupted])
}

// linksLine is the summary's line for a run of real servers, whose links
// carry streams through coup's proxies rather than messages: "" for a
// run of protocol nodes. A connection that could not be attributed to a
// node and was still open at the end is a warning: faults may have
// missed its bytes.
func linksLine(c map[string]int64) string {
	if _, ok := c[history.CountLinkConns]; !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  links: %s through coup's proxies, %d reset by a fault, %d refused (by a cut, or a server not listening yet), %d chunks held, %d corrupted",
		console.Plural(int(c[history.CountLinkConns]), "connection", "connections"), c[history.CountLinkResets], c[history.CountLinkRefused],
		c[history.CountLinkHeld], c[history.CountLinkCorrupted])
	if n := c[history.CountLinkConnectsHeld]; n > 0 {
		fmt.Fprintf(&b, ", %d connects held by a stall until the heal", n)
	}
	if n := c[history.CountLinkUnattributed]; n > 0 {
		fmt.Fprintf(&b, ", %d unattributed (reset, never forwarded)", n)
	}
	b.WriteString("\n")
	if n := c[history.CountLinkUnattributedOpen]; n > 0 {
		fmt.Fprintf(&b, "  WARNING: %s could not be attributed to a node and was still open at the end: faults may have missed it, and this run is not to be trusted\n", console.Plural(int(n), "connection", "connections"))
	}
	return b.String()
}

// fmtNs formats a length of history time for a sentence: "450ms".
func fmtNs(ns int64) string {
	d := time.Duration(ns)
	if d >= time.Millisecond {
		d = d.Round(time.Millisecond)
	}
	return d.String()
}
