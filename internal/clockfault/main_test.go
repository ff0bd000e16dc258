package clockfault

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is also the probe: a Go process that reads its clocks
// through the vDSO (time.Now: the wall clock and Go's monotonic clock)
// when asked, with goroutines that read them all the time meanwhile.
func TestMain(m *testing.M) {
	switch os.Getenv("CLOCKFAULT_ROLE") {
	case "probe":
		probe()
		return
	case "tracer":
		os.Exit(tracer())
	case "timer":
		timer()
		return
	}
	os.Exit(m.Run())
}

func probe() {
	start := time.Now()
	for range 4 {
		go func() {
			for {
				_ = time.Now()
			}
		}()
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		now := time.Now()
		fmt.Printf("%d %d\n", now.UnixNano(), now.Sub(start).Nanoseconds())
	}
}

// prober is a running probe.
type prober struct {
	cmd *exec.Cmd
	in  *os.File
	w   io.Writer // the timer probe's stdin
	out *bufio.Scanner
}

func startProbe(t testing.TB, attr *syscall.SysProcAttr) *prober {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return startCmd(t, exec.Command(exe), attr, "CLOCKFAULT_ROLE=probe")
}

func startCmd(t testing.TB, cmd *exec.Cmd, attr *syscall.SysProcAttr, env ...string) *prober {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = attr
	cmd.Stderr = os.Stderr
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = inR
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	p := &prober{cmd: cmd, in: inW, out: bufio.NewScanner(out)}
	if t, ok := t.(*testing.T); ok {
		t.Cleanup(p.stop)
	}
	p.read() // it answers once it runs
	return p
}

func (p *prober) stop() {
	p.in.Close()
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

func (p *prober) pid() int { return p.cmd.Process.Pid }

// read asks the probe for its clocks: the wall clock and the monotonic
// time since it started, in nanoseconds.
func (p *prober) read() (wall, mono int64) {
	fmt.Fprintln(p.in, "r")
	if !p.out.Scan() {
		panic(fmt.Sprintf("the probe did not answer: %v", p.out.Err()))
	}
	f := strings.Fields(p.out.Text())
	if len(f) < 2 {
		panic(fmt.Sprintf("the probe answered %q", p.out.Text()))
	}
	wall, _ = strconv.ParseInt(f[0], 10, 64)
	mono, _ = strconv.ParseInt(f[1], 10, 64)
	return wall, mono
}

// span is a reading of the probe's clocks with the true monotonic times,
// in nanoseconds, before the question and after the answer: the probe
// read its clocks somewhere between the two.
type span struct{ wall, mono, before, after int64 }

// readSpan is read, bracketed by the true time.
func (p *prober) readSpan(zero time.Time) span {
	before := int64(time.Since(zero))
	wall, mono := p.read()
	return span{wall, mono, before, int64(time.Since(zero))}
}

// rateWithin reports whether a clock that moved d between two readings a
// and b ran at rate within tol (0.1 for 10%), whatever the time the
// questions took: the true interval between the probe's two readings is at
// least b.before−a.after and at most b.after−a.before, so a loaded machine
// widens the bounds instead of failing the test.
func rateWithin(d int64, a, b span, rate, tol float64) (lo, hi float64, ok bool) {
	shortest, longest := float64(b.before-a.after), float64(b.after-a.before)
	if shortest < 1 {
		shortest = 1
	}
	lo, hi = float64(d)/longest, float64(d)/shortest
	return lo, hi, lo <= rate*(1+tol) && hi >= rate*(1-tol)
}

// wallSkew is how far the probe's wall clock is from the true one, within
// the time a question takes.
func (p *prober) wallSkew() time.Duration {
	// As NTP does: of a few readings, the one whose round trip was
	// shortest, so that a loaded machine's slow answer does not pass for
	// a skew (its error is at most half its round trip).
	var best, rtt int64 = 0, -1
	for i := 0; i < 5; i++ {
		before := time.Now().UnixNano()
		wall, _ := p.read()
		after := time.Now().UnixNano()
		if rtt < 0 || after-before < rtt {
			best, rtt = wall-(before+after)/2, after-before
		}
	}
	return time.Duration(best)
}

func fmtSscan(s string, args ...any) (int, error) { return fmt.Sscan(s, args...) }

// timer answers each line with the time a time.Now call takes, over 2M.
func timer() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		start := time.Now()
		for range 2_000_000 {
			_ = time.Now()
		}
		fmt.Printf("%d\n", time.Since(start).Nanoseconds()/2_000_000)
	}
}
