package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"slices"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/coupharness/coup/servers/hostnet"
)

// PartHosts measures coup's network between hosts (servers/hostnet): a
// TCP stream's throughput and a UDP ping-pong's round trips between two
// hosts, each a network namespace whose packets all cross coup, against
// the same two namespaces joined directly by a veth pair, nothing of
// coup's between them; and how long a host takes to make.
const PartHosts = "hosts"

// The paths of the hosts part, in the order each round runs them.
const (
	HostsDirect = iota // two namespaces joined by a veth pair
	HostsCoup          // two hosts on coup's network, no fault in force
	hostsPaths
)

var hostsPathNames = [hostsPaths]string{"veth pair", "coup's network"}

// hostsStream is how long each round's TCP stream runs; hostsPings how
// many UDP round trips each round's ping-pong makes, one at a time.
const (
	hostsStream = time.Second
	hostsPings  = 2000
)

// HostsFigures are one round's figures on one path.
type HostsFigures struct {
	// Throughput is the TCP stream's, in bytes per second.
	Throughput float64
	// P50 and P99 are the UDP ping-pong's round trips.
	P50, P99 time.Duration
}

// HostsCase is the hosts part's figures: each round's, by path, and the
// making of hosts.
type HostsCase struct {
	// Skipped says why the part did not run ("" when it did).
	Skipped string
	Runs    [hostsPaths][]HostsFigures
	// Network is how long a network of three hosts took to make (its
	// namespaces made side by side), and Host how long a network of one;
	// Process how long a process (true) took to start and end inside a
	// host, and Outside the same outside any namespace: each the median
	// of the rounds.
	Network, Host, Process, Outside time.Duration
}

// runHostsPart runs the hosts part: cfg.Rounds rounds, the paths taking
// turns.
func runHostsPart(ctx context.Context, cfg *Config, progress func(string, ...any)) (*HostsCase, error) {
	out := &HostsCase{}
	if err := hostnet.Available(); err != nil {
		out.Skipped = err.Error()
		progress("hosts: skipped: %s", out.Skipped)
		return out, nil
	}
	var nets, ones, procs, outside []int64
	for round := range cfg.Rounds {
		for path := range hostsPaths {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			f, err := hostsRound(ctx, path)
			if err != nil {
				return out, fmt.Errorf("hosts part, %s: %w", hostsPathNames[path], err)
			}
			out.Runs[path] = append(out.Runs[path], f)
			progress("hosts: round %d, %s: TCP %.0f MB/s, UDP round trip p50 %s p99 %s", round+1, hostsPathNames[path],
				f.Throughput/1e6, f.P50, f.P99)
		}
		n, one, p, o, err := hostsStart()
		if err != nil {
			return out, fmt.Errorf("hosts part, making hosts: %w", err)
		}
		nets, ones, procs, outside = append(nets, int64(n)), append(ones, int64(one)), append(procs, int64(p)), append(outside, int64(o))
	}
	med := func(v []int64) time.Duration {
		slices.Sort(v)
		return time.Duration(percentile(v, 0.5))
	}
	out.Network, out.Host, out.Process, out.Outside = med(nets), med(ones), med(procs), med(outside)
	progress("hosts: a network of 3 hosts made in %s, of 1 in %s; a process started and ended inside a host in %s (outside: %s)",
		out.Network.Round(time.Microsecond), out.Host.Round(time.Microsecond), out.Process.Round(time.Microsecond), out.Outside.Round(time.Microsecond))
	return out, nil
}

// hostsRound makes a path's two hosts, measures between them, and
// removes them.
func hostsRound(ctx context.Context, path int) (HostsFigures, error) {
	var a, b *hostnet.Host
	var closer io.Closer
	switch path {
	case HostsDirect:
		p, err := hostnet.NewVethPair("a", "b")
		if err != nil {
			return HostsFigures{}, err
		}
		closer, a, b = p, p.Hosts()[0], p.Hosts()[1]
	default:
		n, err := hostnet.New(hostnet.Config{Hosts: []string{"a", "b"}})
		if err != nil {
			return HostsFigures{}, err
		}
		closer, a, b = n, n.Host("a"), n.Host("b")
	}
	defer closer.Close()
	var f HostsFigures
	var err error
	if f.Throughput, err = tcpStream(ctx, a, b); err != nil {
		return f, fmt.Errorf("TCP stream: %w", err)
	}
	if f.P50, f.P99, err = udpPingPong(ctx, a, b); err != nil {
		return f, fmt.Errorf("UDP ping-pong: %w", err)
	}
	return f, nil
}

// tcpStream sends a stream from a to b for hostsStream and returns the
// bytes per second b read.
func tcpStream(ctx context.Context, a, b *hostnet.Host) (float64, error) {
	ln, err := b.Listen("tcp4", net.JoinHostPort(b.Addr.String(), "5001"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	var got atomic.Int64
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		buf := make([]byte, 256<<10)
		for {
			k, err := c.Read(buf)
			got.Add(int64(k))
			if err != nil {
				done <- nil
				return
			}
		}
	}()
	c, err := a.DialContext(ctx, "tcp4", ln.Addr().String())
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 64<<10)
	// A short warm-up opens the window; the stream is measured after.
	warm := time.Now().Add(100 * time.Millisecond)
	for time.Now().Before(warm) {
		if _, err := c.Write(buf); err != nil {
			c.Close()
			return 0, err
		}
	}
	start, from := time.Now(), got.Load()
	for time.Since(start) < hostsStream {
		if _, err := c.Write(buf); err != nil {
			c.Close()
			return 0, err
		}
	}
	took, n := time.Since(start), got.Load()-from
	c.Close()
	if err := <-done; err != nil {
		return 0, err
	}
	return float64(n) / took.Seconds(), nil
}

// udpPingPong makes hostsPings UDP round trips from a to an echo on b,
// one at a time, and returns their median and 99th percentile.
func udpPingPong(ctx context.Context, a, b *hostnet.Host) (p50, p99 time.Duration, err error) {
	pc, err := b.ListenPacket("udp4", net.JoinHostPort(b.Addr.String(), "5002"))
	if err != nil {
		return 0, 0, err
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			k, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(buf[:k], from)
		}
	}()
	c, err := a.DialContext(ctx, "udp4", pc.LocalAddr().String())
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	msg, buf := make([]byte, 64), make([]byte, 2048)
	var rtts []int64
	for i := range hostsPings {
		msg[0] = byte(i)
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			return 0, 0, err
		}
		c.SetReadDeadline(start.Add(time.Second))
		if _, err := c.Read(buf); err != nil {
			continue // lost (none are, without faults): not counted
		}
		rtts = append(rtts, int64(time.Since(start)))
	}
	if len(rtts) < hostsPings/2 {
		return 0, 0, fmt.Errorf("only %d of %d round trips", len(rtts), hostsPings)
	}
	slices.Sort(rtts)
	return time.Duration(percentile(rtts, 0.5)), time.Duration(percentile(rtts, 0.99)), nil
}

// hostsStart measures the making of a network of three hosts and of one,
// and a process's start inside a host and outside.
func hostsStart() (three, one, inside, outside time.Duration, err error) {
	start := time.Now()
	n, err := hostnet.New(hostnet.Config{Hosts: []string{"n1", "n2", "n3"}})
	if err != nil {
		return 0, 0, 0, 0, err
	}
	three = time.Since(start)
	n.Close()
	start = time.Now()
	n, err = hostnet.New(hostnet.Config{Hosts: []string{"n1"}})
	if err != nil {
		return 0, 0, 0, 0, err
	}
	one = time.Since(start)
	defer n.Close()
	run := func(enter func(func() error) error) (time.Duration, error) {
		start := time.Now()
		cmd := execTrue()
		if err := enter(cmd.Start); err != nil {
			return 0, err
		}
		err := cmd.Wait()
		return time.Since(start), err
	}
	if inside, err = run(n.Host("n1").Do); err != nil {
		return 0, 0, 0, 0, err
	}
	outside, err = run(func(f func() error) error { return f() })
	return three, one, inside, outside, err
}

// printHosts writes the hosts part's table: the medians of the rounds by
// path, and coup's network against the veth pair.
func (r *Results) printHosts(w io.Writer) {
	h := r.Hosts
	fmt.Fprintf(w, "\ncoup's network between two hosts (a namespace each, every packet through coup) against a veth pair (%d rounds, medians)\n", r.Config.Rounds)
	if h.Skipped != "" {
		fmt.Fprintf(w, "  skipped: %s\n", h.Skipped)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  path\tTCP stream\tUDP round trip p50\tp99\t")
	var med [hostsPaths]HostsFigures
	for path := range hostsPaths {
		var tp, p50, p99 []int64
		for _, f := range h.Runs[path] {
			tp, p50, p99 = append(tp, int64(f.Throughput)), append(p50, int64(f.P50)), append(p99, int64(f.P99))
		}
		slices.Sort(tp)
		slices.Sort(p50)
		slices.Sort(p99)
		med[path] = HostsFigures{Throughput: float64(percentile(tp, 0.5)), P50: time.Duration(percentile(p50, 0.5)), P99: time.Duration(percentile(p99, 0.5))}
		fmt.Fprintf(tw, "  %s\t%.0f MB/s\t%s\t%s\t\n", hostsPathNames[path], med[path].Throughput/1e6, med[path].P50.Round(time.Microsecond), med[path].P99.Round(time.Microsecond))
	}
	tw.Flush()
	d, c := med[HostsDirect], med[HostsCoup]
	if d.Throughput > 0 && d.P50 > 0 {
		fmt.Fprintf(w, "  coup's network / veth pair: TCP throughput %.2f×, UDP round trip p50 %.2f×\n", c.Throughput/d.Throughput, float64(c.P50)/float64(d.P50))
	}
	fmt.Fprintf(w, "  a network of 3 hosts made in %s (side by side), of 1 host in %s; a process started and ended inside a host in %s, outside in %s\n",
		h.Network.Round(time.Microsecond), h.Host.Round(time.Microsecond), h.Process.Round(time.Microsecond), h.Outside.Round(time.Microsecond))
}

// execTrue is a command that does nothing: the cost of a process's start.
func execTrue() *exec.Cmd { return exec.Command("true") }
