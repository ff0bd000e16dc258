package proxy

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coupharness/coup/nemesis"
)

// Streams arrive byte for byte: many connections at once, both ways at
// once, random write sizes, half-closes at the end; with no fault, and
// with random short delays (which move chunks between the hot path and the
// queue). Every proxy goroutine ends with Close.
func TestStreamsArriveIntact(t *testing.T) {
	for _, delays := range []bool{false, true} {
		t.Run(fmt.Sprintf("delays=%v", delays), func(t *testing.T) {
			const seed = 7
			pol, ev := newPolicy(), newEvents()
			if delays {
				var mu sync.Mutex
				rng := rand.New(rand.NewPCG(seed, 1))
				pol.chunk = func(nemesis.Link, uint64, int64, []byte) nemesis.Fate {
					mu.Lock()
					defer mu.Unlock()
					if rng.IntN(4) == 0 {
						return delayed(time.Duration(rng.IntN(500)) * time.Microsecond)
					}
					return nemesis.Fate{}
				}
			}
			p, tg := start(t, pol, ev, nil)
			const conns = 8
			var wg sync.WaitGroup
			errs := make(chan error, 4*conns)
			for i := range conns {
				a, err := net.Dial("tcp", p.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				b := tg.accept(t)
				rng := rand.New(rand.NewPCG(seed, uint64(10+i)))
				up, down := randomBytes(rng, 200<<10), randomBytes(rng, 100<<10)
				for _, s := range []struct {
					from, to net.Conn
					data     []byte
					seed     uint64
				}{{a, b, up, uint64(2 * i)}, {b, a, down, uint64(2*i + 1)}} {
					wg.Add(2)
					go func() {
						defer wg.Done()
						errs <- sendInPieces(s.from.(*net.TCPConn), s.data, rand.New(rand.NewPCG(seed, 100+s.seed)))
					}()
					go func() {
						defer wg.Done()
						s.to.SetReadDeadline(time.Now().Add(30 * time.Second))
						got, err := io.ReadAll(s.to)
						switch {
						case err != nil:
							errs <- err
						case !bytes.Equal(got, s.data):
							errs <- fmt.Errorf("%d bytes arrived, want %d, first difference at %d", len(got), len(s.data), firstDiff(got, s.data))
						}
					}()
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			s := p.Stats()
			if s.Opened != conns || s.ToTarget != conns*200<<10 || s.FromTarget != conns*100<<10 || s.Open != 0 {
				t.Errorf("stats %+v", s)
			}
			if n := len(ev.of(EventClose)); n != conns {
				t.Errorf("%d close events, want %d", n, conns)
			}
			if left := proxyGoroutines(); left != "" {
				t.Errorf("goroutines of the proxy outlived Close:\n%s", left)
			}
		})
	}
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// sendInPieces writes data in random pieces, then half-closes.
func sendInPieces(c *net.TCPConn, data []byte, rng *rand.Rand) error {
	for len(data) > 0 {
		n := min(1+rng.IntN(20000), len(data))
		if _, err := c.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return c.CloseWrite()
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// proxyGoroutines returns the stacks of the goroutines running the
// proxy's code, if any.
func proxyGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, fn := range []string{"proxy.(*Proxy)", "proxy.(*conn)", "proxy.(*direction)"} {
			if strings.Contains(g, fn) {
				out = append(out, g)
				break
			}
		}
	}
	return strings.Join(out, "\n\n")
}
