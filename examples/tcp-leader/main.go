// Command tcp-leader is an example server for coup's real-server driver,
// written with Go's standard library alone: a leader election among N
// peers over plain TCP, in numbered terms, as Raft elects its leaders (the
// election only: there is no log). coup runs servers like this one, or
// etcd, or ZooKeeper, unmodified, with a fault proxy on every directed
// link between two peers, and learns whom each server believes leads, and
// in which term, from its log lines (read through regex patterns) or from
// its status endpoint. This one offers both, so that the docs can show
// each way on a server that is small enough to read whole.
//
// How it works:
//
//   - Election. The leader sends a heartbeat to every peer every 50ms. A
//     node that hears none for its election timeout (the base given by
//     --election-timeout, plus a random part below the base, drawn again
//     for every wait from a generator seeded by the node's id) starts a
//     new term, votes for itself and asks the others. A node gives one
//     vote per term, first come first served. A majority of the N votes
//     makes the candidate the leader of that term. A node that sees a
//     higher term in any message moves to it and steps down; one asked
//     for a vote or sent a heartbeat in a lower term answers with its
//     own, so that the sender steps down.
//   - Disk. currentTerm and votedFor live in DIR/state.json, written to a
//     temporary file, synced, renamed over the old one, and the directory
//     synced, before the node sends anything that depends on them. A
//     restart on the same data keeps its term and its vote; a node
//     started on a wiped directory begins at term 0. Wiping a node's data
//     forgets its vote too, so it may vote twice in one term, and two
//     candidates may each win a majority of that term: the classic
//     hazard of replacing a voter, left in on purpose, as the kind of
//     fault coup's scenarios are there to catch.
//   - Clients. A node serves a small key-value store to clients on
//     --client, in a line protocol (below). Only the node that believes
//     it leads serves; it answers a write at once, from its own table,
//     which lives in memory alone. Replication is asynchronous: the
//     leader sends its whole table, with a version that counts its
//     writes, in every heartbeat, and a follower adopts the table of a
//     heartbeat from the leader of its current term (when it is newer
//     than the one it holds). A node that becomes leader serves from the
//     table it last adopted; a restarted node begins with an empty one.
//     So the store loses acknowledged writes when its leader fails over:
//     a write acknowledged after the last heartbeat that reached the new
//     leader is gone. And a leader cut off from the others goes on
//     believing it leads (nothing checks that a majority still hears
//     it): it serves stale reads, and accepts writes that are lost when
//     it adopts the new leader's table at the heal. This split brain is
//     a flaw left in on purpose, as the forgotten vote is, for coup's
//     kv-linearizable check to find.
//   - Leases (--lease D, off by default). The leader numbers its
//     heartbeats and a follower acknowledges each with the version of the
//     table it holds. The leader serves a read only while its lease
//     holds: D from the sending of the newest heartbeat a majority has
//     acknowledged, on its own clock; and from the table a majority holds.
//     It answers a write once a majority holds it, and leaves it
//     unanswered (closing the connection) if that does not come within a
//     second or it stops leading. A node votes only for a candidate whose
//     table is as new as its own. D is shorter than the election timeout,
//     so the followers of a leader cut off elect another only after its
//     lease has run out: if the clocks run at one rate. A leader whose
//     clock runs slow keeps serving reads from its lease after the others
//     have moved on: the stale reads of
//     scenarios/tcp-leader-lease-slow-clock.toml.
//   - Wire. Messages are newline-delimited JSON, {"type":..., "from":...,
//     "term":...} (and "granted" on a vote; "kv", the table, and
//     "version", on a heartbeat). Each node dials one
//     connection to every --peer address, and redials with backoff when
//     it breaks; it only writes to it. It only reads the connections it
//     accepts on --listen. So every message from A to B, a reply as much
//     as a request, travels on the connection that A dialled, and a proxy
//     put at the address A dials for B carries exactly the directed link
//     A→B. Messages for a link that is down wait in a short queue; past
//     that they are lost, as on a lossy network, and the timeouts retry.
//
// It writes to stderr one startup line, "n1 starting at term 3 ...", and
// then one line at each change of its belief, in one of four forms:
//
//	n1 became leader at term 3
//	n1 follows n2 at term 3
//	n1 became candidate at term 4
//	n1 lost leader at term 4
//
// The last is a node that moved to a term whose leader it does not know,
// without standing in it (whether or not it knew one before): one that
// saw a higher term in a vote request or in a reply. A pattern per form,
// such as `^(\S+) follows (\S+) at term (\d+)$`, reads the node, its
// leader and the term. GET /status on the --status address answers the
// same belief as JSON:
//
//	{"id":"n1","role":"follower","leader":"n2","term":3}
//
// where role is leader, follower or candidate, and leader is "" when
// none is known.
//
// Clients connect to the --client address over plain TCP and send one
// request per line, as many as they like on one connection; each is
// answered by one line, in order. Keys and values are integers (int64):
//
//	GET k           OK v | NOTFOUND
//	PUT k v         OK
//	CAS k from to   OK | NOTFOUND | MISMATCH v   (v: the value it holds)
//
// A node that does not believe it leads answers every well-formed request
// with NOTLEADER n2 (the leader it follows) or NOTLEADER (it knows none).
// A line it cannot read is answered "ERR " and a reason, and the
// connection goes on; so is a line longer than 4 KiB (the newline
// included), and a PUT of a new key when the table holds 1024 keys
// already. A line left unfinished when the connection ends is not carried
// out. A connection idle for 30s is closed, and past 128 connections at
// once a new one is answered ERR and closed.
//
// Usage (every flag required but --election-timeout; a scenario names
// run.sh, which builds the server on first use):
//
//	tcp-leader --id n1 --listen 127.0.1.1:7000 --status 127.0.1.1:7001 \
//	    --client 127.0.1.1:7002 --data /tmp/n1 \
//	    --peer n2=127.0.2.1:7000 --peer n3=127.0.3.1:7000 \
//	    [--election-timeout 300ms] [--lease 200ms]
//
// It exits 0 on SIGTERM or SIGINT, 2 on bad flags, and 1 when it cannot
// listen or keep its state on disk.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	heartbeat   = 50 * time.Millisecond
	tick        = 5 * time.Millisecond
	dialTimeout = time.Second
	writeLimit  = time.Second           // a write that takes longer breaks the link
	backoffMin  = 20 * time.Millisecond // doubling up to half the base election timeout
	queueLen    = 64                    // messages waiting for one link; more are dropped
	stateFile   = "state.json"
	peerLine    = 1 << 20 // the longest peer message read
	clientLine  = 4096    // the longest client request read, its newline included
	clientIdle  = 30 * time.Second
	clientConns = 128  // client connections served at once
	maxKeys     = 1024 // keys the table holds at most
)

// The roles a node plays.
const (
	follower  = "follower"
	candidate = "candidate"
	leader    = "leader"
)

// msg is one line of the peer protocol.
type msg struct {
	Type    string          `json:"type"` // vote_req, vote, heartbeat, heartbeat_reply
	From    string          `json:"from"`
	Term    int64           `json:"term"`
	Granted bool            `json:"granted,omitempty"` // vote
	KV      map[int64]int64 `json:"kv,omitempty"`      // heartbeat: the leader's table
	Version int64           `json:"version,omitempty"` // heartbeat: the table's version; heartbeat_ack, vote_req: the sender's
	KVTerm  int64           `json:"kv_term,omitempty"` // vote_req: the term of the candidate's table
	Seq     int64           `json:"seq,omitempty"`     // heartbeat: its number (lease mode); heartbeat_ack: the one acked
}

// state is what a node keeps on disk.
type state struct {
	Term     int64  `json:"term"`
	VotedFor string `json:"voted_for"`
}

// status is the answer to GET /status.
type status struct {
	ID     string `json:"id"`
	Role   string `json:"role"`
	Leader string `json:"leader"`
	Term   int64  `json:"term"`
}

type config struct {
	id, listen, status, client, data string
	peers                            map[string]string // id → address to dial
	timeout                          time.Duration
	lease                            time.Duration // 0: no leases
}

type node struct {
	cfg   config
	links map[string]chan []byte // outbound queue per peer
	rng   *rand.Rand

	mu       sync.Mutex
	st       state // as on disk
	role     string
	leader   string
	votes    map[string]bool
	deadline time.Time // a follower's or candidate's next election
	nextBeat time.Time // a leader's next heartbeat
	logged   status    // the belief last written to the log

	kv      map[int64]int64 // the table served as leader, adopted as follower
	kvTerm  int64           // the term of the leader it comes from
	version int64           // its version: writes counted since the first

	// Lease mode (--lease): what a majority has acknowledged.
	cond       *sync.Cond                // signalled when a write commits or leadership ends
	seq        int64                     // the last heartbeat's number
	sent       map[int64]time.Time       // when each recent heartbeat was sent
	acked      map[string][2]int64       // per peer: the last heartbeat number and version it acked
	leaseUntil time.Time                 // reads are served until then
	committed  int64                     // the version a majority holds
	tables     map[int64]map[int64]int64 // the table at each version not yet committed, and the committed one
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "tcp-leader: %v\n", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", cfg.id, err)
		os.Exit(1)
	}
}

// peerFlags collects the repeated --peer id=addr.
type peerFlags map[string]string

func (p peerFlags) String() string { return fmt.Sprint(map[string]string(p)) }

func (p peerFlags) Set(v string) error {
	id, addr, ok := strings.Cut(v, "=")
	if !ok || id == "" || addr == "" {
		return fmt.Errorf("want id=host:port, not %q", v)
	}
	if _, ok := p[id]; ok {
		return fmt.Errorf("peer %s given twice", id)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return err
	}
	p[id] = addr
	return nil
}

func parseFlags(args []string) (config, error) {
	cfg := config{peers: map[string]string{}}
	fs := flag.NewFlagSet("tcp-leader", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the error is printed once, by main
	fs.StringVar(&cfg.id, "id", "", "this node's id")
	fs.StringVar(&cfg.listen, "listen", "", "host:port where peers connect to this node")
	fs.StringVar(&cfg.status, "status", "", "host:port of the HTTP status endpoint")
	fs.StringVar(&cfg.client, "client", "", "host:port where clients connect")
	fs.StringVar(&cfg.data, "data", "", "data directory (created if missing)")
	fs.Var(peerFlags(cfg.peers), "peer", "id=host:port of a peer, repeated")
	fs.DurationVar(&cfg.timeout, "election-timeout", 300*time.Millisecond, "base election timeout")
	fs.DurationVar(&cfg.lease, "lease", 0, "serve reads under a leader lease this long, writes once a majority holds them (0: neither)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"id", cfg.id}, {"listen", cfg.listen}, {"status", cfg.status}, {"client", cfg.client}, {"data", cfg.data}} {
		if f.v == "" {
			missing = append(missing, "--"+f.name)
		}
	}
	if len(cfg.peers) == 0 {
		missing = append(missing, "--peer")
	}
	switch {
	case len(missing) > 0:
		return cfg, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case cfg.peers[cfg.id] != "":
		return cfg, fmt.Errorf("--peer names this node's own id %s", cfg.id)
	case cfg.timeout < 2*heartbeat:
		return cfg, fmt.Errorf("--election-timeout %v is below twice the heartbeat (%v)", cfg.timeout, heartbeat)
	case cfg.lease < 0 || cfg.lease > 0 && cfg.lease >= cfg.timeout:
		return cfg, fmt.Errorf("--lease %v must be shorter than the election timeout (%v): a new leader could be elected while the old one's lease holds", cfg.lease, cfg.timeout)
	}
	for _, a := range []struct{ name, v string }{{"listen", cfg.listen}, {"status", cfg.status}, {"client", cfg.client}} {
		if _, _, err := net.SplitHostPort(a.v); err != nil {
			return cfg, fmt.Errorf("--%s: %v", a.name, err)
		}
	}
	return cfg, nil
}

func run(cfg config) error {
	if err := os.MkdirAll(cfg.data, 0o755); err != nil {
		return err
	}
	st, err := load(cfg.data)
	if err != nil {
		return err
	}
	h := fnv.New64a()
	h.Write([]byte(cfg.id))
	n := &node{cfg: cfg, links: map[string]chan []byte{}, rng: rand.New(rand.NewPCG(h.Sum64(), 0)), st: st, role: follower, kv: map[int64]int64{}}
	n.cond = sync.NewCond(&n.mu)

	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	sl, err := net.Listen("tcp", cfg.status)
	if err != nil {
		return err
	}
	cl, err := net.Listen("tcp", cfg.client)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	ids := make([]string, 0, len(cfg.peers))
	for id := range cfg.peers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var peerList []string
	for _, id := range ids {
		peerList = append(peerList, id+"="+cfg.peers[id])
	}
	n.mu.Lock()
	fmt.Fprintf(os.Stderr, "%s starting at term %d: listening on %s, status on %s, data in %s, peers %s\n",
		cfg.id, st.Term, cfg.listen, cfg.status, cfg.data, strings.Join(peerList, " "))
	n.logged = n.status()
	n.resetElection(time.Now())
	n.mu.Unlock()

	for _, id := range ids {
		q := make(chan []byte, queueLen)
		n.links[id] = q
		go dialLoop(ctx, cfg.peers[id], q, cfg.timeout/2)
	}
	go n.accept(ln)
	go n.serveClients(cl)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		s := n.status()
		n.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(sl)

	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			ln.Close()
			cl.Close()
			srv.Close()
			return nil
		case now := <-t.C:
			n.mu.Lock()
			n.tick(now)
			n.mu.Unlock()
		}
	}
}

// The state machine. Every method below runs with n.mu held.

func (n *node) status() status {
	return status{ID: n.cfg.id, Role: n.role, Leader: n.leader, Term: n.st.Term}
}

func (n *node) majority() int { return (len(n.cfg.peers)+1)/2 + 1 }

func (n *node) resetElection(now time.Time) {
	n.deadline = now.Add(n.cfg.timeout + time.Duration(n.rng.Int64N(int64(n.cfg.timeout))))
}

func (n *node) tick(now time.Time) {
	if n.role == leader {
		if !now.Before(n.nextBeat) {
			n.heartbeat()
			n.nextBeat = now.Add(heartbeat)
		}
		return
	}
	if !now.Before(n.deadline) {
		n.campaign(now)
	}
}

// campaign starts a new term, votes for this node, and asks the others.
func (n *node) campaign(now time.Time) {
	n.save(state{Term: n.st.Term + 1, VotedFor: n.cfg.id})
	n.role, n.leader = candidate, ""
	n.votes = map[string]bool{n.cfg.id: true}
	n.resetElection(now)
	n.believe()
	n.broadcast(msg{Type: "vote_req", KVTerm: n.kvTerm, Version: n.version})
	if len(n.votes) >= n.majority() {
		n.lead()
	}
}

func (n *node) lead() {
	n.role, n.leader, n.votes = leader, n.cfg.id, nil
	n.kvTerm = n.st.Term // its table, as last adopted, is this term's now
	// No lease, and nothing of the table committed in this term, until a
	// majority acknowledges a heartbeat of it.
	n.sent, n.acked, n.leaseUntil = map[int64]time.Time{}, map[string][2]int64{}, time.Time{}
	n.committed, n.tables = -1, map[int64]map[int64]int64{n.version: copyTable(n.kv)}
	n.believe()
	n.heartbeat()
	n.nextBeat = time.Now().Add(heartbeat)
}

// heartbeat sends the leader's table to every peer; in lease mode,
// numbered, and its time kept, so that a majority's acks of it extend the
// lease from when it was sent.
func (n *node) heartbeat() {
	m := msg{Type: "heartbeat", KV: n.kv, Version: n.version}
	if n.cfg.lease > 0 {
		n.seq++
		m.Seq = n.seq
		n.sent[n.seq] = time.Now()
		delete(n.sent, n.seq-64)
	}
	n.broadcast(m)
}

// acknowledged takes a peer's ack of a heartbeat: the lease runs from the
// newest heartbeat a majority (this node included) has acked, on this
// node's clock, and the newest version a majority holds is committed.
func (n *node) acknowledged(from string, seq, version int64) {
	a := n.acked[from]
	n.acked[from] = [2]int64{max(a[0], seq), max(a[1], version)}
	seqs, versions := []int64{n.seq}, []int64{n.version}
	for _, a := range n.acked {
		seqs, versions = append(seqs, a[0]), append(versions, a[1])
	}
	if len(seqs) < n.majority() {
		return
	}
	// The majority-th largest is what a majority has reached.
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] > seqs[j] })
	sort.Slice(versions, func(i, j int) bool { return versions[i] > versions[j] })
	if t, ok := n.sent[seqs[n.majority()-1]]; ok && t.Add(n.cfg.lease).After(n.leaseUntil) {
		n.leaseUntil = t.Add(n.cfg.lease)
	}
	if v := versions[n.majority()-1]; v > n.committed {
		if _, ok := n.tables[v]; ok {
			n.committed = v
			for old := range n.tables {
				if old < v {
					delete(n.tables, old)
				}
			}
			n.cond.Broadcast()
		}
	}
}

func copyTable(kv map[int64]int64) map[int64]int64 {
	out := make(map[int64]int64, len(kv))
	for k, v := range kv {
		out[k] = v
	}
	return out
}

// adopt takes the table of a heartbeat from the leader of this node's
// term, unless the one it holds is as new.
func (n *node) adopt(m msg) {
	if m.Term < n.kvTerm || m.Term == n.kvTerm && m.Version <= n.version {
		return
	}
	n.kv, n.kvTerm, n.version = m.KV, m.Term, m.Version
	if n.kv == nil {
		n.kv = map[int64]int64{}
	}
}

// stepDown moves to a higher term t as a follower that knows no leader.
func (n *node) stepDown(t int64) {
	n.save(state{Term: t})
	if n.role == leader {
		n.cond.Broadcast() // writes waiting for a majority are let go
	}
	n.role, n.leader, n.votes = follower, "", nil
	n.resetElection(time.Now())
}

func (n *node) handle(m msg) {
	if _, ok := n.cfg.peers[m.From]; !ok {
		return // not one of ours
	}
	if m.Term > n.st.Term {
		n.stepDown(m.Term)
	}
	switch m.Type {
	case "vote_req":
		granted := m.Term == n.st.Term && (n.st.VotedFor == "" || n.st.VotedFor == m.From)
		if n.cfg.lease > 0 && (m.KVTerm < n.kvTerm || m.KVTerm == n.kvTerm && m.Version < n.version) {
			granted = false // its table lacks writes this node holds, which may be committed
		}
		if granted && n.st.VotedFor == "" {
			n.save(state{Term: n.st.Term, VotedFor: m.From})
		}
		if granted {
			n.resetElection(time.Now()) // a vote given holds off our own
		}
		n.send(m.From, msg{Type: "vote", Granted: granted})
	case "vote":
		if n.role == candidate && m.Term == n.st.Term && m.Granted {
			n.votes[m.From] = true
			if len(n.votes) >= n.majority() {
				n.lead()
			}
		}
	case "heartbeat":
		switch {
		case m.Term < n.st.Term:
			n.send(m.From, msg{Type: "heartbeat_reply"}) // a stale leader: tell it the term
		case n.role == leader:
			// Two leaders in one term: only a forgotten vote allows it
			// (see "Disk" above). Each goes on; the harness sees both.
		default:
			n.role, n.leader, n.votes = follower, m.From, nil
			n.resetElection(time.Now())
			n.adopt(m)
			if m.Seq > 0 {
				n.send(m.From, msg{Type: "heartbeat_ack", Seq: m.Seq, Version: n.version})
			}
		}
	case "heartbeat_ack":
		if n.role == leader && m.Term == n.st.Term && n.cfg.lease > 0 {
			n.acknowledged(m.From, m.Seq, m.Version)
		}
	}
	n.believe()
}

// believe logs the node's belief if it changed since the last line.
func (n *node) believe() {
	s := n.status()
	if s == n.logged {
		return
	}
	n.logged = s
	id, t := n.cfg.id, s.Term
	switch {
	case s.Role == leader:
		fmt.Fprintf(os.Stderr, "%s became leader at term %d\n", id, t)
	case s.Role == candidate:
		fmt.Fprintf(os.Stderr, "%s became candidate at term %d\n", id, t)
	case s.Leader != "":
		fmt.Fprintf(os.Stderr, "%s follows %s at term %d\n", id, s.Leader, t)
	default:
		fmt.Fprintf(os.Stderr, "%s lost leader at term %d\n", id, t)
	}
}

func (n *node) broadcast(m msg) {
	for id := range n.links {
		n.send(id, m)
	}
}

// send queues a message for a peer's link, stamped with this node's id
// and term; if the queue is full, the message is lost.
func (n *node) send(to string, m msg) {
	m.From, m.Term = n.cfg.id, n.st.Term
	line, _ := json.Marshal(m)
	select {
	case n.links[to] <- append(line, '\n'):
	default:
	}
}

// save writes the state to disk, and syncs it, before anything depends
// on it; a node that cannot keep its vote must not go on voting.
func (n *node) save(st state) {
	if err := store(n.cfg.data, st); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", n.cfg.id, err)
		os.Exit(1)
	}
	n.st = st
}

func load(dir string) (state, error) {
	var st state
	raw, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("%s: %v", filepath.Join(dir, stateFile), err)
	}
	return st, nil
}

func store(dir string, st state) error {
	raw, _ := json.Marshal(st)
	path := filepath.Join(dir, stateFile)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(append(raw, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// The network.

// accept reads the messages peers send on the connections they dial.
func (n *node) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed at shutdown
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			sc.Buffer(make([]byte, 64<<10), peerLine)
			for sc.Scan() {
				var m msg
				if json.Unmarshal(sc.Bytes(), &m) != nil {
					continue
				}
				n.mu.Lock()
				n.handle(m)
				n.mu.Unlock()
			}
		}()
	}
}

// dialLoop keeps one connection to a peer's address, redialling with
// backoff, and writes the peer's queued messages to it. It reads nothing
// but the connection's end. The backoff stops at backoffMax, half the
// base election timeout, so that a peer that restarts hears the leader
// before its own first timeout.
func dialLoop(ctx context.Context, addr string, q chan []byte, backoffMax time.Duration) {
	d := net.Dialer{Timeout: dialTimeout}
	backoff := backoffMin
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, backoffMax)
			continue
		}
		closed := make(chan struct{})
		go func() {
			io.Copy(io.Discard, c)
			close(closed)
		}()
	write:
		for {
			select {
			case <-ctx.Done():
				c.Close()
				return
			case <-closed:
				break write
			case line := <-q:
				c.SetWriteDeadline(time.Now().Add(writeLimit))
				if _, err := c.Write(line); err != nil {
					break write
				}
				backoff = backoffMin
			}
		}
		c.Close()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, backoffMax)
	}
}

// Clients.

// serveClients answers the clients on the connections they open, up to
// clientConns at once.
func (n *node) serveClients(ln net.Listener) {
	slots := make(chan struct{}, clientConns)
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed at shutdown
		}
		select {
		case slots <- struct{}{}:
		default:
			c.SetWriteDeadline(time.Now().Add(writeLimit))
			io.WriteString(c, "ERR too many connections\n")
			c.Close()
			continue
		}
		go func() {
			defer func() { <-slots }()
			n.serveClient(c)
		}()
	}
}

// serveClient answers one connection's requests, a line each, in order,
// until the client closes it or leaves it idle for clientIdle. A line is
// carried out only once its newline has come: one cut short by the end
// of the connection is dropped.
func (n *node) serveClient(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, clientLine)
	for {
		c.SetReadDeadline(time.Now().Add(clientIdle))
		line, err := r.ReadSlice('\n')
		var answer string
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n') // the rest of the line, unread
			}
			if err != nil {
				return
			}
			answer = fmt.Sprintf("ERR line longer than %d bytes", clientLine)
		case err != nil:
			return
		default:
			answer = n.request(string(line[:len(line)-1]))
			if answer == noAnswer {
				return // a write whose fate is unknown: no answer
			}
		}
		c.SetWriteDeadline(time.Now().Add(writeLimit))
		if _, err := io.WriteString(c, answer+"\n"); err != nil {
			return
		}
	}
}

// arity is the number of arguments of each request.
var arity = map[string]int{"GET": 1, "PUT": 2, "CAS": 3}

// request carries out one request line and returns its answer.
func (n *node) request(line string) string {
	f := strings.Fields(strings.TrimSuffix(line, "\r"))
	if len(f) == 0 {
		return "ERR empty request"
	}
	args, ok := arity[f[0]]
	if !ok {
		return "ERR unknown request " + quote(f[0])
	}
	if len(f)-1 != args {
		return "ERR want GET k, PUT k v or CAS k from to"
	}
	var a [3]int64
	for i, s := range f[1:] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return "ERR not an int64: " + quote(s)
		}
		a[i] = v
	}

	n.mu.Lock()
	defer n.mu.Unlock()
	if n.role != leader {
		if n.leader == "" {
			return "NOTLEADER"
		}
		return "NOTLEADER " + n.leader
	}
	if n.cfg.lease > 0 {
		return n.leased(f[0], a)
	}
	k := a[0]
	v, found := n.kv[k]
	switch f[0] {
	case "GET":
		if !found {
			return "NOTFOUND"
		}
		return fmt.Sprintf("OK %d", v)
	case "PUT":
		if !found && len(n.kv) >= maxKeys {
			return fmt.Sprintf("ERR table full (%d keys)", maxKeys)
		}
		n.kv[k] = a[1]
		n.version++
		return "OK"
	default: // CAS
		switch {
		case !found:
			return "NOTFOUND"
		case v != a[1]:
			return fmt.Sprintf("MISMATCH %d", v)
		}
		n.kv[k] = a[2]
		n.version++
		return "OK"
	}
}

// noAnswer is what leased returns for a write it cannot say the fate of:
// the connection is closed unanswered, so that the client knows no more
// than the server.
const noAnswer = ""

// leased carries out a request in lease mode (n.mu held): a read from the
// committed table while the lease holds, on this node's clock; a write to
// the newest table, answered once a majority holds it, or not at all if
// that does not come within a second or the node stops leading.
func (n *node) leased(op string, a [3]int64) string {
	k := a[0]
	if op == "GET" {
		if !time.Now().Before(n.leaseUntil) || n.committed < 0 {
			return "NOTLEADER" // no lease: a new leader may already serve
		}
		v, found := n.tables[n.committed][k]
		if !found {
			return "NOTFOUND"
		}
		return fmt.Sprintf("OK %d", v)
	}
	v, found := n.kv[k]
	switch {
	case op == "PUT" && !found && len(n.kv) >= maxKeys:
		return fmt.Sprintf("ERR table full (%d keys)", maxKeys)
	case op == "CAS" && !found:
		return "NOTFOUND"
	case op == "CAS" && v != a[1]:
		return fmt.Sprintf("MISMATCH %d", v)
	}
	kv := copyTable(n.kv)
	kv[k] = a[1]
	if op == "CAS" {
		kv[k] = a[2]
	}
	n.kv = kv
	n.version++
	mine, term := n.version, n.st.Term
	n.tables[mine] = kv
	deadline := time.Now().Add(time.Second)
	t := time.AfterFunc(time.Second, func() {
		n.mu.Lock()
		n.cond.Broadcast()
		n.mu.Unlock()
	})
	defer t.Stop()
	for n.committed < mine && n.role == leader && n.st.Term == term && time.Now().Before(deadline) {
		n.cond.Wait()
	}
	if n.committed >= mine && n.st.Term == term {
		return "OK"
	}
	return noAnswer
}

// quote shows a client's word in an answer: its first 32 bytes, quoted,
// so that the answer stays one printable line.
func quote(s string) string {
	if len(s) > 32 {
		return strconv.Quote(s[:32]) + "..."
	}
	return strconv.Quote(s)
}
