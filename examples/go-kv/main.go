// Command go-kv is an example node for coup, written with Go's standard
// library alone: a small replicated key-value store that serves
// Maelstrom's lin-kv workload (read, write, cas) behind a leader elected
// by majority vote in numbered terms, as Raft does. docs/your-node.md
// walks through it.
//
// It contains a bug, on purpose: the leader serves reads from its own
// copy, without first checking that it is still the leader. A leader cut
// off from the others by a partition goes on believing it leads, while
// the majority elects a new leader in a higher term and accepts new
// writes; clients that still talk to the old leader read stale values,
// and the history is not linearizable. Leases, or a round of heartbeats
// before each read (Raft's ReadIndex), are the usual fixes. Its scenarios
// (scenarios/go-kv*.toml) show both runs: without faults the store is
// linearizable; with the leader isolated it is not, while
// one-leader-per-term still holds.
//
// How it works:
//
//   - Election. A node hears from its leader every heartbeat (50ms). When
//     it hears nothing for its election timeout (400ms plus 150ms per
//     place in node_ids, so that the first in line wins and votes never
//     split) it starts a new term, votes for itself and asks the others;
//     a node gives one vote per term, and only to a candidate whose copy
//     is at least as new as its own. A majority makes the candidate the
//     leader of that term. Whoever hears of a higher term moves to it and
//     follows.
//   - Replication. The leader orders writes and compare-and-sets one at a
//     time: it applies one to a copy of the store under a new version
//     (term, index), sends the whole copy to every node, and once a
//     majority holds it, commits it and answers the client. Heartbeats
//     carry the newest copy too, so a node that missed one catches up.
//     A new leader first commits its copy under a version of its own
//     term, so that everything a previous leader committed is committed
//     again before it serves anyone.
//   - Clients. A follower forwards a request to the leader it knows and
//     relays the answer; without one it answers error 11 (temporarily
//     unavailable). Reads are answered by the leader from its committed
//     copy at once: the bug.
//
// It reports its leader and term to coup whenever either changes, adds a
// CRC-32C sum to every message to a peer when init asks for checksums,
// and drops any peer message whose sum does not match.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"time"
)

const (
	heartbeat       = 50 * time.Millisecond
	electionTimeout = 400 * time.Millisecond // plus electionStagger per place in node_ids
	electionStagger = 150 * time.Millisecond
	tick            = 5 * time.Millisecond
)

// The Maelstrom error codes this node uses.
const (
	codeTemporarilyUnavailable = 11 // definite: the operation did not happen
	codeMalformedRequest       = 12
	codeKeyDoesNotExist        = 20
	codePreconditionFailed     = 22
)

// envelope is one line of the protocol: Maelstrom's, plus coup's sum.
type envelope struct {
	Src  string          `json:"src"`
	Dest string          `json:"dest"`
	Body json.RawMessage `json:"body"`
	Sum  string          `json:"sum,omitempty"`
}

// body holds every field of the bodies this node reads or writes.
type body struct {
	Type      string `json:"type"`
	MsgID     int    `json:"msg_id,omitempty"`
	InReplyTo int    `json:"in_reply_to,omitempty"`

	// init
	NodeID    string   `json:"node_id,omitempty"`
	NodeIDs   []string `json:"node_ids,omitempty"`
	Checksums bool     `json:"checksums,omitempty"`

	// lin-kv requests and answers; pointers, since 0 is a value
	Key   *int `json:"key,omitempty"`
	Value *int `json:"value,omitempty"`
	From  *int `json:"from,omitempty"`
	To    *int `json:"to,omitempty"`
	// errors
	Code *int   `json:"code,omitempty"`
	Text string `json:"text,omitempty"`

	// between nodes
	Term    *int64          `json:"term,omitempty"`
	Granted bool            `json:"granted,omitempty"`
	Version *version        `json:"version,omitempty"`
	Store   map[string]int  `json:"store,omitempty"`
	Fwd     int             `json:"fwd,omitempty"`
	Client  string          `json:"client,omitempty"`
	Request json.RawMessage `json:"request,omitempty"`
	Answer  json.RawMessage `json:"answer,omitempty"`
}

// reportBody is a report to coup: what this node believes (see
// docs/protocol.md).
type reportBody struct {
	Type  string `json:"type"` // "report"
	What  string `json:"what"`
	Value string `json:"value"`
	Term  *int64 `json:"term,omitempty"`
	Msg   int64  `json:"msg,omitempty"`
}

// version orders the copies of the store: by the term of the leader that
// made a copy, then by its index in that term.
type version struct {
	Term  int64 `json:"term"`
	Index int64 `json:"index"`
}

func (v version) newer(w version) bool {
	return v.Term > w.Term || (v.Term == w.Term && v.Index > w.Index)
}

// op is a client request the leader is to carry out; answer sends its
// answer back, to the client or through the follower that forwarded it.
type op struct {
	req    body
	answer func(body)
}

type node struct {
	out       *bufio.Writer
	self      string
	peers     []string
	place     int
	checksums bool

	term     int64
	votedFor string
	leader   string
	leading  bool
	votes    map[string]bool
	reported string // the last belief reported, "leader@term"

	// The store: the newest copy this node holds, and its version.
	store map[string]int
	ver   version

	// The leader's state: the copy committed (what reads see), the op
	// being replicated, the versions each node holds, the ops waiting.
	committed map[string]int
	ready     bool // a copy of this term is committed
	pending   *op
	acked     map[string]version
	queue     []op

	// A follower's forwarded requests, by forward id.
	forwarded map[int]op
	nextFwd   int

	lastHeard, lastBeat, lastVote time.Time
	candidate                     bool
}

func main() {
	n := &node{out: bufio.NewWriter(os.Stdout), store: map[string]int{}, forwarded: map[int]op{}}
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return // coup closed our stdin: the run is over
			}
			n.handle(line)
		case now := <-ticker.C:
			n.tick(now)
		}
	}
}

func (n *node) handle(line []byte) {
	var e envelope
	var b body
	if err := json.Unmarshal(line, &e); err != nil {
		n.logf("dropped a line that does not parse: %v", err)
		n.reject("unparsable", line)
		return
	}
	if n.checksums && n.isPeer(e.Src) && e.Sum != fmt.Sprintf("%08x", crc32.Checksum(e.Body, castagnoli)) {
		n.logf("dropped a message from %s whose sum does not match", e.Src)
		n.reject("checksum", line)
		return
	}
	if err := json.Unmarshal(e.Body, &b); err != nil {
		n.logf("dropped a body that does not parse from %s: %v", e.Src, err)
		return
	}
	switch b.Type {
	case "init":
		n.init(e.Src, b)
	case "read", "write", "cas":
		client, id := e.Src, b.MsgID
		n.request(op{req: b, answer: func(a body) {
			a.InReplyTo = id
			n.send(client, a)
		}})
	case "forward":
		n.forward(e.Src, b)
	case "forward_ok":
		if o, ok := n.forwarded[b.Fwd]; ok {
			delete(n.forwarded, b.Fwd)
			var a body
			if json.Unmarshal(b.Answer, &a) == nil {
				o.answer(a)
			}
		}
	case "vote_req":
		n.voteRequest(e.Src, b)
	case "vote":
		n.vote(e.Src, b)
	case "replicate":
		n.replicate(e.Src, b)
	case "ack":
		n.ack(e.Src, b)
	}
}

func (n *node) init(from string, b body) {
	n.self, n.checksums = b.NodeID, b.Checksums
	for i, p := range b.NodeIDs {
		if p == n.self {
			n.place = i
		} else {
			n.peers = append(n.peers, p)
		}
	}
	n.lastHeard = time.Now()
	n.send(from, body{Type: "init_ok", InReplyTo: b.MsgID})
	n.report()
}

func (n *node) isPeer(id string) bool {
	for _, p := range n.peers {
		if p == id {
			return true
		}
	}
	return false
}

func (n *node) majority() int { return (len(n.peers)+1)/2 + 1 }

// tick runs the timers: the leader's heartbeat, a follower's election.
func (n *node) tick(now time.Time) {
	if n.self == "" {
		return // not initialised yet
	}
	if n.leading {
		if now.Sub(n.lastBeat) >= heartbeat {
			n.lastBeat = now
			n.broadcastCopy()
		}
		return
	}
	timeout := electionTimeout + time.Duration(n.place)*electionStagger
	if now.Sub(n.lastHeard) >= timeout && now.Sub(n.lastVote) >= timeout {
		n.campaign(now)
	}
}

// campaign starts a new term and asks for votes.
func (n *node) campaign(now time.Time) {
	n.term++
	n.votedFor, n.leader, n.candidate = n.self, "", true
	n.votes = map[string]bool{n.self: true}
	n.lastVote = now
	n.report()
	v := n.ver
	for _, p := range n.peers {
		n.send(p, body{Type: "vote_req", Term: &n.term, Version: &v})
	}
	if len(n.votes) >= n.majority() { // a cluster of one
		n.lead()
	}
}

func (n *node) voteRequest(from string, b body) {
	t := termOf(b)
	if t > n.term {
		n.stepDown(t, "")
	}
	upToDate := b.Version != nil && !n.ver.newer(*b.Version)
	granted := t == n.term && !n.leading && (n.votedFor == "" || n.votedFor == from) && upToDate
	if granted {
		n.votedFor = from
		n.lastHeard = time.Now() // a vote given holds off an election of our own
	}
	n.send(from, body{Type: "vote", Term: &n.term, Granted: granted})
}

func (n *node) vote(from string, b body) {
	t := termOf(b)
	if t > n.term {
		n.stepDown(t, "")
		return
	}
	if t < n.term || !b.Granted || !n.candidate {
		return
	}
	n.votes[from] = true
	if len(n.votes) >= n.majority() {
		n.lead()
	}
}

// lead makes this node the leader of its term. Before it serves anyone it
// commits its copy under a version of this term.
func (n *node) lead() {
	n.leading, n.candidate, n.leader, n.votes = true, false, n.self, nil
	n.ready = false
	n.committed = maps.Clone(n.store)
	n.acked = map[string]version{}
	n.report()
	n.propose(op{}) // a no-op: the copy as it is, under a new version
}

// stepDown moves to term t (if higher) and follows leader ("" for none
// yet). A leader that steps down answers the requests still waiting, and
// leaves the one being replicated unanswered: it may or may not take
// effect.
func (n *node) stepDown(t int64, leader string) {
	if t > n.term {
		n.term, n.votedFor = t, ""
	}
	if n.leading {
		for _, o := range n.queue {
			o.answer(errorBody(codeTemporarilyUnavailable, "no longer the leader"))
		}
		n.queue, n.pending = nil, nil
	}
	n.leading, n.candidate, n.votes, n.leader = false, false, nil, leader
	n.report()
}

// request handles a client's read, write or cas, here or at the leader.
func (n *node) request(o op) {
	switch {
	case o.req.Key == nil:
		o.answer(errorBody(codeMalformedRequest, "a lin-kv request needs a key"))
	case n.leading:
		n.serve(o)
	case n.leader != "":
		n.nextFwd++
		n.forwarded[n.nextFwd] = o
		raw, _ := json.Marshal(o.req)
		n.send(n.leader, body{Type: "forward", Fwd: n.nextFwd, Request: raw})
	default:
		o.answer(errorBody(codeTemporarilyUnavailable, "no leader known"))
	}
}

// forward carries out a request a follower forwarded, and sends the
// answer back to it.
func (n *node) forward(from string, b body) {
	var req body
	if err := json.Unmarshal(b.Request, &req); err != nil {
		return
	}
	fwd := b.Fwd
	answer := func(a body) {
		raw, _ := json.Marshal(a)
		n.send(from, body{Type: "forward_ok", Fwd: fwd, Answer: raw})
	}
	if !n.leading {
		answer(errorBody(codeTemporarilyUnavailable, n.self+" is not the leader"))
		return
	}
	n.serve(op{req: req, answer: answer})
}

// serve carries out a request at the leader. Reads are answered at once
// from the committed copy.
func (n *node) serve(o op) {
	if o.req.Type == "read" && n.ready {
		// THE BUG, on purpose: this node answers from its own committed
		// copy without checking that it is still the leader. Cut off from
		// the others, it goes on answering while a new leader accepts
		// writes it never hears of: a stale read.
		v, ok := n.committed[keyOf(o.req)]
		if !ok {
			o.answer(errorBody(codeKeyDoesNotExist, "no such key"))
			return
		}
		o.answer(body{Type: "read_ok", Value: &v})
		return
	}
	n.queue = append(n.queue, o)
	n.next()
}

// next starts replicating the next waiting write or cas, if nothing is
// being replicated; reads that waited for the first commit are answered.
func (n *node) next() {
	for n.pending == nil && n.ready && len(n.queue) > 0 {
		o := n.queue[0]
		n.queue = n.queue[1:]
		if o.req.Type == "read" {
			n.serve(o)
			continue
		}
		n.propose(o)
	}
}

// propose applies a write or cas (or, for a zero op, nothing) to a copy
// of the committed store and sends the copy to every node. A cas whose
// from does not match, or whose key does not exist, fails at once: the
// committed copy is the store's state, since nothing else is in flight.
func (n *node) propose(o op) {
	next := maps.Clone(n.committed)
	k := keyOf(o.req)
	switch o.req.Type {
	case "write":
		if o.req.Value == nil {
			o.answer(errorBody(codeMalformedRequest, "a write needs a value"))
			return
		}
		next[k] = *o.req.Value
	case "cas":
		v, ok := next[k]
		switch {
		case o.req.From == nil || o.req.To == nil:
			o.answer(errorBody(codeMalformedRequest, "a cas needs from and to"))
			return
		case !ok:
			o.answer(errorBody(codeKeyDoesNotExist, "no such key"))
			return
		case v != *o.req.From:
			o.answer(errorBody(codePreconditionFailed, fmt.Sprintf("key %s holds %d, not %d", k, v, *o.req.From)))
			return
		}
		next[k] = *o.req.To
	}
	n.ver = version{Term: n.term, Index: n.ver.Index + 1}
	n.store = next
	n.pending = &o
	n.acked[n.self] = n.ver
	n.broadcastCopy()
	n.commitIfHeld()
}

// broadcastCopy sends the newest copy to every node: the heartbeat.
func (n *node) broadcastCopy() {
	v := n.ver
	for _, p := range n.peers {
		n.send(p, body{Type: "replicate", Term: &n.term, Version: &v, Store: n.store})
	}
	n.lastBeat = time.Now()
}

// replicate takes the leader's copy, if it is newer, and acknowledges it.
func (n *node) replicate(from string, b body) {
	t := termOf(b)
	if t < n.term {
		n.send(from, body{Type: "ack", Term: &n.term}) // a stale leader: tell it the term
		return
	}
	if t > n.term || n.leader != from || n.leading || n.candidate {
		n.stepDown(t, from)
	}
	n.lastHeard = time.Now()
	if b.Version != nil && b.Version.newer(n.ver) {
		n.ver, n.store = *b.Version, b.Store
		if n.store == nil {
			n.store = map[string]int{}
		}
	}
	v := n.ver
	n.send(from, body{Type: "ack", Term: &n.term, Version: &v})
}

// ack counts a node's copy; a majority holding the pending version
// commits it.
func (n *node) ack(from string, b body) {
	t := termOf(b)
	if t > n.term {
		n.stepDown(t, "")
		return
	}
	if !n.leading || t < n.term || b.Version == nil {
		return
	}
	if b.Version.newer(n.acked[from]) {
		n.acked[from] = *b.Version
	}
	n.commitIfHeld()
}

func (n *node) commitIfHeld() {
	if n.pending == nil {
		return
	}
	held := 0
	for _, v := range n.acked {
		if !n.ver.newer(v) {
			held++
		}
	}
	if held < n.majority() {
		return
	}
	n.committed = maps.Clone(n.store)
	n.ready = true
	o := n.pending
	n.pending = nil
	switch o.req.Type {
	case "write", "cas":
		o.answer(body{Type: o.req.Type + "_ok"})
	}
	n.next()
}

// report tells coup whom this node believes leads, and in which term,
// whenever either changes: before any message that depends on it.
func (n *node) report() {
	key := fmt.Sprintf("%s@%d", n.leader, n.term)
	if key == n.reported {
		return
	}
	n.reported = key
	t := n.term
	n.send("coup", reportBody{Type: "report", What: "leader", Value: n.leader, Term: &t})
}

// reject tells coup that a message was dropped unread, naming it by the
// id coup wrote first on its line.
func (n *node) reject(why string, line []byte) {
	if n.self == "" {
		return
	}
	var head struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(line, &head)
	n.send("coup", reportBody{Type: "report", What: "rejected", Value: why, Msg: head.ID})
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// send writes one message and flushes it at once: coup reads lines as
// they come. A message to a peer carries the CRC-32C of its body bytes
// when init asked for checksums.
func (n *node) send(dest string, b any) {
	raw, err := json.Marshal(b)
	if err != nil {
		panic(err) // a body of plain fields always marshals
	}
	e := envelope{Src: n.self, Dest: dest, Body: raw}
	if n.checksums && n.isPeer(dest) {
		e.Sum = fmt.Sprintf("%08x", crc32.Checksum(raw, castagnoli))
	}
	line, _ := json.Marshal(e)
	n.out.Write(line)
	n.out.WriteByte('\n')
	n.out.Flush()
}

func (n *node) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s: %s\n", time.Now().Format("15:04:05.000"), n.self, fmt.Sprintf(format, args...))
}

func errorBody(code int, text string) body {
	return body{Type: "error", Code: &code, Text: text}
}

func termOf(b body) int64 {
	if b.Term == nil {
		return 0
	}
	return *b.Term
}

// keyOf is a key as the store's map holds it.
func keyOf(b body) string {
	if b.Key == nil {
		return ""
	}
	return fmt.Sprint(*b.Key)
}
