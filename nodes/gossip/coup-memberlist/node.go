package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/gossip"
	"github.com/coupharness/coup/nodes/process"
	"github.com/coupharness/coup/nodes/wire"
)

// Run is the node program: it speaks the node protocol on in and out until
// in ends.
func Run(in io.Reader, out, logw io.Writer) error {
	n := &node{
		out: bufio.NewWriterSize(out, 32<<10),
		log: process.NewLog(logw, gossip.Name),
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), process.MaxLine)
	for sc.Scan() {
		if err := n.handleLine(sc.Bytes()); err != nil {
			return err
		}
		if err := n.writeErr(); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		n.log.Error("read input", "error", err)
	}
	n.log.Info("input closed; exiting")
	if n.ml != nil {
		close(n.stop)
		_ = n.ml.Shutdown() // no Leave: a stopped node is gone, as a crashed one
	}
	return n.writeErr()
}

type node struct {
	self      string
	all       []string
	ids       map[string]int
	checksums bool
	p         gossip.Params
	t         *transport
	ml        *memberlist.Memberlist
	log       *slog.Logger
	stop      chan struct{}

	wmu  sync.Mutex // guards out and werr: memberlist sends from its own goroutines
	out  *bufio.Writer
	buf  []byte
	werr error

	vmu    sync.Mutex // guards the view
	alive  map[string]bool
	leader string
	joined bool // the first join is over: until then the node believes in no leader
}

func (n *node) write(e wire.Envelope) {
	n.wmu.Lock()
	defer n.wmu.Unlock()
	if n.werr != nil {
		return
	}
	n.buf = e.Append(n.buf[:0])
	if _, err := n.out.Write(n.buf); err != nil {
		n.werr = fmt.Errorf("write output: %w", err)
		return
	}
	if err := n.out.Flush(); err != nil {
		n.werr = fmt.Errorf("write output: %w", err)
	}
}

func (n *node) writeErr() error {
	n.wmu.Lock()
	defer n.wmu.Unlock()
	return n.werr
}

func (n *node) send(dest string, b body) {
	raw := encode(b)
	e := wire.Envelope{Src: n.self, Dest: dest, Body: raw}
	if n.checksums {
		e.Sum = wire.Sum(raw)
	}
	n.write(e)
}

func (n *node) report(r wire.ReportBody) {
	r.Type = "report"
	b, _ := json.Marshal(r)
	n.write(wire.Envelope{Src: n.self, Dest: wire.Harness, Body: b})
}

func (n *node) handleLine(line []byte) error {
	env, err := wire.Parse(line)
	if err != nil {
		id := wire.LeadingID(line)
		n.log.Warn("rejected an unparsable line", "error", err, "msg", id)
		n.reject("unparsable", id)
		return nil
	}
	switch {
	case n.ml == nil:
		return n.handleInit(env)
	case env.Src == wire.Harness:
		head, _ := wire.ParseHead(env.Body)
		n.log.Warn("control message ignored: memberlist keeps its own clock", "type", head.Type)
	case slices.Contains(n.all, env.Src):
		n.handlePeer(env)
	default:
		n.handleClient(env)
	}
	return nil
}

func (n *node) reject(why string, id int64) {
	if n.self != "" {
		n.report(wire.ReportBody{What: "rejected", Value: why, Msg: id})
	}
}

func (n *node) handleInit(env wire.Envelope) error {
	var in wire.InitBody
	if err := json.Unmarshal(env.Body, &in); err != nil || in.Type != "init" {
		n.log.Error("expected init before anything else", "body", string(env.Body))
		return nil
	}
	reply := func(body any) {
		b, _ := json.Marshal(body)
		n.write(wire.Envelope{Src: in.NodeID, Dest: env.Src, Body: b})
	}
	fail := func(err error) error {
		code := nodes.CodePreconditionFailed
		reply(wire.ReplyBody{Type: "error", InReplyTo: in.MsgID, Code: &code, Text: err.Error(), Definite: true})
		return err
	}
	if err := process.CheckInit(&in, gossip.Name); err != nil {
		return fail(err)
	}
	p, err := gossip.ParseParams(nodes.NewParams(in.Params))
	if err != nil {
		return fail(err)
	}
	n.self, n.all, n.p, n.checksums = in.NodeID, in.NodeIDs, p, in.Checksums
	n.log = n.log.With("node", n.self)
	n.ids = process.ElectionIDs(&in)
	n.alive = map[string]bool{}
	n.stop = make(chan struct{})

	// The epoch tells this incarnation's streams from those of a former
	// process under the same id.
	n.t = newTransport(n.self, n.all, strconv.FormatUint(rand.Uint64(), 36), n.send)

	c := memberlist.DefaultLocalConfig()
	c.Name = n.self
	c.Transport = n.t
	c.Events = (*events)(n)
	c.Logger = log.New(logWriter{n}, "", 0)
	c.ProbeInterval, c.ProbeTimeout = p.ProbeInterval, p.ProbeTimeout
	c.GossipInterval, c.SuspicionMult = p.GossipInterval, p.SuspicionMult
	c.PushPullInterval, c.GossipToTheDeadTime = p.PushPullInterval, p.GossipToTheDead
	c.TCPTimeout = p.StreamTimeout
	ml, err := memberlist.Create(c)
	if err != nil {
		return fail(fmt.Errorf("init: memberlist: %w", err))
	}
	n.ml = ml
	reply(map[string]any{"type": "init_ok", "in_reply_to": in.MsgID})
	n.log.Info("initialised", "nodes", n.all, "checksums", n.checksums)
	go n.joiner()
	return nil
}

// joiner joins every other node at start and, with rejoin_every, again and
// again every node it does not believe alive.
func (n *node) joiner() {
	n.join()
	n.vmu.Lock()
	n.joined = true
	n.vmu.Unlock()
	n.recompute()
	if n.p.RejoinEvery <= 0 {
		return
	}
	tick := time.NewTicker(n.p.RejoinEvery)
	defer tick.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
			n.join()
		}
	}
}

func (n *node) join() {
	n.vmu.Lock()
	var addrs []string
	for i, id := range n.all {
		if id != n.self && !n.alive[id] {
			addrs = append(addrs, Address(i))
		}
	}
	n.vmu.Unlock()
	if len(addrs) == 0 {
		return
	}
	joined, err := n.ml.Join(addrs)
	if err != nil {
		n.log.Info("join", "asked", len(addrs), "joined", joined, "err", err)
		return
	}
	n.log.Info("join", "asked", len(addrs), "joined", joined)
}

// recompute reports the leader (the highest election id among this node
// and the members it believes alive) when it changes. A node that has not
// yet tried to join the others believes in no leader, rather than in
// itself.
func (n *node) recompute() {
	n.vmu.Lock()
	defer n.vmu.Unlock()
	if !n.joined {
		return
	}
	best := n.self
	for m := range n.alive {
		if n.ids[m] > n.ids[best] || (n.ids[m] == n.ids[best] && m > best) {
			best = m
		}
	}
	if best != n.leader {
		n.leader = best
		n.report(wire.ReportBody{What: "leader", Value: best})
	}
}

// events receives memberlist's view changes.
type events node

func (e *events) NotifyJoin(m *memberlist.Node)   { (*node)(e).member(m.Name, true) }
func (e *events) NotifyLeave(m *memberlist.Node)  { (*node)(e).member(m.Name, false) }
func (e *events) NotifyUpdate(m *memberlist.Node) {}

func (n *node) member(name string, alive bool) {
	if name == n.self {
		return
	}
	n.vmu.Lock()
	was := n.alive[name]
	if alive {
		n.alive[name] = true
	} else {
		delete(n.alive, name)
	}
	count := len(n.alive) + 1
	n.vmu.Unlock()
	if was != alive {
		n.log.Info("view changed", "member", name, "alive", alive)
		n.report(wire.ReportBody{What: "metric", Name: "members", Value: strconv.Itoa(count)})
		n.recompute()
	}
}

func (n *node) handlePeer(env wire.Envelope) {
	if n.checksums && !env.Verify() {
		n.log.Warn("rejected a message whose checksum does not match", "msg", env.ID, "src", env.Src)
		n.reject("checksum", env.ID)
		return
	}
	var b body
	if err := json.Unmarshal(env.Body, &b); err != nil {
		n.log.Warn("rejected an undecodable message", "error", err, "msg", env.ID, "src", env.Src)
		n.reject("undecodable", env.ID)
		return
	}
	n.t.receive(env.Src, b)
}

func (n *node) handleClient(env wire.Envelope) {
	var req wire.RequestBody
	if err := json.Unmarshal(env.Body, &req); err != nil {
		n.log.Warn("bad client request", "error", err, "src", env.Src)
		return
	}
	var b []byte
	if req.Type == "elect" {
		n.vmu.Lock()
		b, _ = json.Marshal(wire.ReplyBody{Type: "elect_ok", InReplyTo: req.MsgID, Value: n.leader})
		n.vmu.Unlock()
	} else {
		code := nodes.CodeNotSupported
		b, _ = json.Marshal(wire.ReplyBody{Type: "error", InReplyTo: req.MsgID, Code: &code, Text: "memberlist only knows elect", Definite: true})
	}
	n.write(wire.Envelope{Src: n.self, Dest: env.Src, Body: b})
}

// logWriter turns memberlist's log lines ("[WARN] memberlist: …") into the
// node's log lines, at their level.
type logWriter struct{ n *node }

func (w logWriter) Write(p []byte) (int, error) {
	msg := strings.TrimRight(string(p), "\n")
	level := slog.LevelInfo
	for prefix, l := range map[string]slog.Level{"[DEBUG] ": slog.LevelDebug, "[INFO] ": slog.LevelInfo, "[WARN] ": slog.LevelWarn, "[ERR] ": slog.LevelError} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			msg, level = rest, l
			break
		}
	}
	w.n.log.Log(context.Background(), level, msg, "from", "memberlist")
	return len(p), nil
}
