package servers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/scenario"
)

// A prober asks one process's ready probe (scenario.Probe) whether it
// is ready: a port that accepts a connection, a command that exits 0,
// an HTTP GET that answers 2xx, the answer matching the probe's match
// when it has one. It keeps its last answer, in coup's words, for the
// error of a start that never got a ready one.
type prober struct {
	probe scenario.RenderedProbe
	dir   string
	env   []string
	// dial is how the probe dials (a port, an HTTP GET), and enter how
	// it starts its command: from inside the host's network namespace on
	// coup's network (the host's dial and enter); nil for coup's own.
	dial  dialFunc
	enter func(func() error) error
	// last is the last answer ("connection refused", "HTTP 503: …").
	last string
	// timeout bounds the question under way; cut is set when the
	// start's deadline made it shorter than readyProbeTimeout.
	timeout time.Duration
	cut     bool
}

// readyProbeTimeout bounds one question of a probe.
const readyProbeTimeout = 2 * time.Second

// try asks once, within the deadline, and reports whether the answer
// says ready.
func (p *prober) try(ctx context.Context, deadline time.Time) bool {
	p.timeout = min(readyProbeTimeout, max(time.Until(deadline), 50*time.Millisecond))
	p.cut = p.timeout < readyProbeTimeout
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	switch {
	case p.probe.Addr != "":
		dial := p.dial
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		c, err := dial(ctx, "tcp", p.probe.Addr)
		if err != nil {
			p.last = errText(err)
			return false
		}
		c.Close()
		return true
	case p.probe.HTTP != "":
		return p.get(ctx)
	case len(p.probe.Command) > 0:
		return p.run(ctx)
	}
	return true
}

func (p *prober) get(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.probe.HTTP, nil)
	if err != nil {
		p.last = err.Error()
		return false
	}
	client := http.DefaultClient
	if p.dial != nil {
		client = &http.Client{Transport: &http.Transport{DialContext: p.dial, DisableKeepAlives: true}}
	}
	resp, err := client.Do(req)
	if err != nil {
		if !(ctx.Err() == context.DeadlineExceeded && p.cut && p.last != "") {
			p.last = errText(err) // else the last full answer stands
		}
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		p.last = fmt.Sprintf("HTTP %s: %s", resp.Status, console.Cut(bytes.TrimSpace(body), 200))
		return false
	}
	if re := p.probe.Match; re != nil && !re.Match(body) {
		p.last = fmt.Sprintf("HTTP %s, a body that does not match %q: %s", resp.Status, re.String(), console.Cut(bytes.TrimSpace(body), 200))
		return false
	}
	return true
}

func (p *prober) run(ctx context.Context) bool {
	argv := p.probe.Command
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), p.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := p.start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	said := console.Cut(bytes.TrimSpace(out.Bytes()), 200)
	switch {
	case ctx.Err() == context.DeadlineExceeded && p.last != "" && p.cut:
		return false // cut short by the start's deadline: the last full answer stands
	case ctx.Err() == context.DeadlineExceeded:
		p.last = fmt.Sprintf("no end within %s: %s", p.timeout, said)
		return false
	case err != nil:
		p.last = fmt.Sprintf("%v: %s", err, said)
		return false
	case p.probe.Match != nil && !p.probe.Match.Match(out.Bytes()):
		p.last = fmt.Sprintf("exit 0, an output that does not match %q: %s", p.probe.Match.String(), said)
		return false
	}
	return true
}

// start starts the probe's command, inside the host's network namespace
// when the probe has one (enter).
func (p *prober) start(cmd *exec.Cmd) error {
	if p.enter == nil {
		return cmd.Start()
	}
	return p.enter(cmd.Start)
}

// lastSaid is the last answer, for a message: "; its last answer: …".
func (p *prober) lastSaid() string {
	if p.last == "" {
		return ""
	}
	return "; its last answer: " + p.last
}

// errText is an error's last, plainest part: "connection refused".
func errText(err error) string {
	var op *net.OpError
	for e := err; e != nil; {
		if o, ok := e.(*net.OpError); ok {
			op = o
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	if op != nil && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}
