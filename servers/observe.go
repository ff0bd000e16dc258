package servers

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// observer turns what the servers say (their log lines, their answers to
// polls) into the history's leader reports, the same reports a protocol
// node sends, so that every election check judges real servers unchanged.
//
// A server names its leader its own way (etcd by raft id, ZooKeeper not at
// all, Redis by address): a pattern's "self" group teaches the observer
// each node's own name for itself, every address of every node (its own,
// and where each node reaches it) names it from the start, and a follower
// that names no leader is taken to follow the node that claims to lead in
// its term. A follower whose leader is not known yet is held until it is,
// and then recorded.
//
// A node is a host: what its sidecars say adds to what its server says.
// A term, once said by any of its processes, stands until one says
// another: a reading with a role and without a term (a server that has
// none) takes the node's last, and a reading with a term and no role (a
// sidecar's) gives the node's last role that term. A leader's name
// stands only within the term it was said in, and never for a reading
// that leads: a reading whose role says its node leads names that node,
// whatever an earlier reading named (a promoted replica's "leader 2"
// names itself, in term 2, not the old leader its follower readings
// named), and a follower's reading in a new term that names no leader
// waits for the node that claims that term.
//
// The observer also watches the cluster form: the first moment a node is
// seen to lead, and the first moment every other node is seen to follow
// it (the cluster is ready, and the history says so).
type observer struct {
	r  *run
	mu sync.Mutex
	// names maps what servers call each other to node ids.
	names map[string]string
	// claims maps a term to the node that claimed to lead in it.
	claims map[int64]string
	nodes  map[string]*belief
	order  []string // the nodes, in order

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
	up       bool
	gen      int // counts the node's starts: a poll of an old one is dropped
	recorded bool
	leader   string
	term     *int64
	held     *reading
	// knownTerm and knownLeader are the last term and leader name any of
	// the node's processes said; last is its last reading with a role,
	// as read.
	knownTerm   *int64
	knownLeader string
	// knownLeaderTerm is the term in force when knownLeader was said.
	knownLeaderTerm *int64
	// lastTerm is the term last was taken in (its own, or the node's).
	lastTerm *int64
	last     *reading
}

// reading is one observation, read through the patterns.
type reading struct {
	role, leader, self string
	term               *int64
	source             string
	// borrowed is set when term is the node's, not the reading's own.
	borrowed bool
}

func newObserver(r *run) *observer {
	o := &observer{r: r, names: map[string]string{}, claims: map[int64]string{}, nodes: map[string]*belief{},
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
	*b = belief{up: true, gen: b.gen + 1}
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

// signal says that something changed (changed).
func (o *observer) signal() {
	select {
	case o.changed <- struct{}{}:
	default:
	}
}

// line reads a log line of one of a node's processes through that
// process's log patterns.
func (o *observer) line(node string, patterns []scenario.Pattern, line []byte) {
	for i := range patterns {
		p := &patterns[i]
		m := p.Regexp().FindSubmatch(line)
		if m == nil {
			continue
		}
		rd := &reading{role: p.Role, source: "log"}
		for j, name := range p.Regexp().SubexpNames() {
			if j > 0 && name != "" && m[j] != nil {
				rd.set(o.r.sv, name, string(m[j]))
			}
		}
		o.observe(node, -1, rd)
	}
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
// of the node a poll asked (-1 for a log line, which always counts).
func (o *observer) observe(node string, gen int, rd *reading) {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.nodes[node]
	if gen >= 0 && (!b.up || b.gen != gen) {
		return
	}
	if rd.self != "" {
		o.names[rd.self] = node
	}
	if rd.term != nil {
		b.knownTerm = rd.term
	}
	if rd.leader != "" {
		b.knownLeader, b.knownLeaderTerm = rd.leader, b.knownTerm
	}
	switch {
	case rd.role != "":
		b.last = rd
		b.held = b.borrow(rd)
		b.lastTerm = b.held.term
	case b.last != nil && (rd.term != nil || rd.leader != ""):
		// The last role, with what was just said; the leader it named
		// stands only in its own term.
		last := *b.last
		if rd.term != nil {
			last.term = nil // the term just said
		}
		if !sameTerm(b.knownTerm, b.lastTerm) {
			last.leader = ""
		}
		b.held = b.borrow(&last)
	}
	o.resolveHeld()
}

// borrow is a reading with the node's known term where it gives none,
// and its known leader where it names none, when that was said in the
// reading's term and the reading does not lead: a reading never takes
// another term's leader, nor one for a node that leads itself.
func (b *belief) borrow(rd *reading) *reading {
	out := *rd
	if out.term == nil {
		out.term, out.borrowed = b.knownTerm, b.knownTerm != nil
	}
	if out.leader == "" && out.role != scenario.RoleLeader && sameTerm(out.term, b.knownLeaderTerm) {
		out.leader = b.knownLeader
	}
	return &out
}

// resolveHeld records every held reading whose leader is now known.
func (o *observer) resolveHeld() {
	for changed := true; changed; {
		changed = false
		for node, b := range o.nodes {
			if b.held == nil {
				continue
			}
			leader, ok := o.leaderOf(node, b.held)
			if !ok {
				continue
			}
			rd := o.ownTerm(node, b, b.held)
			b.held = nil
			if leader == node && rd.term != nil {
				if _, seen := o.claims[*rd.term]; !seen {
					o.claims[*rd.term] = node
					changed = true
				}
			}
			o.record(node, b, leader, rd)
		}
	}
}

// ownTerm is a reading whose role says the node leads, but whose term
// is another node's: one that names another node as leader (a server
// that is master while its sidecar names another master), or one that
// took the node's known term, in which another node was named leader (a
// server, without terms, that became master while its sidecar's last
// epoch is the old master's). The node's claim then keeps the term it
// had, or has none. Any other reading is returned as it is.
func (o *observer) ownTerm(node string, b *belief, rd *reading) *reading {
	if rd.role != scenario.RoleLeader {
		return rd
	}
	other := rd.leader
	if other == "" && rd.borrowed && sameTerm(rd.term, b.knownLeaderTerm) {
		other = b.knownLeader
	}
	if other == "" {
		return rd
	}
	if id, ok := o.names[other]; !ok || id == node {
		return rd
	}
	own := *rd
	own.term = nil
	if b.recorded && b.leader == node {
		own.term = b.term
	}
	return &own
}

// leaderOf is the leader a reading names, when it is known.
func (o *observer) leaderOf(node string, rd *reading) (string, bool) {
	switch rd.role {
	case scenario.RoleNone:
		return "", true
	case scenario.RoleLeader:
		return node, true
	}
	if rd.leader != "" {
		id, ok := o.names[rd.leader]
		return id, ok
	}
	if rd.term != nil {
		id, ok := o.claims[*rd.term]
		return id, ok
	}
	return "", false
}

// record writes a leader report when the node's belief changed.
//
// A node believes nothing until it first reports, so a first belief in no
// leader is not recorded: a trigger on the first leader report (when =
// { report = "leader" }) then fires on the first claim.
func (o *observer) record(node string, b *belief, leader string, rd *reading) {
	if b.recorded && b.leader == leader && sameTerm(b.term, rd.term) {
		return
	}
	if !b.recorded && leader == "" {
		return
	}
	b.recorded, b.leader, b.term = true, leader, rd.term
	o.r.observed(history.Event{Kind: history.KindReport, Node: node, What: history.ReportLeader, Value: leader, Term: rd.term, Detail: rd.source})
	o.watchReady()
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
