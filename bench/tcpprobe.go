package bench

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/servers/proxy"
)

// The TCP programs of the proxy part, each a hidden mode of the probe
// ("coup bench-probe tcp-echo" and so on). Each listens on 127.0.0.1, port
// chosen by the system, writes its address as one line on stdout, and
// serves until its stdin closes.
const (
	tcpEcho    = "tcp-echo"    // writes back whatever each connection sends
	tcpForward = "tcp-forward" // a plain forwarder: copies bytes both ways, nothing else
	tcpProxy   = "tcp-proxy"   // coup's fault proxy, with no fault in force
)

// tcpMain runs one of the TCP programs and returns the exit code.
func tcpMain(mode string, args []string) int {
	fs := flag.NewFlagSet("bench-probe "+mode, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	to := fs.String("to", "", "the address forwarded to")
	profile := fs.String("cpuprofile", "", "write a CPU profile here, from start to end")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || (mode != tcpEcho) == (*to == "") {
		fmt.Fprintf(os.Stderr, "bench-probe %s: bad arguments %q\n", mode, args)
		return 2
	}
	if *profile != "" {
		stop, err := startCPUProfile(*profile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-probe %s: %v\n", mode, err)
			return 1
		}
		defer stop()
	}
	var addr net.Addr
	var stop func()
	switch mode {
	case tcpProxy:
		p, err := proxy.Listen(proxy.Config{Listen: "127.0.0.1:0", From: "client", To: "server", Target: *to, Policy: noFaults{}})
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-probe %s: %v\n", mode, err)
			return 1
		}
		addr, stop = p.Addr(), func() { p.Close() }
	default:
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-probe %s: %v\n", mode, err)
			return 1
		}
		serve := echoConn
		if mode == tcpForward {
			serve = func(c *net.TCPConn) { forwardConn(c, *to) }
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			acceptAll(ln, serve)
		}()
		addr, stop = ln.Addr(), func() { ln.Close(); <-done }
	}
	fmt.Println(addr)
	_, _ = io.Copy(io.Discard, os.Stdin) // serve until the benchmark closes stdin
	stop()
	return 0
}

// noFaults is a policy with no fault in force: what the proxy costs when
// the nemesis leaves a link alone.
type noFaults struct{}

func (noFaults) Cut(nemesis.Link) nemesis.CutKind                       { return nemesis.NoCut }
func (noFaults) Chunk(nemesis.Link, uint64, int64, []byte) nemesis.Fate { return nemesis.Fate{} }

var _ proxy.Policy = noFaults{}

// acceptAll serves each connection in a goroutine of its own until the
// listener closes.
func acceptAll(ln net.Listener, serve func(*net.TCPConn)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			serve(c.(*net.TCPConn))
		}()
	}
}

// echoConn writes back what it reads, as it reads it.
func echoConn(c *net.TCPConn) {
	defer c.Close()
	_, _ = copyBytes(c, c)
}

// forwardConn is the plain forwarder: dial the target and copy both ways,
// a read and a write per chunk, as the proxy does, with no decision in
// between; an end of stream is passed on as a half-close.
func forwardConn(c *net.TCPConn, to string) {
	defer c.Close()
	t, err := net.Dial("tcp", to)
	if err != nil {
		return
	}
	defer t.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := copyBytes(t.(*net.TCPConn), c); err == nil {
			_ = t.(*net.TCPConn).CloseWrite()
		}
	}()
	if _, err := copyBytes(c, t.(*net.TCPConn)); err == nil {
		_ = c.CloseWrite()
	}
	<-done
}

// copyBytes copies with a read and a write per chunk: not io.Copy, which
// between two TCP sockets splices through a kernel pipe, a path the proxy
// cannot take since it looks at the bytes.
func copyBytes(dst, src *net.TCPConn) (int64, error) {
	buf := make([]byte, 32<<10)
	var total int64
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// tcpMessage is the size of the TCP probe's messages: a sequence number
// and padding.
const tcpMessage = 64

// tcpPing is the TCP probe's client: it dials addr, keeps window messages
// outstanding (one, one at a time) for warmup and then for the measured
// time, and measures each round trip. The echo keeps order, so each
// answer is for the oldest message outstanding.
func tcpPing(addr string, mode string, window int, warmup, measured time.Duration) (Figures, error) {
	f := Figures{Mode: mode}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return f, err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(warmup + measured + maxStretch + probeSlack)); err != nil {
		return f, err
	}
	var (
		sentAt  = make([]int64, ring)
		rtts    = make([]int64, 0, 1<<16)
		next    int64 // the next message's sequence number
		done    int64 // messages answered
		out     = make([]byte, 0, window*tcpMessage)
		in      = make([]byte, 64<<10)
		partial int // bytes of an answer read so far
		msg     [tcpMessage]byte
	)
	t0 := time.Now()
	from, to := int64(warmup), int64(warmup+measured)
	end := to // when the measured time ended: to, or later (measuring)
	for {
		now := int64(time.Since(t0))
		if !measuring(now, to, len(rtts)) {
			end = max(now, to)
			break
		}
		out = out[:0]
		for next-done < int64(window) {
			binary.LittleEndian.PutUint64(msg[:], uint64(next))
			out = append(out, msg[:]...)
			at := int64(time.Since(t0))
			sentAt[next%ring] = at
			next++
			if at >= from {
				f.Sent++
			}
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return f, fmt.Errorf("write: %w", err)
			}
		}
		n, err := c.Read(in[partial:])
		if err != nil {
			return f, fmt.Errorf("read: %w", err)
		}
		now = int64(time.Since(t0))
		whole := (partial + n) / tcpMessage
		for i := range whole {
			seq := int64(binary.LittleEndian.Uint64(in[i*tcpMessage:]))
			if seq != done {
				return f, fmt.Errorf("answer %d came when %d was due", seq, done)
			}
			// A ping sent in the warm-up is not counted as sent, so its
			// answer is not counted as completed either.
			if now >= from && measuring(now, to, len(rtts)) && sentAt[seq%ring] >= from {
				f.Completed++
				rtts = append(rtts, now-sentAt[seq%ring])
			}
			done++
		}
		partial = copy(in, in[whole*tcpMessage:partial+n])
	}
	f.Pings = next
	f.Seconds = time.Duration(end - from).Seconds()
	f.setLatencies(rtts)
	return f, nil
}
