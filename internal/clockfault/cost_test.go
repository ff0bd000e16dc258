package clockfault

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCost measures, when COUP_CLOCK_COST is set, what the hook costs a
// clock read (a Go process timing time.Now, before and after the patch)
// and how long a patch stops a busy process; the figures are in
// docs/servers.md.
func TestCost(t *testing.T) {
	if os.Getenv("COUP_CLOCK_COST") == "" {
		t.Skip("set COUP_CLOCK_COST=1 to measure")
	}
	needMachine(t)
	p := startProbe(t, nil)
	var applies []time.Duration
	for i := range 20 {
		start := time.Now()
		if err := Apply(p.pid(), Begin(Skew{Offset: time.Duration(i+1) * time.Second, Realtime: true})); err != nil {
			t.Fatal(err)
		}
		applies = append(applies, time.Since(start))
		if err := Reset(p.pid()); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("apply (first, with its stop): %v", applies)
	// The cost of a read: a probe times its own.
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CLOCKFAULT_ROLE=timer")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	q := &prober{cmd: cmd, out: bufio.NewScanner(out)}
	q.w = in
	before := q.timed()
	if err := Apply(q.pid(), Begin(Skew{Offset: time.Second, Realtime: true, Monotonic: true})); err != nil {
		t.Fatal(err)
	}
	after := q.timed()
	t.Logf("time.Now: %v a call before the patch, %v after", before, after)
}

// timed asks a timer probe for its time per time.Now call.
func (p *prober) timed() time.Duration {
	p.w.Write([]byte("r\n"))
	p.out.Scan()
	ns, _ := strconv.ParseFloat(strings.TrimSpace(p.out.Text()), 64)
	return time.Duration(ns)
}
