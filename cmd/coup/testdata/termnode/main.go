// Command termnode is a test fixture of coup's end-to-end tests: a foreign
// node, written with the standard library alone, that elects a leader by
// majority vote in numbered terms, as Raft does, and reports its belief
// with its term. It is not one of coup's nodes: it knows only the protocol
// (docs/protocol.md).
//
// A node starts as a follower in term 0. When it hears from no leader for
// an election timeout it starts a new term, votes for itself and asks the
// others for their votes; each node gives one vote per term. A majority
// makes it leader of that term; it then sends heartbeats. A node that hears
// of a higher term moves to it and follows. A leader cut off from the
// others goes on believing it leads in its old term until it hears of the
// newer one: a stale leader, never two leaders in one term.
//
// Flags make it misbehave on purpose, for the tests:
//
//	-bug takeover   a node whose election timer fires takes over the
//	                current term at once, without a vote: two leaders in
//	                one term as soon as the leader is cut off
//	-mode exit      exit at start, saying why on stderr
//	-mode silent    answer init into a buffer that is never flushed, as a
//	                program that forgets to flush its output does
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"time"
)

const (
	heartbeat  = 30 * time.Millisecond
	electionLo = 150 * time.Millisecond // election timeouts are drawn from [lo, hi)
	electionHi = 300 * time.Millisecond
)

// envelope is one line of the protocol.
type envelope struct {
	Src  string          `json:"src"`
	Dest string          `json:"dest"`
	Body json.RawMessage `json:"body"`
}

// body holds every field of the bodies this node reads or writes.
type body struct {
	Type      string   `json:"type"`
	MsgID     int      `json:"msg_id,omitempty"`
	InReplyTo int      `json:"in_reply_to,omitempty"`
	NodeID    string   `json:"node_id,omitempty"`
	NodeIDs   []string `json:"node_ids,omitempty"`
	Seed      int64    `json:"seed,omitempty"`
	Term      *int64   `json:"term,omitempty"`
	Granted   bool     `json:"granted,omitempty"`
	// Reports to the harness.
	What  string `json:"what,omitempty"`
	Value string `json:"value,omitempty"`
}

type node struct {
	out      *bufio.Writer
	flush    bool
	takeover bool
	rng      *rand.Rand

	self     string
	peers    []string
	term     int64
	votedFor string
	leader   string
	leading  bool
	votes    map[string]bool
	election *time.Timer
	reported string // the last belief reported, "leader@term"
}

func main() {
	bug := flag.String("bug", "", "misbehave on purpose: takeover")
	mode := flag.String("mode", "", "fail on purpose: exit, silent")
	flag.Parse()
	if *mode == "exit" {
		fmt.Fprintln(os.Stderr, "termnode: cannot open /nonexistent/state: no such file or directory")
		os.Exit(3)
	}
	n := &node{out: bufio.NewWriter(os.Stdout), flush: *mode != "silent", takeover: *bug == "takeover"}
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	n.election = time.NewTimer(time.Hour)
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return
			}
			n.handle(line)
		case <-n.election.C:
			n.timeout()
		case <-beat.C:
			if n.leading {
				n.broadcast(body{Type: "beat", Term: &n.term})
			}
		}
	}
}

func (n *node) handle(line []byte) {
	var e envelope
	var b body
	if json.Unmarshal(line, &e) != nil || json.Unmarshal(e.Body, &b) != nil {
		fmt.Fprintf(os.Stderr, "termnode: ignoring a line that does not parse: %.100s\n", line)
		return
	}
	var t int64
	if b.Term != nil {
		t = *b.Term
	}
	switch b.Type {
	case "init":
		n.self = b.NodeID
		for _, p := range b.NodeIDs {
			if p != n.self {
				n.peers = append(n.peers, p)
			}
		}
		h := fnv.New64a()
		h.Write([]byte(n.self))
		n.rng = rand.New(rand.NewPCG(uint64(b.Seed), h.Sum64()))
		n.send(e.Src, body{Type: "init_ok", InReplyTo: b.MsgID})
		n.report()
		n.resetElection()
	case "vote_req":
		if t > n.term {
			n.follow(t, "")
		}
		granted := t == n.term && (n.votedFor == "" || n.votedFor == e.Src) && !n.leading
		if granted {
			n.votedFor = e.Src
			n.resetElection()
		}
		n.send(e.Src, body{Type: "vote", Term: &n.term, Granted: granted})
	case "vote":
		if t > n.term {
			n.follow(t, "")
			return
		}
		if t < n.term || !b.Granted || n.leading || n.votes == nil {
			return
		}
		n.votes[e.Src] = true
		if len(n.votes) > (len(n.peers)+1)/2 {
			n.lead()
		}
	case "beat":
		switch {
		case t < n.term: // a stale leader: tell it the term
			n.send(e.Src, body{Type: "beat_ack", Term: &n.term})
		default:
			n.follow(t, e.Src)
			n.resetElection()
		}
	case "beat_ack":
		if t > n.term {
			n.follow(t, "")
		}
	}
}

// timeout starts an election, or, with the takeover bug, takes over the
// current term.
func (n *node) timeout() {
	if n.leading {
		return
	}
	if n.takeover && n.leader != "" {
		n.lead()
		return
	}
	n.term++
	n.votedFor, n.leader = n.self, ""
	n.votes = map[string]bool{n.self: true}
	n.report()
	n.broadcast(body{Type: "vote_req", Term: &n.term})
	n.resetElection()
}

func (n *node) lead() {
	n.leading, n.leader, n.votes = true, n.self, nil
	n.report()
	n.broadcast(body{Type: "beat", Term: &n.term})
}

// follow moves to term t (if higher) and follows leader ("" for none yet).
func (n *node) follow(t int64, leader string) {
	if t > n.term {
		n.term, n.votedFor = t, ""
	}
	n.leading, n.votes, n.leader = false, nil, leader
	n.report()
}

func (n *node) resetElection() {
	n.election.Stop()
	n.election.Reset(electionLo + time.Duration(n.rng.Int64N(int64(electionHi-electionLo))))
}

// report tells the harness its belief and term when they change, before
// any message that depends on them.
func (n *node) report() {
	if key := fmt.Sprintf("%s@%d", n.leader, n.term); key != n.reported {
		n.reported = key
		n.send("coup", body{Type: "report", What: "leader", Value: n.leader, Term: &n.term})
	}
}

func (n *node) broadcast(b body) {
	for _, p := range n.peers {
		n.send(p, b)
	}
}

func (n *node) send(dest string, b body) {
	raw, err := json.Marshal(b)
	if err != nil {
		panic(err) // a body of plain fields always marshals
	}
	line, _ := json.Marshal(envelope{Src: n.self, Dest: dest, Body: raw})
	n.out.Write(line)
	n.out.WriteByte('\n')
	if n.flush {
		n.out.Flush() // every line, at once: the harness reads them as they come
	}
}
