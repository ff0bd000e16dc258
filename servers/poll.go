package servers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// maxAnswer bounds what one poll reads: a server's answer is under
// suspicion like every byte it writes.
const maxAnswer = 1 << 20

// startPolls starts one polling loop per node, when the scenario polls.
func (r *run) startPolls() {
	if len(r.sv.Poll) == 0 {
		return
	}
	for _, s := range r.servers {
		// A poll's addresses do not change during a run: rendered once,
		// here, and not while a replace changes the node's State.
		rd, err := r.sv.Render(s.data)
		if err != nil {
			r.logf("%s: poll: %v", s.id, err)
			continue
		}
		r.polls.Add(1)
		go func() {
			defer r.polls.Done()
			r.pollLoop(s, rd.Polls)
		}()
	}
}

// pollLoop asks a node every PollEvery what it believes, until the run
// stops. A round is skipped for a node that is down; a round whose
// questions all fail (a paused or dying server) says nothing. Each
// question is counted, per node (history.CountPolls): answered,
// unanswered within its timeout, or failed before it; each round skipped
// too.
func (r *run) pollLoop(s *server, polls []scenario.RenderedPoll) {
	t := time.NewTicker(r.sv.PollEvery.D)
	defer t.Stop()
	readers := make([]pollReader, len(polls))
	for i := range polls {
		if newReader, ok := pollReaders[r.sv.Poll[i].Read]; ok {
			readers[i] = newReader(r, s.id)
		}
	}
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		up, gen, pauses := r.obs.asking(s.id)
		if !up {
			r.stats.add(pollCount(s.id, history.PollSkipped))
			continue
		}
		r.obs.observe(s.id, gen, pauses, r.pollRound(s.id, polls, readers))
	}
}

// pollRound asks a node one round of its polls and reads the answers
// into one reading, with each question and its answer (or its error) as
// evidence. A round none of whose questions was answered is unknown.
func (r *run) pollRound(node string, polls []scenario.RenderedPoll, readers []pollReader) *reading {
	rd := &reading{source: pollSource(r.sv)}
	answered := false
	var why []string
	note := func(from string, answer []byte, err error) {
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", from, err))
			answer = []byte("no answer: " + err.Error())
		}
		rd.evidence = append(rd.evidence, evidence(from, 0, answer))
	}
	for i, p := range polls {
		timeout := r.sv.Poll[i].Timeout.D
		if readers[i] != nil {
			err := readers[i](p.HTTP, func(url string) ([]byte, error) {
				answer, err := r.ask(node, scenario.RenderedPoll{HTTP: url}, "", timeout)
				note("GET "+url, answer, err)
				return answer, err
			}, rd)
			r.stats.add(pollCount(node, pollOutcome(err)))
			answered = answered || err == nil
			continue
		}
		answer, err := r.ask(node, p, r.sv.Poll[i].Send, timeout)
		note(p.Question(), answer, err)
		r.stats.add(pollCount(node, pollOutcome(err)))
		if err != nil {
			continue
		}
		answered = true
		for j := range r.sv.Poll[i].Match {
			readPattern(r.sv, &r.sv.Poll[i].Match[j], answer, rd)
		}
	}
	if !answered {
		rd.unknown, rd.why = true, strings.Join(why, "; ")
	}
	return rd
}

// pollReaders make the built-in readers a poll may name (Poll.Read), by
// name, one for each server's polling loop: a reader asks its own
// questions (HTTP GETs, from the poll's URL) through ask, within the
// poll's timeout each, and fills the round's reading, for an answer that
// patterns cannot read alone (natsobserve.go). Its questions count as
// the poll's one: unanswered when one timed out, failed when one failed.
var pollReaders = map[string]func(r *run, node string) pollReader{}

// pollReader is one server's built-in reader: url is the poll's.
type pollReader func(url string, ask func(url string) ([]byte, error), rd *reading) error

// pollOutcome is how a question ended, by its error.
func pollOutcome(err error) string {
	switch {
	case err == nil:
		return history.PollAnswered
	case errors.Is(err, errPollTimeout):
		return history.PollUnanswered
	}
	return history.PollFailed
}

// readPattern reads an answer through one pattern into rd.
func readPattern(sv *scenario.Server, p *scenario.Pattern, answer []byte, rd *reading) {
	m := p.Regexp().FindSubmatch(answer)
	if m == nil {
		return
	}
	if p.Role != "" {
		rd.role = p.Role
	}
	rd.inheritTerm = rd.inheritTerm || p.InheritTerm
	rd.inheritLeader = rd.inheritLeader || p.InheritLeader
	for j, name := range p.Regexp().SubexpNames() {
		if j > 0 && name != "" && m[j] != nil {
			rd.set(sv, name, string(m[j]))
		}
	}
}

// pollCount is the counter of a node's polls that ended so.
func pollCount(node, how string) string {
	return history.CountPolls + "." + node + "." + how
}

// errPollTimeout is a question that had no answer within its timeout.
var errPollTimeout = errors.New("no answer within the poll's timeout")

// ask asks one poll's question from the node's host (inside its
// namespace on coup's network): an error wraps errPollTimeout when its
// timeout passed first.
func (r *run) ask(node string, p scenario.RenderedPoll, send string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if p.File != "" {
		p.File = r.pastLayer(node, p.File)
	}
	var answer []byte
	var err error
	if r.net == nil {
		answer, err = askOnce(ctx, p, send, nil, nil)
	} else {
		answer, err = askOnce(ctx, p, send, r.dialer(node), r.enter(node))
	}
	// A connection's deadline is the context's, and may pass a moment
	// before the context says so.
	if err != nil && (ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded)) {
		return nil, fmt.Errorf("%w (%s): %v", errPollTimeout, timeout, err)
	}
	return answer, err
}

// pastLayer is where coup itself reads the file at p of a node's data
// folder: in its storage layer's backing folder, not through the mount.
// coup serves the mount from its own process, and a read of its own
// through it waits on the layer: a poll of ZooKeeper's currentEpoch, as
// a power failure unmounted the layer, waited in the kernel for the
// layer's answer inside the epoll_ctl with which Go's runtime registers
// every file it opens, that one epoll's lock held, so that every file and
// socket coup opened afterwards waited behind it and the run stopped at
// the power failure. The backing file holds what the mount shows.
func (r *run) pastLayer(node, p string) string {
	s := r.byID[node]
	if s == nil || s.disk == nil {
		return p
	}
	rel, err := filepath.Rel(s.disk.Mountpoint(), p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.Join(s.disk.Backing(), rel)
}

// askOnce asks one poll's question within ctx, dialling with dial and
// starting a command through enter (nil: as coup itself does).
func askOnce(ctx context.Context, p scenario.RenderedPoll, send string, dial dialFunc, enter func(func() error) error) ([]byte, error) {
	client := http.DefaultClient
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	} else {
		client = &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
	}
	if enter == nil {
		enter = func(f func() error) error { return f() }
	}
	switch {
	case p.TCP != "":
		c, err := dial(ctx, "tcp", p.TCP)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		deadline, _ := ctx.Deadline()
		c.SetDeadline(deadline)
		if send != "" {
			if _, err := io.WriteString(c, send); err != nil {
				return nil, err
			}
		}
		return io.ReadAll(io.LimitReader(c, maxAnswer))
	case p.HTTP != "":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.HTTP, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("%s: %s", p.HTTP, resp.Status)
		}
		return io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	case p.File != "":
		f, err := os.Open(p.File)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(io.LimitReader(f, maxAnswer))
	default:
		cmd := exec.CommandContext(ctx, p.Command[0], p.Command[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 100 * time.Millisecond
		var out bytes.Buffer
		cmd.Stdout = &limited{w: &out, n: maxAnswer}
		err := enter(cmd.Start) // on the host, in its namespace
		if err == nil {
			err = cmd.Wait()
		}
		return out.Bytes(), err
	}
}

// limited writes at most n bytes to w and drops the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(b []byte) (int, error) {
	k := len(b)
	if len(b) > l.n {
		b = b[:l.n]
	}
	l.n -= len(b)
	_, err := l.w.Write(b)
	return k, err
}
