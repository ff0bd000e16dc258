// Package process runs one algorithm state machine as a real node process:
// it speaks the node protocol (package wire) on an input and an output
// stream, usually stdin and stdout, keeps the machine's timers on the real
// clock, checks message sums, and writes its log as JSON lines (NewLog).
//
// Run handles one input at a time, in the order the inputs arrive, and
// flushes the output after each, so the harness sees a node's reports and
// messages in the order the machine made them.
package process

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/wire"
)

// Options configure Run.
type Options struct {
	// In and Out carry protocol lines; Log receives the node's log.
	In  io.Reader
	Out io.Writer
	Log io.Writer
	// Spec is the algorithm to run.
	Spec nodes.Spec
}

// MaxLine is the longest input line a node accepts.
const MaxLine = 16 << 20

// Run runs a node until its input ends. It returns an error only when the
// node cannot go on: a bad init, or an output that cannot be written.
func Run(o Options) error {
	n := &node{
		spec:  o.Spec,
		out:   bufio.NewWriterSize(o.Out, 32<<10),
		log:   NewLog(o.Log, o.Spec.Name),
		rate:  1,
		fired: make(chan firing, 64),
	}
	lines := make(chan []byte, 64)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(o.In)
		sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		readErr <- sc.Err()
		close(lines)
	}()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				if err := <-readErr; err != nil {
					n.log.Error("read input", "error", err)
				}
				n.log.Info("input closed; exiting")
				return n.flush()
			}
			n.handleLine(line)
		case f := <-n.fired:
			n.handleTimer(f)
		}
		if err := n.flush(); err != nil {
			return err
		}
		if n.fatal != nil {
			return n.fatal
		}
	}
}

type firing struct {
	name string
	gen  uint64
}

type timer struct {
	t   *time.Timer
	gen uint64
}

// node is one running node; it implements nodes.Env for its machine.
type node struct {
	spec      nodes.Spec
	m         nodes.Machine
	self      string
	all       []string
	ids       map[string]int
	peers     map[string]bool
	checksums bool
	rate      float64
	rng       *rand.Rand
	out       *bufio.Writer
	buf       []byte
	log       *slog.Logger
	timers    map[string]*timer
	started   bool
	gen       uint64
	fired     chan firing
	writeErr  error
	fatal     error
}

var _ nodes.Env = (*node)(nil)

func (n *node) flush() error {
	if n.writeErr != nil {
		return n.writeErr
	}
	if err := n.out.Flush(); err != nil {
		n.writeErr = fmt.Errorf("write output: %w", err)
	}
	return n.writeErr
}

func (n *node) write(e wire.Envelope) {
	n.buf = e.Append(n.buf[:0])
	if _, err := n.out.Write(n.buf); err != nil && n.writeErr == nil {
		n.writeErr = fmt.Errorf("write output: %w", err)
	}
}

func (n *node) handleLine(line []byte) {
	env, err := wire.Parse(line)
	if err != nil {
		id := wire.LeadingID(line)
		n.log.Warn("rejected an unparsable line", "error", err, "msg", id)
		n.reject("unparsable", id)
		return
	}
	if n.m == nil {
		n.handleInit(env)
		return
	}
	if env.Src == wire.Harness {
		n.handleControl(env)
		return
	}
	if n.peers[env.Src] {
		n.handlePeer(env)
		return
	}
	n.handleClient(env)
}

func (n *node) reject(why string, id int64) {
	if n.self == "" {
		return // not initialised: nobody to report as
	}
	n.sendReport(wire.ReportBody{Type: "report", What: "rejected", Value: why, Msg: id})
}

func (n *node) handleInit(env wire.Envelope) {
	var in wire.InitBody
	if err := json.Unmarshal(env.Body, &in); err != nil || in.Type != "init" {
		n.log.Error("expected init before anything else", "body", string(env.Body))
		return
	}
	reply := func(body any) {
		b, _ := json.Marshal(body)
		n.write(wire.Envelope{Src: in.NodeID, Dest: env.Src, Body: b})
	}
	fail := func(err error) {
		code := nodes.CodePreconditionFailed
		reply(wire.ReplyBody{Type: "error", InReplyTo: in.MsgID, Code: &code, Text: err.Error(), Definite: true})
		n.fatal = err
	}
	if err := CheckInit(&in, n.spec.Name); err != nil {
		fail(err)
		return
	}
	n.self = in.NodeID
	n.log = n.log.With("node", n.self)
	n.all = in.NodeIDs
	n.ids = ElectionIDs(&in)
	n.peers = make(map[string]bool, len(in.NodeIDs))
	for _, id := range in.NodeIDs {
		if id != n.self {
			n.peers[id] = true
		}
	}
	n.checksums = in.Checksums
	if in.ClockRate > 0 {
		n.rate = in.ClockRate
	}
	h := fnv.New64a()
	h.Write([]byte(n.self))
	n.rng = rand.New(rand.NewPCG(uint64(in.Seed), h.Sum64()))
	n.timers = map[string]*timer{}
	m, err := n.spec.New(nodes.NewParams(in.Params))
	if err != nil {
		fail(err)
		return
	}
	n.m = m
	reply(map[string]any{"type": "init_ok", "in_reply_to": in.MsgID})
	n.log.Info("initialised", "nodes", n.all, "checksums", n.checksums, "clock_rate", n.rate, "defer_start", in.DeferStart)
	if !in.DeferStart {
		n.start("at init")
	}
}

// start starts the machine, once.
func (n *node) start(why string) {
	if n.started {
		return
	}
	n.started = true
	n.log.Info("started", "why", why)
	n.m.Start(n)
}

// CheckInit returns the error for an init message that a node running algo
// cannot take: no node ids, ids that do not match them, or another
// algorithm.
func CheckInit(in *wire.InitBody, algo string) error {
	switch {
	case in.NodeID == "" || len(in.NodeIDs) == 0:
		return errors.New("init: node_id and node_ids are required")
	case len(in.IDs) != 0 && len(in.IDs) != len(in.NodeIDs):
		return fmt.Errorf("init: %d ids for %d nodes", len(in.IDs), len(in.NodeIDs))
	case in.Algorithm != "" && in.Algorithm != algo:
		return fmt.Errorf("init: asked to run %q, but this node runs %q", in.Algorithm, algo)
	}
	return nil
}

// ElectionIDs returns each node's election id: the one init gives, or else
// DefaultID.
func ElectionIDs(in *wire.InitBody) map[string]int {
	ids := make(map[string]int, len(in.NodeIDs))
	for i, id := range in.NodeIDs {
		if len(in.IDs) > 0 {
			ids[id] = in.IDs[i]
		} else {
			ids[id] = DefaultID(id)
		}
	}
	return ids
}

// DefaultID is the election id of a node that the scenario gave none: the
// number in its name ("n3" has 3), or 0.
func DefaultID(node string) int {
	i := strings.LastIndexFunc(node, func(r rune) bool { return r < '0' || r > '9' })
	v, err := strconv.Atoi(node[i+1:])
	if err != nil {
		return 0
	}
	return v
}

func (n *node) handleControl(env wire.Envelope) {
	head, err := wire.ParseHead(env.Body)
	if err != nil {
		n.log.Warn("bad control message", "error", err)
		return
	}
	switch head.Type {
	case "start":
		n.start("on the harness's start")
	case "clock_rate":
		var c wire.ClockRateBody
		if err := json.Unmarshal(env.Body, &c); err != nil || c.Rate <= 0 {
			n.log.Warn("bad clock_rate", "body", string(env.Body))
			return
		}
		n.rate = c.Rate
		n.log.Info("clock rate changed", "clock_rate", c.Rate)
	default:
		n.log.Warn("unknown control message", "type", head.Type)
	}
}

func (n *node) handlePeer(env wire.Envelope) {
	n.start("on a message before the harness's start")
	if n.checksums && !env.Verify() {
		n.log.Warn("rejected a message whose checksum does not match", "msg", env.ID, "src", env.Src)
		n.reject("checksum", env.ID)
		return
	}
	m, err := n.spec.Codec.Decode(env.Body)
	if err != nil {
		n.log.Warn("rejected an undecodable message", "error", err, "msg", env.ID, "src", env.Src)
		n.reject("undecodable", env.ID)
		return
	}
	n.m.Receive(env.Src, m)
}

func (n *node) handleClient(env wire.Envelope) {
	var req struct {
		wire.Head
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(env.Body, &req); err != nil {
		n.log.Warn("bad client request", "error", err, "src", env.Src)
		return
	}
	var value string
	_ = json.Unmarshal(req.Value, &value) // a value that is not a string is only in Body
	n.start("on a request before the harness's start")
	n.m.Request(nodes.Request{Client: env.Src, ID: req.MsgID, Op: req.Type, Value: value, Body: env.Body})
}

func (n *node) handleTimer(f firing) {
	t, ok := n.timers[f.name]
	if !ok || t.gen != f.gen {
		return // cancelled or restarted since
	}
	delete(n.timers, f.name)
	n.m.Timeout(f.name)
}

// Env.

func (n *node) Self() string               { return n.self }
func (n *node) Nodes() []string            { return n.all }
func (n *node) ElectionID(node string) int { return n.ids[node] }
func (n *node) Rand() *rand.Rand           { return n.rng }
func (n *node) Logf(f string, args ...any) { n.log.Info(fmt.Sprintf(f, args...)) }
func (n *node) Report(r nodes.Report) {
	n.sendReport(wire.ReportBody{Type: "report", What: r.What, Value: r.Value, Name: r.Name, Term: r.Term})
}
func (n *node) sendReport(r wire.ReportBody) {
	b, _ := json.Marshal(r)
	n.write(wire.Envelope{Src: n.self, Dest: wire.Harness, Body: b})
}

func (n *node) Send(to string, m nodes.Msg) {
	body, err := nodes.Encode(m)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", n.spec.Name, err)) // a message type that cannot be encoded is a bug
	}
	e := wire.Envelope{Src: n.self, Dest: to, Body: body}
	if n.checksums {
		e.Sum = wire.Sum(body)
	}
	n.write(e)
}

func (n *node) SetTimer(name string, d time.Duration) {
	if old, ok := n.timers[name]; ok {
		old.t.Stop()
	}
	n.gen++
	gen := n.gen
	real := time.Duration(float64(d) / n.rate)
	t := &timer{gen: gen}
	t.t = time.AfterFunc(real, func() { n.fired <- firing{name, gen} })
	n.timers[name] = t
}

func (n *node) CancelTimer(name string) {
	if t, ok := n.timers[name]; ok {
		t.t.Stop()
		delete(n.timers, name)
	}
}

func (n *node) Reply(r nodes.Request, value string) {
	b, _ := json.Marshal(wire.ReplyBody{Type: r.Op + "_ok", InReplyTo: r.ID, Value: value})
	n.write(wire.Envelope{Src: n.self, Dest: r.Client, Body: b})
}

func (n *node) ReplyWith(r nodes.Request, fields any) {
	b, err := wire.Reply(r.Op+"_ok", r.ID, fields)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", n.spec.Name, err)) // an answer that cannot be encoded is a bug
	}
	n.write(wire.Envelope{Src: n.self, Dest: r.Client, Body: b})
}

func (n *node) Fail(r nodes.Request, e nodes.Error) {
	code := e.Code
	b, _ := json.Marshal(wire.ReplyBody{Type: "error", InReplyTo: r.ID, Code: &code, Text: e.Text, Definite: e.Definite})
	n.write(wire.Envelope{Src: n.self, Dest: r.Client, Body: b})
}
