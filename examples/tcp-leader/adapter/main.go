// Command adapter lets coup's lin-kv workload drive the key-value store of
// the tcp-leader example, and so judge it for linearizability. coup starts
// one adapter per workload client (c1, c2, ...), and speaks to it on stdin
// and stdout in Maelstrom's envelope, one JSON message per line; the
// adapter carries each request to the store in the store's line protocol
// (GET k, PUT k v, CAS k from to; see the package comment of tcp-leader).
// Standard library only. It writes its log, and nothing else, to stderr.
//
// The first line is the init, which names the client and gives, for each
// member, the address of each named port of the scenario (direct, not
// through coup's proxies):
//
//	{"src":"coup","dest":"c1","body":{"type":"init","msg_id":0,"node_id":"c1",
//	  "node_ids":["n1","n2","n3"],"addrs":{"n1":{"client":"127.0.1.5:40001",...},...}}}
//
// answered {"src":"c1","dest":"coup","body":{"type":"init_ok","in_reply_to":0}}.
// Then come requests, each addressed to the member the client is bound
// to, with lin-kv's bodies:
//
//	{"type":"read","msg_id":7,"key":3}                → read_ok, "value"
//	{"type":"write","msg_id":8,"key":3,"value":4}     → write_ok
//	{"type":"cas","msg_id":9,"key":3,"from":4,"to":1} → cas_ok
//
// each answered by a line from that member to the client, with
// "in_reply_to", or by an error with Maelstrom's code:
//
//   - 20: the key does not exist (NOTFOUND);
//   - 22: a cas's compare failed (MISMATCH), "expected 4, found 2";
//   - 11: temporarily unavailable, when the request was surely not
//     carried out: the connection was refused, or could not be made in
//     time, or the request could not be written whole (the store carries
//     out only a line it has read to its newline), or each member asked
//     answered NOTLEADER and the last named no leader, or one past the
//     redirects allowed, or one with no address; also a request before
//     the init, or past 1024 in flight;
//   - 12: a malformed request, or one the store refused (ERR);
//   - 10: a request of a type it does not know;
//   - 0 (timeout) and 13 (crash), when the request may have been carried
//     out: there was no answer within the deadline, or the connection
//     broke after the request was written, or the answer made no sense.
//
// coup records the first five as failed and the last two as unknown, so
// the line between them is drawn where the request may have reached the
// store.
//
// Each request is carried on a connection of its own, dialled to the
// member's port named by --port, with one deadline (--timeout) for the
// whole request. A member that answers NOTLEADER n3 is not the leader, and
// names the one it follows: the request goes to n3 instead, up to two
// redirects. Requests are carried at once, each on its own goroutine, and
// answered in the order they finish.
//
// Every line on stdin is taken as possibly hostile: one that is not JSON,
// or has no integer msg_id, is logged and skipped, and so is a line
// longer than 1 MiB, unparsed. When stdin ends, the adapter answers the requests in
// flight, each within its deadline, and exits 0. Usage (a scenario names
// the example's run.sh with "adapter" first, which builds the adapter on
// first use: run.sh adapter --port client):
//
//	adapter [--port client] [--timeout 5s]
//
// It exits 2 on bad flags, and 1 when stdin cannot be read.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	maxLine     = 1 << 20 // the longest line read on stdin, its newline included
	maxAnswer   = 4096    // the longest answer line read from the store
	maxHops     = 2       // redirects followed for one request
	maxInFlight = 1024    // requests carried at once; past that, refused
)

// Maelstrom's error codes.
const (
	codeTimeout     = 0
	codeUnsupported = 10
	codeUnavailable = 11
	codeMalformed   = 12
	codeCrash       = 13
	codeNoKey       = 20
	codePrecondFail = 22
)

type options struct {
	port    string
	timeout time.Duration
}

func main() {
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "adapter: %v\n", err)
		os.Exit(2)
	}
	if err := serve(os.Stdin, os.Stdout, os.Stderr, opts); err != nil {
		fmt.Fprintf(os.Stderr, "adapter: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("adapter", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the error is printed once, by main
	fs.StringVar(&o.port, "port", "client", "the name of the members' port that clients dial")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Second, "deadline of one request, redirects included")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.port == "":
		return o, errors.New("--port is empty")
	case o.timeout <= 0:
		return o, fmt.Errorf("--timeout %v is not positive", o.timeout)
	}
	return o, nil
}

// envelope is one message on stdin.
type envelope struct {
	Src  string          `json:"src"`
	Dest string          `json:"dest"`
	Body json.RawMessage `json:"body"`
}

// request is the body of a message on stdin, but its msg_id: the init's
// fields and the lin-kv requests'. A field left out stays nil.
type request struct {
	Type    string                       `json:"type"`
	NodeID  string                       `json:"node_id"`
	NodeIDs []string                     `json:"node_ids"`
	Addrs   map[string]map[string]string `json:"addrs"`
	Key     *int64                       `json:"key"`
	Value   *int64                       `json:"value"`
	From    *int64                       `json:"from"`
	To      *int64                       `json:"to"`
}

// reply is the body of a message on stdout.
type reply struct {
	Type      string `json:"type"`
	InReplyTo int64  `json:"in_reply_to"`
	Value     *int64 `json:"value,omitempty"`
	Code      *int   `json:"code,omitempty"`
	Text      string `json:"text,omitempty"`
}

type outEnvelope struct {
	Src  string `json:"src"`
	Dest string `json:"dest"`
	Body reply  `json:"body"`
}

func failed(code int, format string, a ...any) reply {
	return reply{Type: "error", Code: &code, Text: fmt.Sprintf(format, a...)}
}

type adapter struct {
	opts  options
	log   *log.Logger
	slots chan struct{}
	wg    sync.WaitGroup

	outMu  sync.Mutex
	out    io.Writer
	outErr error // the first failed write, logged once

	mu    sync.Mutex
	addrs map[string]map[string]string // nil until the init
}

// serve answers the messages read from in on out, logging to logw, until
// in ends; then it waits for the requests in flight to be answered.
func serve(in io.Reader, out io.Writer, logw io.Writer, opts options) error {
	a := &adapter{
		opts:  opts,
		log:   log.New(logw, "", log.Ltime|log.Lmicroseconds),
		slots: make(chan struct{}, maxInFlight),
		out:   out,
	}
	defer a.wg.Wait()
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		switch {
		case tooLong:
			a.log.Printf("skipped a line longer than %d bytes", maxLine)
		case len(strings.TrimSpace(string(line))) > 0:
			a.handle(line)
		}
		if errors.Is(err, io.EOF) {
			a.log.Printf("stdin ended")
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
	}
}

// readLine reads one line, up to maxLine bytes with its newline; of a
// longer one it reads the rest and drops it all, answering tooLong.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

// handle answers one message: the init at once, a request on its own
// goroutine.
func (a *adapter) handle(line []byte) {
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		a.log.Printf("skipped a line that is not a message (%v): %s", err, excerpt(line))
		return
	}
	id, ok := msgID(env.Body)
	if !ok {
		a.log.Printf("skipped a message with no msg_id: %s", excerpt(line))
		return
	}
	var req request
	if err := json.Unmarshal(env.Body, &req); err != nil {
		a.answer(env, id, failed(codeMalformed, "malformed %s request: %v", req.Type, err))
		return
	}
	switch req.Type {
	case "init":
		if req.Addrs == nil {
			req.Addrs = map[string]map[string]string{}
		}
		a.mu.Lock()
		a.addrs = req.Addrs
		a.mu.Unlock()
		a.log.Printf("init: %q, members %q, dialling their %q ports", req.NodeID, req.NodeIDs, a.opts.port)
		for _, m := range req.NodeIDs {
			if req.Addrs[m][a.opts.port] == "" {
				a.log.Printf("init: no %q address for %q", a.opts.port, m)
			}
		}
		a.answer(env, id, reply{Type: "init_ok"})
		return
	case "read", "write", "cas":
	default:
		a.answer(env, id, failed(codeUnsupported, "%q requests are not supported", req.Type))
		return
	}

	op, err := lineOf(req)
	if err != nil {
		a.answer(env, id, failed(codeMalformed, "malformed %s request: %v", req.Type, err))
		return
	}
	a.mu.Lock()
	ready := a.addrs != nil
	a.mu.Unlock()
	if !ready {
		a.answer(env, id, failed(codeUnavailable, "no init yet: no member's address is known"))
		return
	}
	select {
	case a.slots <- struct{}{}:
	default:
		a.answer(env, id, failed(codeUnavailable, "%d requests in flight already", maxInFlight))
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer func() { <-a.slots }()
		ctx, cancel := context.WithTimeout(context.Background(), a.opts.timeout)
		defer cancel()
		r := a.do(ctx, env.Dest, req.Type, op, req.From)
		if r.Type == "error" {
			a.log.Printf("%s at %s: error %d: %s", op, env.Dest, *r.Code, r.Text)
		}
		a.answer(env, id, r)
	}()
}

// msgID reads a body's msg_id, which must be an integer.
func msgID(body json.RawMessage) (int64, bool) {
	var head struct {
		MsgID json.RawMessage `json:"msg_id"`
	}
	var id int64
	if json.Unmarshal(body, &head) != nil || len(head.MsgID) == 0 || string(head.MsgID) == "null" ||
		json.Unmarshal(head.MsgID, &id) != nil {
		return 0, false
	}
	return id, true
}

// lineOf is the store's request line for a lin-kv request.
func lineOf(req request) (string, error) {
	need := func(name string, v *int64) error {
		if v == nil {
			return fmt.Errorf("no %s", name)
		}
		return nil
	}
	if err := need("key", req.Key); err != nil {
		return "", err
	}
	switch req.Type {
	case "read":
		return fmt.Sprintf("GET %d", *req.Key), nil
	case "write":
		if err := need("value", req.Value); err != nil {
			return "", err
		}
		return fmt.Sprintf("PUT %d %d", *req.Key, *req.Value), nil
	default: // cas
		if err := errors.Join(need("from", req.From), need("to", req.To)); err != nil {
			return "", err
		}
		return fmt.Sprintf("CAS %d %d %d", *req.Key, *req.From, *req.To), nil
	}
}

// answer writes one reply, from the member the request was sent to, to
// the client that sent it, as one line.
func (a *adapter) answer(req envelope, id int64, r reply) {
	r.InReplyTo = id
	b, err := json.Marshal(outEnvelope{Src: req.Dest, Dest: req.Src, Body: r})
	if err != nil { // cannot happen: every field is a string or a number
		a.log.Printf("cannot encode a reply: %v", err)
		return
	}
	a.outMu.Lock()
	defer a.outMu.Unlock()
	if _, err := a.out.Write(append(b, '\n')); err != nil && a.outErr == nil {
		a.outErr = err
		a.log.Printf("cannot write to stdout: %v", err)
	}
}

// do carries one request to member, following its redirects, and judges
// the answer. from is a cas's expected value.
func (a *adapter) do(ctx context.Context, member, typ, op string, from *int64) reply {
	at := member
	for hop := 0; ; hop++ {
		a.mu.Lock()
		addr := a.addrs[at][a.opts.port]
		a.mu.Unlock()
		if addr == "" {
			return failed(codeUnavailable, "no %q address for %q", a.opts.port, at)
		}
		ans, err := exchange(ctx, addr, op)
		var nf *notSent
		switch {
		case errors.As(err, &nf):
			return failed(codeUnavailable, "%s at %s: %v", at, addr, err)
		case isTimeout(err):
			return failed(codeTimeout, "%s at %s: no answer in time: %v", at, addr, err)
		case err != nil:
			return failed(codeCrash, "%s at %s: %v", at, addr, err)
		}

		word, rest, _ := strings.Cut(ans, " ")
		switch word {
		case "NOTLEADER":
			switch {
			case rest == "":
				return failed(codeUnavailable, "%s is not the leader, and knows none", at)
			case hop == maxHops:
				return failed(codeUnavailable, "%s is not the leader, and names %s, past %d redirects", at, rest, maxHops)
			}
			a.log.Printf("%s at %s: %s is not the leader, and names %q: asking it", op, member, at, rest)
			at = rest
			continue
		case "ERR":
			return failed(codeMalformed, "%s refused %q: %s", at, op, ans)
		}
		return judge(typ, ans, from, at)
	}
}

// judge reads the store's answer to a request that it served.
func judge(typ, ans string, from *int64, at string) reply {
	word, rest, _ := strings.Cut(ans, " ")
	switch {
	case typ == "read" && word == "OK":
		if v, err := strconv.ParseInt(rest, 10, 64); err == nil {
			return reply{Type: "read_ok", Value: &v}
		}
	case typ == "write" && ans == "OK":
		return reply{Type: "write_ok"}
	case typ == "cas" && ans == "OK":
		return reply{Type: "cas_ok"}
	case typ != "write" && ans == "NOTFOUND":
		return failed(codeNoKey, "key does not exist")
	case typ == "cas" && word == "MISMATCH":
		if v, err := strconv.ParseInt(rest, 10, 64); err == nil {
			return failed(codePrecondFail, "expected %d, found %d", *from, v)
		}
	}
	// It answered, but not as the store does: whatever it did is unknown.
	return failed(codeCrash, "%s answered %s", at, excerpt([]byte(ans)))
}

// notSent is an error after which the request surely did not reach the
// store whole.
type notSent struct{ err error }

func (e *notSent) Error() string { return e.err.Error() }
func (e *notSent) Unwrap() error { return e.err }

// exchange sends one request line on a connection of its own to addr,
// and reads the answer line, within ctx's deadline. Its error is a
// *notSent when the request did not go out whole.
func exchange(ctx context.Context, addr, op string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", &notSent{err}
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	line := op + "\n"
	if n, err := io.WriteString(c, line); err != nil {
		if n < len(line) {
			// Its newline did not go out: the store drops a line that
			// the connection's end cuts short.
			return "", &notSent{fmt.Errorf("request not written whole: %w", err)}
		}
		return "", err
	}
	r := bufio.NewReaderSize(c, maxAnswer)
	ans, err := r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return "", fmt.Errorf("answer longer than %d bytes", maxAnswer)
	case errors.Is(err, io.EOF):
		return "", errors.New("connection closed with no answer")
	case err != nil:
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(ans), "\n"), "\r"), nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &ne) && ne.Timeout()
}

// excerpt shows a hostile line in a log line or an error text: its first
// 200 bytes, quoted.
func excerpt(b []byte) string {
	if len(b) > 200 {
		return strconv.Quote(string(b[:200])) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return strconv.Quote(string(b))
}
