package servers

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/scenario"
)

// observer turns what the servers say (their log lines, their answers to
// polls) into the history's leader reports, the same reports a protocol
// node sends, so that every election check judges real servers unchanged.
//
// A reading says what it says, and the observer keeps no guess. A reading
// is one log line, or one round of a node's polls (its server's and its
// sidecars' questions, asked together). What it records, by the table in
// docs/servers.md ("What a reading means"):
//
//   - role leader, or a leader named that is the node itself: the node
//     claims to lead, in the reading's term (none when the reading gives
//     none, or when its term came with another node named as leader: that
//     term is the other node's);
//   - role follower naming a leader: the node follows that leader, in the
//     reading's term; a name not yet known is held until a reading
//     teaches it (a "self" group), and recorded then;
//   - role follower naming no leader: the node believes in no known
//     leader;
//   - role none: the node believes in no leader;
//   - a poll that fails, times out, or whose answer gives no role: the
//     node's belief is unknown (a report of no leader whose detail says
//     so), except while its host is paused, when it stays as it was;
//   - a reading with no role and no failure (a log line that only says a
//     term, or teaches a name): nothing.
//
// A reading never takes a leader or a term from another reading, the
// same node's earlier ones included, unless its pattern says so
// (inherit_term, inherit_leader: scenario.Pattern, each with its risk).
// Every report keeps the reading's evidence: the log line, with its file
// and number, or each question of the poll's round and its answer.
//
// The observer also watches the cluster form: the first moment a node is
// seen to lead, and the first moment every other node is seen to follow
// it (the cluster is ready, and the history says so).
type observer struct {
	r  *run
	mu sync.Mutex
	// names maps what servers call each other to node ids.
	names map[string]string
	nodes map[string]*belief
	order []string // the nodes, in order

	// leaderSeen and clusterSeen are closed when a leader, and then a
	// leader with every other node following it, are first seen.
	leaderSeen, clusterSeen chan struct{}
	// changed is signalled whenever a node's recorded belief, or its
	// being up, changes (a Session waits on it for the cluster to
	// recover).
	changed chan struct{}
}

// belief is what the observer last recorded of one node, and what it
// holds back.
type belief struct {
	up bool
	// gen counts the node's starts: a poll of an old one is dropped.
	gen int
	// paused is set while the node's host is frozen, and pauses counts
	// its pauses and resumes: a poll that failed while either changed
	// says nothing (the belief stays as it was).
	paused   bool
	pauses   int
	recorded bool
	unknown  bool
	leader   string
	term     *int64
	// held is a follower's reading whose leader's name is not known yet.
	held *reading
	// statedTerm is the last term a reading of the node stated, for a
	// pattern that inherits it (inherit_term) alone.
	statedTerm *int64
}

// reading is one observation, read through the patterns.
type reading struct {
	role, leader, self string
	term               *int64
	// inheritTerm and inheritLeader are set when a pattern that matched
	// lets the reading inherit them (scenario.Pattern).
	inheritTerm, inheritLeader bool
	// unknown is set for a poll's round that had no answer to read a role
	// from; why says why.
	unknown bool
	why     string
	source  string
	// evidence is what the reading was read from.
	evidence []history.Evidence
}

func newObserver(r *run) *observer {
	o := &observer{r: r, names: map[string]string{}, nodes: map[string]*belief{},
		leaderSeen: make(chan struct{}), clusterSeen: make(chan struct{}), changed: make(chan struct{}, 1)}
	for i := range r.sc.Nodes {
		id := scenario.NodeName(i)
		o.names[id] = id
		o.names[strconv.Itoa(i+1)] = id
		o.nodes[id] = &belief{}
		o.order = append(o.order, id)
	}
	return o
}

// learnAddresses teaches the observer every address of every node as a
// name of it: its own host and host:port, and where each node reaches
// it, so that a server that names its leader by address (Redis's
// master_host, Sentinel's master ip) names a node.
func (o *observer) learnAddresses(nodes []*scenario.ServerNode) {
	o.mu.Lock()
	defer o.mu.Unlock()
	learn := func(e scenario.Endpoint) {
		o.names[e.Host] = e.ID
		for _, a := range e.Addr {
			o.names[a] = e.ID
		}
	}
	for _, n := range nodes {
		for _, e := range n.Nodes {
			learn(e)
		}
		for _, e := range n.Reach {
			learn(e)
		}
	}
}

// started is told of a node's start: it believes nothing yet.
func (o *observer) started(node string) {
	o.mu.Lock()
	b := o.nodes[node]
	*b = belief{up: true, gen: b.gen + 1, pauses: b.pauses}
	o.mu.Unlock()
	o.signal()
}

// ended is told that a node is being stopped: polls of it are dropped
// from now on. Its log lines, written before it died, still count.
func (o *observer) ended(node string) {
	o.mu.Lock()
	o.nodes[node].up = false
	o.mu.Unlock()
	o.signal()
}

// frozen is told that a node's host is paused (true) or resumed (false):
// while it is, and for a poll that was asked across either, an
// unanswered poll leaves the node's belief as it was.
func (o *observer) frozen(node string, paused bool) {
	o.mu.Lock()
	b := o.nodes[node]
	b.paused = paused
	b.pauses++
	o.mu.Unlock()
}

// asking is what a poll's round needs to know of its node when it
// begins: whether it is up, its start and its pauses.
func (o *observer) asking(node string) (up bool, gen, pauses int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.nodes[node]
	return b.up, b.gen, b.pauses
}

// signal says that something changed (changed).
func (o *observer) signal() {
	select {
	case o.changed <- struct{}{}:
	default:
	}
}

// line reads a log line of one of a node's processes through that
// process's log patterns; file and n say where it is (the log's name in
// the run's folder, and its line number there).
func (o *observer) line(node string, patterns []scenario.Pattern, line []byte, file string, n int) {
	for i := range patterns {
		p := &patterns[i]
		m := p.Regexp().FindSubmatch(line)
		if m == nil {
			continue
		}
		rd := &reading{role: p.Role, source: "log", inheritTerm: p.InheritTerm, inheritLeader: p.InheritLeader,
			evidence: []history.Evidence{evidence(file, n, line)}}
		for j, name := range p.Regexp().SubexpNames() {
			if j > 0 && name != "" && m[j] != nil {
				rd.set(o.r.sv, name, string(m[j]))
			}
		}
		o.observe(node, -1, -1, rd)
	}
}

// evidence is one piece of evidence: text read from, at line n (0 for a
// poll), cut to history.MaxEvidence bytes and made printable, its
// newlines kept.
func evidence(from string, n int, text []byte) history.Evidence {
	e := history.Evidence{From: from, Line: n}
	if len(text) > history.MaxEvidence {
		text, e.Cut = text[:history.MaxEvidence], true
	}
	e.Text = console.PrintableLines(string(text)) // a server's bytes cannot rewrite a terminal or a page
	return e
}

// set fills in one named group of a reading.
func (rd *reading) set(sv *scenario.Server, group, v string) {
	switch group {
	case "role":
		rd.role = sv.RoleOf(v)
	case "leader":
		rd.leader = v
	case "self":
		rd.self = v
	case "term":
		if t, ok := parseTerm(v); ok {
			rd.term = &t
		}
	}
}

func parseTerm(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	base := 10
	if s, ok := strings.CutPrefix(strings.ToLower(v), "0x"); ok {
		v, base = s, 16
	}
	t, err := strconv.ParseInt(v, base, 64)
	return t, err == nil
}

// observe records what a reading says a node believes. gen is the start
// of the node a poll asked, and pauses its pauses when it asked (-1 for
// a log line, which always counts).
func (o *observer) observe(node string, gen, pauses int, rd *reading) {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.nodes[node]
	if gen >= 0 && (!b.up || b.gen != gen) {
		return
	}
	if rd.self != "" {
		o.names[rd.self] = node
	}
	if rd.unknown || (gen >= 0 && rd.role == "") {
		if b.paused || (pauses >= 0 && pauses != b.pauses) {
			return // frozen: its belief stays as it was
		}
		b.held = nil
		o.recordUnknown(node, b, rd)
		o.resolveHeld()
		return
	}
	inherited := b.statedTerm
	if rd.term != nil {
		b.statedTerm = rd.term
	}
	if rd.role == "" {
		o.resolveHeld() // a name it taught may resolve a held reading
		return
	}
	if rd.term == nil && rd.inheritTerm {
		rd.term = inherited
	}
	b.held = rd
	o.resolveHeld()
}

// resolveHeld records every held reading whose leader is now known.
func (o *observer) resolveHeld() {
	for changed := true; changed; {
		changed = false
		for _, node := range o.order {
			b := o.nodes[node]
			if b.held == nil {
				continue
			}
			leader, term, ok := o.believes(node, b.held)
			if !ok {
				continue
			}
			rd := b.held
			b.held = nil
			if o.record(node, b, leader, term, rd) {
				changed = true // a new claim may resolve an inheriting follower
			}
		}
	}
}

// believes is the leader and term a reading says its node believes in,
// when the names it uses are known (rules in the observer's comment).
func (o *observer) believes(node string, rd *reading) (string, *int64, bool) {
	named := ""
	if rd.leader != "" {
		id, ok := o.names[rd.leader]
		if !ok {
			if rd.role == scenario.RoleLeader {
				// It leads, whatever it names; the term it gives came
				// with the other name.
				return node, nil, true
			}
			return "", nil, false
		}
		named = id
	}
	switch {
	case rd.role == scenario.RoleNone:
		return "", rd.term, true
	case rd.role == scenario.RoleLeader || named == node:
		if named != "" && named != node {
			return node, nil, true // the term is the other node's
		}
		return node, rd.term, true
	case named != "":
		return named, rd.term, true
	case rd.inheritLeader && rd.term != nil:
		return o.claimant(node, *rd.term), rd.term, true
	}
	return "", rd.term, true // a follower of no known leader
}

// claimant is the node other than node that believes it leads in term,
// for a reading that inherits its leader; "" when none does.
func (o *observer) claimant(node string, term int64) string {
	for _, n := range o.order {
		if b := o.nodes[n]; n != node && b.up && b.recorded && b.leader == n && b.term != nil && *b.term == term {
			return n
		}
	}
	return ""
}

// record writes a leader report when the node's belief changed, and says
// whether it did.
//
// A node believes nothing until it first reports, so a first belief in no
// leader is not recorded: a trigger on the first leader report (when =
// { report = "leader" }) then fires on the first claim.
func (o *observer) record(node string, b *belief, leader string, term *int64, rd *reading) bool {
	if b.recorded && !b.unknown && b.leader == leader && sameTerm(b.term, term) {
		return false
	}
	if !b.recorded && leader == "" {
		return false
	}
	b.recorded, b.unknown, b.leader, b.term = true, false, leader, term
	o.r.observed(history.Event{Kind: history.KindReport, Node: node, What: history.ReportLeader, Value: leader, Term: term,
		Detail: rd.source, Evidence: rd.evidence})
	o.watchReady()
	o.signal()
	return true
}

// recordUnknown writes a report that the node's belief is unknown, when
// it was known.
func (o *observer) recordUnknown(node string, b *belief, rd *reading) {
	if !b.recorded || b.unknown {
		return
	}
	b.unknown, b.leader, b.term = true, "", nil
	o.r.stats.add(pollCount(node, history.PollUnknown))
	ev := rd.evidence
	if rd.why != "" && len(ev) == 0 {
		ev = []history.Evidence{{From: rd.source, Text: rd.why}}
	}
	o.r.observed(history.Event{Kind: history.KindReport, Node: node, What: history.ReportLeader,
		Detail: history.LeaderUnknown, Evidence: ev})
	o.signal()
}

func sameTerm(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// pollSource says where a polled report came from, and so its resolution.
func pollSource(sv *scenario.Server) string {
	return fmt.Sprintf("poll every %s", sv.PollEvery.D)
}
