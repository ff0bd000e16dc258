package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The probe's modes.
const (
	// Pipelined keeps Window pings outstanding and measures round trips
	// per second.
	Pipelined = "pipelined"
	// OneAtATime sends a ping only once the previous one is answered (or
	// lost) and measures each round trip.
	OneAtATime = "one"
	// Steady sends pings at a fixed rate, whatever comes back, and
	// measures each round trip.
	Steady = "steady"
)

// probeConfig is what the probe is told on its command line. Both nodes
// get the same; the first node of init's node_ids pings, the second
// echoes.
type probeConfig struct {
	Mode   string
	Window int
	// Rate is pings per second (Steady).
	Rate float64
	// Warmup runs before the measured Time.
	Warmup, Time time.Duration
	// Lossy says messages may be lost: the pinger then reads with
	// deadlines, gives up on a ping after a timeout and resends its
	// greeting until answered.
	Lossy bool
	// Report is the named pipe the pinger writes its figures to.
	Report string
}

func (c probeConfig) args() []string {
	a := []string{"--mode", c.Mode, "--window", strconv.Itoa(c.Window),
		"--rate", strconv.FormatFloat(c.Rate, 'g', -1, 64),
		"--warmup", c.Warmup.String(), "--time", c.Time.String(), "--report", c.Report}
	if c.Lossy {
		a = append(a, "--lossy")
	}
	return a
}

func parseProbeConfig(args []string) (probeConfig, error) {
	var c probeConfig
	fs := flag.NewFlagSet("bench-probe", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.Mode, "mode", Pipelined, "")
	fs.IntVar(&c.Window, "window", 64, "")
	fs.Float64Var(&c.Rate, "rate", 0, "")
	fs.DurationVar(&c.Warmup, "warmup", 100*time.Millisecond, "")
	fs.DurationVar(&c.Time, "time", time.Second, "")
	fs.BoolVar(&c.Lossy, "lossy", false, "")
	fs.StringVar(&c.Report, "report", "", "")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case c.Mode != Pipelined && c.Mode != OneAtATime && c.Mode != Steady:
		return c, fmt.Errorf("--mode: unknown mode %q (known: %s, %s, %s)", c.Mode, Pipelined, OneAtATime, Steady)
	case c.Window < 1 || c.Window > maxWindow:
		return c, fmt.Errorf("--window: want 1 to %d, got %d", maxWindow, c.Window)
	case c.Mode == Steady && !(c.Rate > 0 && c.Rate <= 1e6):
		return c, fmt.Errorf("--rate: want a rate in (0, 1e6] pings per second, got %g", c.Rate)
	case c.Time <= 0 || c.Warmup < 0:
		return c, fmt.Errorf("--time must be positive and --warmup not negative")
	case c.Report == "":
		return c, fmt.Errorf("--report: missing")
	}
	if c.Mode == OneAtATime {
		c.Window = 1
	}
	return c, nil
}

// ProbeMain is the probe node program (the hidden command "coup
// bench-probe"): a node that speaks the node protocol on stdin and stdout,
// answers init, and then either pings its peer and measures the round
// trips, or echoes every ping. The pinger writes its Figures as one JSON
// line to the --report named pipe. Its first argument may instead name
// another helper: "rss" (RSSMain), one of the proxy part's TCP programs
// (tcp-echo, tcp-forward, tcp-proxy), or the startup part's floor
// (bare-start and the answer of each process it starts). It returns the exit code.
func ProbeMain(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "rss":
			return RSSMain(args[1:])
		case tcpEcho, tcpForward, tcpProxy:
			return tcpMain(args[0], args[1:])
		case bareStart:
			return bareStartMain(args[1:])
		case bareAnswer:
			return bareAnswerMain()
		}
	}
	cfg, err := parseProbeConfig(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-probe: %v\n", err)
		return 2
	}
	stdin := os.Stdin
	if cfg.Lossy {
		// Deadlines need the pipe in the runtime's poller; without loss the
		// probe reads with plain blocking reads, the cheapest there are.
		if stdin, err = pollableStdin(); err != nil {
			fmt.Fprintf(os.Stderr, "bench-probe: %v\n", err)
			return 1
		}
	}
	p := &probe{cfg: cfg, in: newLineReader(stdin), out: bufio.NewWriterSize(os.Stdout, 64<<10)}
	if err := p.run(); err != nil {
		fmt.Fprintf(os.Stderr, "bench-probe: %v\n", err)
		return 1
	}
	return 0
}

// pollableStdin returns stdin in non-blocking mode, so that reads on it
// can have deadlines.
func pollableStdin() (*os.File, error) {
	if err := syscall.SetNonblock(0, true); err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	return os.NewFile(0, "stdin"), nil
}

type probe struct {
	cfg        probeConfig
	in         *lineReader
	out        *bufio.Writer
	self, peer string
	pinger     bool
	// ping and echo are the start of every ping and echo line, up to the
	// number, written once.
	ping, echoHead string
}

// run does the init handshake, then pings or echoes.
func (p *probe) run() error {
	line, err := p.in.next(time.Time{}, nil)
	if err != nil {
		return fmt.Errorf("read init: %w", err)
	}
	var env struct {
		Src  string `json:"src"`
		Body struct {
			Type    string   `json:"type"`
			MsgID   int      `json:"msg_id"`
			NodeID  string   `json:"node_id"`
			NodeIDs []string `json:"node_ids"`
		} `json:"body"`
	}
	if err := json.Unmarshal(line, &env); err != nil || env.Body.Type != "init" {
		return fmt.Errorf("the first line is not an init message: %.200q", line)
	}
	ids := env.Body.NodeIDs
	if len(ids) != 2 || !slices.Contains(ids, env.Body.NodeID) {
		return fmt.Errorf("init: want two nodes, this one among them; got node_id %q, node_ids %q", env.Body.NodeID, ids)
	}
	p.self = env.Body.NodeID
	p.pinger = p.self == ids[0]
	p.peer = ids[0]
	if p.pinger {
		p.peer = ids[1]
	}
	p.ping = fmt.Sprintf(`{"src":%s,"dest":%s,"body":{"type":"ping","msg_id":`, jsonString(p.self), jsonString(p.peer))
	p.echoHead = fmt.Sprintf(`{"src":%s,"dest":%s,"body":{"type":"echo","in_reply_to":`, jsonString(p.self), jsonString(p.peer))
	fmt.Fprintf(p.out, `{"src":%s,"dest":%s,"body":{"type":"init_ok","in_reply_to":%d}}`+"\n", jsonString(p.self), jsonString(env.Src), env.Body.MsgID)
	p.hello("hello")
	if err := p.out.Flush(); err != nil {
		return err
	}
	if !p.pinger {
		return p.echo()
	}
	if err := p.sync(); err != nil {
		return err
	}
	if p.cfg.Mode == Steady {
		f, err := p.steady()
		if err != nil {
			return err
		}
		if err := writeReport(p.cfg.Report, f); err != nil {
			return err
		}
		select {} // its reader goes on reading until the process is ended
	}
	f, err := p.closedLoop()
	if err != nil {
		return err
	}
	if err := writeReport(p.cfg.Report, f); err != nil {
		return err
	}
	// Stay up, reading, until the harness or the relay ends the process.
	for {
		if _, err := p.in.next(time.Time{}, nil); err != nil {
			return nil
		}
	}
}

// hello greets the peer (type "hello" or "hello_ok").
func (p *probe) hello(typ string) {
	fmt.Fprintf(p.out, `{"src":%s,"dest":%s,"body":{"type":%q}}`+"\n", jsonString(p.self), jsonString(p.peer), typ)
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// sync waits for a first line from the peer, its greeting or its answer
// to ours, so that no ping is sent before the peer can take it. The
// harness routes a node's lines only once it is up, and a message to a
// node not yet up is lost; since each node greets the other once up, the
// later greeting always arrives. With loss, the greeting is resent.
func (p *probe) sync() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var wait time.Time
		if p.cfg.Lossy {
			wait = time.Now().Add(20 * time.Millisecond)
		}
		_, err := p.in.next(wait, nil)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, os.ErrDeadlineExceeded):
			return fmt.Errorf("wait for the peer: %w", err)
		case time.Now().After(deadline):
			return fmt.Errorf("no word from %s within 10s", p.peer)
		}
		p.hello("hello")
		if err := p.out.Flush(); err != nil {
			return err
		}
	}
}

// echo answers every ping with an echo, and a greeting with hello_ok. It
// flushes only before it would block, so that a burst of pings is
// answered with one write.
func (p *probe) echo() error {
	flush := func() { _ = p.out.Flush() }
	for {
		line, err := p.in.next(time.Time{}, flush)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if id, ok := intField(line, `"msg_id":`); ok {
			p.out.WriteString(p.echoHead)
			var num [20]byte
			p.out.Write(strconv.AppendInt(num[:0], id, 10))
			p.out.WriteString("}}\n")
		} else if bytes.Contains(line, []byte(`"type":"hello"`)) {
			p.hello("hello_ok")
		}
	}
}

// writePing buffers ping seq.
func (p *probe) writePing(w *bufio.Writer, seq int64) {
	w.WriteString(p.ping)
	var num [20]byte
	w.Write(strconv.AppendInt(num[:0], seq, 10))
	w.WriteString("}}\n")
}

// maxWindow bounds the pipelined window; ring is the size of the pinger's
// ring of pings, far more than a window, so that a ping is given up long
// before its slot comes round again.
const (
	maxWindow = 1 << 12
	ring      = 1 << 16
)

// The states of a ping in the pinger's ring.
const (
	inFlight byte = iota // sent, not yet answered
	answered             // its echo came
	givenUp              // unanswered for a retransmission timeout
)

// minSamples is the fewest round trips a closed loop's measured time
// holds: on a loaded machine a single round trip can outlast a short
// measured time, and a median of nothing is no figure, so the measured
// time goes on past its end until it holds that many, for at most
// maxStretch more (well within probeSlack). Figures.Seconds is the time
// measured.
const (
	minSamples = 5
	maxStretch = 5 * time.Second
)

// measuring reports whether a closed loop whose measured time ends at to
// (ns since its start) and holds samples round trips goes on at now.
func measuring(now, to int64, samples int) bool {
	return now < to || (samples < minSamples && now < to+int64(maxStretch))
}

// closedLoop keeps cfg.Window pings outstanding (one, one at a time):
// each answer lets the next ping go. With loss, a ping unanswered for a
// retransmission timeout (as TCP computes it from the round trips seen,
// backing off while pings keep timing out) is given up and its place in
// the window taken by a new one; an echo that comes after all is counted
// late, not lost.
func (p *probe) closedLoop() (Figures, error) {
	var (
		sentAt = make([]int64, ring) // when each ping went, ns since t0
		state  = make([]byte, ring)
		next   int64 // the next ping's sequence number
		head   int64 // the oldest ping neither answered nor given up
		out    int   // pings in flight
		f      = Figures{Mode: p.cfg.Mode}
		rtts   = make([]int64, 0, 1<<16)
		est    rto
	)
	t0 := time.Now()
	from, to := int64(p.cfg.Warmup), int64(p.cfg.Warmup+p.cfg.Time)
	flush := func() { _ = p.out.Flush() }
	end := to // when the measured time ended: to, or later (measuring)
	for {
		now := int64(time.Since(t0))
		if !measuring(now, to, len(rtts)) {
			end = max(now, to)
			break
		}
		for out < p.cfg.Window {
			i := next % ring
			sentAt[i], state[i] = int64(time.Since(t0)), inFlight
			p.writePing(p.out, next)
			next++
			out++
			if now >= from {
				f.Sent++
			}
		}
		var deadline time.Time
		if p.cfg.Lossy {
			deadline = t0.Add(time.Duration(min(sentAt[head%ring]+est.timeout(), to)))
		}
		line, err := p.in.next(deadline, flush)
		now = int64(time.Since(t0))
		switch {
		case err == nil:
			seq, ok := intField(line, `"in_reply_to":`)
			if !ok || seq >= next || seq <= next-ring {
				continue // not an echo of a ping the ring still knows
			}
			i := seq % ring
			switch state[i] {
			case answered:
				f.Dup++
				continue
			case givenUp:
				f.Late++
				f.Lost--
				state[i] = answered
				continue
			}
			state[i] = answered
			out--
			rtt := now - sentAt[i]
			est.observe(rtt)
			if now >= from && measuring(now, to, len(rtts)) {
				f.Completed++
				rtts = append(rtts, rtt)
			}
		case errors.Is(err, os.ErrDeadlineExceeded):
		default:
			return f, fmt.Errorf("read: %w", err)
		}
		// Move past answered pings; with loss, give up on overdue ones.
		timedOut := false
		for head < next {
			i := head % ring
			if state[i] == inFlight {
				if !p.cfg.Lossy || now-sentAt[i] < est.timeout() {
					break
				}
				state[i] = givenUp
				out--
				f.Lost++
				timedOut = true
			}
			head++
		}
		if timedOut {
			est.backOff()
		}
	}
	f.Pings = next
	f.Seconds = time.Duration(end - from).Seconds()
	f.setLatencies(rtts)
	return f, nil
}

// steady sends pings at cfg.Rate from one goroutine, whatever comes back,
// while another reads the echoes: the send times cannot wait for answers.
func (p *probe) steady() (Figures, error) {
	var (
		mu      sync.Mutex
		sentAt  = make([]int64, ring)
		sentSeq = make([]int64, ring)
		state   = make([]byte, ring)
		rtts    = make([]int64, 0, 1<<16)
		f       = Figures{Mode: p.cfg.Mode}
		readErr error
	)
	t0 := time.Now()
	from, to := int64(p.cfg.Warmup), int64(p.cfg.Warmup+p.cfg.Time)
	go func() {
		for {
			line, err := p.in.next(time.Time{}, nil)
			now := int64(time.Since(t0))
			if err != nil {
				mu.Lock()
				readErr = err
				mu.Unlock()
				return
			}
			seq, ok := intField(line, `"in_reply_to":`)
			if !ok {
				continue
			}
			i := seq % ring
			mu.Lock()
			switch {
			case sentSeq[i] != seq:
			case state[i] == answered:
				f.Dup++
			default:
				state[i] = answered
				// Counted by when the ping went, as Sent is.
				if sentAt[i] >= from && sentAt[i] < to {
					f.Completed++
					rtts = append(rtts, now-sentAt[i])
				}
			}
			mu.Unlock()
		}
	}()
	interval := time.Duration(float64(time.Second) / p.cfg.Rate)
	var seq int64
	for {
		now := time.Since(t0)
		if now >= time.Duration(to) {
			break
		}
		// Send every ping whose time has come: a late wake-up sends a
		// short burst, so that the rate holds on average.
		for due := time.Duration(seq) * interval; due <= now; due = time.Duration(seq) * interval {
			i := seq % ring
			mu.Lock()
			sent := int64(time.Since(t0))
			sentAt[i], sentSeq[i], state[i] = sent, seq, inFlight
			if sent >= from && sent < to {
				f.Sent++
			}
			mu.Unlock()
			p.writePing(p.out, seq)
			seq++
		}
		if err := p.out.Flush(); err != nil {
			return f, err
		}
		time.Sleep(time.Duration(seq)*interval - time.Since(t0))
	}
	// Give the last pings time to come back before counting them lost.
	time.Sleep(steadyGrace)
	mu.Lock()
	defer mu.Unlock()
	if readErr != nil {
		return f, fmt.Errorf("read: %w", readErr)
	}
	f.Lost = max(f.Sent-f.Completed, 0)
	f.Pings = seq
	f.Seconds = p.cfg.Time.Seconds()
	f.setLatencies(rtts)
	return f, nil
}

// steadyGrace is how long the steady pinger waits for the last echoes.
const steadyGrace = 50 * time.Millisecond

// rto is a retransmission timeout estimator (RFC 6298's): the smoothed
// round trip plus four times its variation, at least minRTO, doubled for
// each pass that gave pings up since the last answer (at most maxBackoff
// times), so that pings given up too early cannot pile up in flight.
type rto struct {
	srtt, rttvar int64
	backoff      int
	seen         bool
}

const (
	minRTO     = int64(10 * time.Millisecond)
	maxBackoff = 6
)

func (r *rto) observe(rtt int64) {
	r.backoff = 0
	if !r.seen {
		r.srtt, r.rttvar, r.seen = rtt, rtt/2, true
		return
	}
	d := r.srtt - rtt
	if d < 0 {
		d = -d
	}
	r.rttvar += (d - r.rttvar) / 4
	r.srtt += (rtt - r.srtt) / 8
}

func (r *rto) backOff() { r.backoff = min(r.backoff+1, maxBackoff) }

func (r *rto) timeout() int64 {
	t := int64(100 * time.Millisecond)
	if r.seen {
		t = max(minRTO, r.srtt+4*r.rttvar)
	}
	return t << r.backoff
}

// intField finds key (such as `"msg_id":`) in a line and parses the
// non-negative integer after it.
func intField(line []byte, key string) (int64, bool) {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return 0, false
	}
	var n int64
	digits := 0
	for _, c := range line[i+len(key):] {
		if c < '0' || c > '9' || digits == 18 {
			break
		}
		n = n*10 + int64(c-'0')
		digits++
	}
	return n, digits > 0
}

// writeReport writes the figures as one JSON line to the report pipe.
func writeReport(path string, f Figures) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open the report pipe: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		w.Close()
		return fmt.Errorf("write the report: %w", err)
	}
	return w.Close()
}
