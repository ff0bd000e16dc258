package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/coupharness/coup/internal/proc"
)

// The paths of the proxy part, in the order each round runs them.
const (
	Direct    = iota // the client dials the echo server
	Forwarder        // through the plain forwarder process
	Proxied          // through coup's fault proxy process, no fault in force
	tcpPaths
)

var tcpPathNames = [tcpPaths]string{"direct", "forwarder", "coup proxy"}

// ProxyCase is one TCP probe shape, run on every path of the proxy part
// for every round.
type ProxyCase struct {
	// Title says what the probe does.
	Title string
	// Mode is Pipelined or OneAtATime; Window the messages outstanding.
	Mode   string
	Window int
	// Runs are the figures of each round, by path.
	Runs [tcpPaths][]Figures
}

// carrier is a TCP program of the proxy part running as a child process.
type carrier struct {
	p    *proc.Proc
	addr string
}

// startCarrier starts a TCP program (tcpEcho, tcpForward or tcpProxy) and
// reads the address it listens on.
func startCarrier(probe []string, mode, dir string, args ...string) (*carrier, error) {
	logPath := filepath.Join(dir, mode+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	argv := append(append(append([]string(nil), probe...), mode), args...)
	p, err := proc.Start(proc.Spec{Argv: argv, Log: log})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mode, err)
	}
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	if err != nil {
		_ = p.Kill()
		_, _ = p.Wait()
		return nil, fmt.Errorf("%s did not say where it listens: %w (see %s)", mode, err, logPath)
	}
	return &carrier{p: p, addr: strings.TrimSpace(line)}, nil
}

// stop closes the program's stdin, which ends it (writing its profile, if
// any), and kills it if it has not ended within a few seconds.
func (c *carrier) stop() {
	_ = c.p.Stdin.Close()
	go func() { _, _ = c.p.Wait() }()
	select {
	case <-c.p.Done():
	case <-time.After(5 * time.Second):
		_ = c.p.Kill()
		<-c.p.Done()
	}
}

// cpu is the processor time the program has used so far, from
// /proc/PID/stat (user and system, in clock ticks of 10ms).
func (c *carrier) cpu() time.Duration { return pidCPU(c.p.Pid()) }

// pidCPU is the processor time a process has used so far, from
// /proc/PID/stat (user and system, in clock ticks of 10ms); 0 when it
// cannot be read.
func pidCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// runProxyPart measures round trips over TCP on the three paths: the echo
// server, the forwarder and the proxy each start once, and each probe run
// is one new connection.
func runProxyPart(ctx context.Context, cfg *Config, dir string, progress func(string, ...any)) ([]ProxyCase, error) {
	echo, err := startCarrier(cfg.Probe, tcpEcho, dir)
	if err != nil {
		return nil, err
	}
	defer echo.stop()
	args := func(profile string) []string {
		a := []string{"--to", echo.addr}
		if cfg.Profile != "" {
			a = append(a, "--cpuprofile", filepath.Join(cfg.Profile, profile))
		}
		return a
	}
	fwd, err := startCarrier(cfg.Probe, tcpForward, dir, args("forwarder.pprof")...)
	if err != nil {
		return nil, err
	}
	defer fwd.stop()
	prx, err := startCarrier(cfg.proxyProbe(), tcpProxy, dir, args("proxy.pprof")...)
	if err != nil {
		return nil, err
	}
	defer prx.stop()
	via := [tcpPaths]*carrier{Direct: echo, Forwarder: fwd, Proxied: prx}

	cases := []ProxyCase{
		{Title: fmt.Sprintf("pipelined, window %d", cfg.Window), Mode: Pipelined, Window: cfg.Window},
		{Title: "one at a time", Mode: OneAtATime, Window: 1},
	}
	for i := range cases {
		c := &cases[i]
		for round := 1; round <= cfg.Rounds; round++ {
			for path := range tcpPaths {
				if err := ctx.Err(); err != nil {
					return cases, err
				}
				cpu := via[path].cpu()
				f, err := tcpPing(via[path].addr, c.Mode, c.Window, cfg.Warmup, cfg.Time)
				if path != Direct {
					f.CPU = via[path].cpu() - cpu
				}
				if err != nil {
					return cases, fmt.Errorf("proxy part, %s, %s: %w", c.Title, tcpPathNames[path], err)
				}
				c.Runs[path] = append(c.Runs[path], f)
				progress("proxy: %s, round %d/%d, %s: %s", c.Title, round, cfg.Rounds, tcpPathNames[path], f.summary())
			}
		}
	}
	return cases, nil
}
