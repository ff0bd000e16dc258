package clockfault

import (
	"bytes"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func needMachine(t *testing.T) {
	t.Helper()
	if err := Check(); err != nil {
		t.Skipf("clock faults cannot reach processes here: %v", err)
	}
}

// near fails unless got is within tol of want.
func near(t *testing.T, what string, got, want, tol time.Duration) {
	t.Helper()
	if d := got - want; d < -tol || d > tol {
		t.Fatalf("%s: got %v, want %v ± %v", what, got, want, tol)
	}
}

func TestOffsetRealtime(t *testing.T) {
	needMachine(t)
	p := startProbe(t, nil)
	near(t, "before", p.wallSkew(), 0, 50*time.Millisecond)
	_, mono0 := p.read()
	if err := Apply(p.pid(), Begin(Skew{Offset: time.Hour, Realtime: true})); err != nil {
		t.Fatal(err)
	}
	near(t, "under the fault", p.wallSkew(), time.Hour, 50*time.Millisecond)
	if _, mono := p.read(); time.Duration(mono-mono0) > time.Second {
		t.Fatalf("the monotonic clock moved %v: a realtime offset must leave it alone", time.Duration(mono-mono0))
	}
	r, err := Read(p.pid())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Patched || !r.Counted || r.Realtime.Count == 0 {
		t.Fatalf("read back %+v: want the hook in, and its reads counted", r)
	}
	near(t, "skew read back", time.Duration(r.Realtime.Skew), time.Hour, time.Millisecond)
	if err := Reset(p.pid()); err != nil {
		t.Fatal(err)
	}
	near(t, "after the reset", p.wallSkew(), 0, 50*time.Millisecond)
	assertPristine(t, p.pid())
}

func TestOffsetMonotonic(t *testing.T) {
	needMachine(t)
	p := startProbe(t, nil)
	_, m0 := p.read()
	if err := Apply(p.pid(), Begin(Skew{Offset: 3 * time.Second, Monotonic: true})); err != nil {
		t.Fatal(err)
	}
	_, m1 := p.read()
	near(t, "monotonic jump", time.Duration(m1-m0), 3*time.Second, 500*time.Millisecond)
	near(t, "wall clock", p.wallSkew(), 0, 50*time.Millisecond)
	// Back: Go's runtime waits for its monotonic clock to pass its next
	// timer again, so the probe stalls; what its reads saw is read back.
	if err := Apply(p.pid(), Begin(Skew{Offset: -2 * time.Second, Monotonic: true})); err != nil {
		t.Fatal(err)
	}
	r, err := Read(p.pid())
	if err != nil {
		t.Fatal(err)
	}
	for r.Monotonic.Skew != int64(-2*time.Second) {
		// The busy goroutines read the clock at once; wait for one.
		if r, err = Read(p.pid()); err != nil {
			t.Fatal(err)
		}
	}
	if err := Reset(p.pid()); err != nil {
		t.Fatal(err)
	}
	_, m3 := p.read()
	near(t, "after the reset", time.Duration(m3-m0), 0, 500*time.Millisecond)
}

func TestRate(t *testing.T) {
	needMachine(t)
	for _, rate := range []float64{2, 0.5} {
		p := startProbe(t, nil)
		if err := Apply(p.pid(), Begin(Skew{Rate: rate, Realtime: true, Monotonic: true})); err != nil {
			t.Fatal(err)
		}
		zero := time.Now()
		a := p.readSpan(zero)
		time.Sleep(300 * time.Millisecond)
		b := p.readSpan(zero)
		for what, d := range map[string]int64{"monotonic": b.mono - a.mono, "wall": b.wall - a.wall} {
			if lo, hi, ok := rateWithin(d, a, b, rate, 0.1); !ok {
				t.Errorf("rate %g: the %s clock ran %.3f to %.3f times as fast", rate, what, lo, hi)
			}
		}
		r, err := Read(p.pid())
		if err != nil {
			t.Fatal(err)
		}
		if r.Monotonic.Count == 0 || r.Monotonic.Skew == 0 {
			t.Errorf("rate %g: read back %+v: want reads with a skew", rate, r.Monotonic)
		}
		p.stop()
	}
}

// TestManyThreads patches and unpatches a process whose threads read
// their clocks without pause: a torn patch, or a thread caught between
// two instructions that are gone, would crash it. (Realtime only: a
// monotonic clock set back stalls Go's scheduler for as long.)
func TestManyThreads(t *testing.T) {
	needMachine(t)
	p := startProbe(t, nil)
	for i := range 100 {
		if err := Apply(p.pid(), Begin(Skew{Offset: time.Duration(i) * time.Second, Rate: 1 + float64(i)/10, Realtime: true})); err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
		if i%3 == 2 {
			if err := Reset(p.pid()); err != nil {
				t.Fatalf("reset %d: %v", i, err)
			}
		}
	}
	if err := Reset(p.pid()); err != nil {
		t.Fatal(err)
	}
	near(t, "after it all", p.wallSkew(), 0, 50*time.Millisecond)
	assertPristine(t, p.pid())
}

// TestStoppedStaysStopped: a process paused by a fault is patched as it
// is, and left paused.
func TestStoppedStaysStopped(t *testing.T) {
	needMachine(t)
	p := startProbe(t, nil)
	if err := signal(p.pid(), 19); err != nil { // SIGSTOP
		t.Fatal(err)
	}
	for {
		st, _ := readStat(p.pid())
		if st.state == 'T' {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := Apply(p.pid(), Begin(Skew{Offset: time.Minute, Realtime: true})); err != nil {
		t.Fatal(err)
	}
	if st, _ := readStat(p.pid()); st.state != 'T' {
		t.Fatalf("state %c after the patch: a paused process must stay paused", st.state)
	}
	_ = signal(p.pid(), 18) // SIGCONT
	near(t, "once resumed", p.wallSkew(), time.Minute, 50*time.Millisecond)
}

// assertPristine fails unless the process's vDSO is the kernel's, but for
// the hook's block left, unreachable, in its unused tail.
func assertPristine(t *testing.T, pid int) {
	t.Helper()
	l, err := machineLayout()
	if err != nil {
		t.Fatal(err)
	}
	m, err := openMem(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	img, err := m.read(m.base, m.size)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(img[:l.block], l.pristine[:l.block]) {
		t.Fatal("the vDSO is not as the kernel made it after the reset")
	}
	for _, e := range l.entries {
		if !bytes.Equal(img[e.off:e.off+len(e.patch)], l.pristine[e.off:e.off+len(e.patch)]) {
			t.Fatalf("%s is still patched", e.sym)
		}
	}
}

// TestC runs the hook under a C program's glibc: clock_gettime,
// gettimeofday and time.
func TestC(t *testing.T) {
	needMachine(t)
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "probe.c")
	os.WriteFile(src, []byte(`#include <stdio.h>
#include <time.h>
#include <sys/time.h>
int main(void) {
	char line[16];
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof line, stdin)) {
		struct timespec rt, mono; struct timeval tv; time_t t;
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_MONOTONIC, &mono);
		gettimeofday(&tv, NULL);
		t = time(NULL);
		printf("%lld %lld %lld %lld\n", (long long)rt.tv_sec*1000000000LL + rt.tv_nsec,
			(long long)mono.tv_sec*1000000000LL + mono.tv_nsec,
			(long long)tv.tv_sec*1000000LL + tv.tv_usec, (long long)t);
	}
	return 0;
}
`), 0o644)
	bin := filepath.Join(dir, "probe")
	if out, err := exec.Command(cc, "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	p := startCmd(t, exec.Command(bin), nil)
	if err := Apply(p.pid(), Begin(Skew{Offset: 100 * time.Hour, Realtime: true})); err != nil {
		t.Fatal(err)
	}
	p.in.Write([]byte("r\n"))
	now := time.Now()
	if !p.out.Scan() {
		t.Fatal("the C probe did not answer")
	}
	var rt, mono, tv, sec int64
	if _, err := fmtSscan(p.out.Text(), &rt, &mono, &tv, &sec); err != nil {
		t.Fatal(err)
	}
	want := now.Add(100 * time.Hour)
	near(t, "clock_gettime(CLOCK_REALTIME)", time.Duration(rt-want.UnixNano()), 0, 100*time.Millisecond)
	near(t, "gettimeofday", time.Duration(tv*1000-want.UnixNano()), 0, 100*time.Millisecond)
	near(t, "time", time.Duration(sec-want.Unix())*time.Second, 0, 2*time.Second)
	if err := Reset(p.pid()); err != nil {
		t.Fatal(err)
	}
	assertPristine(t, p.pid())
}

func TestReachable(t *testing.T) {
	exe, _ := os.Executable()
	if err := Reachable(exe); err != nil {
		t.Errorf("a Go program: %v", err)
	}
	if err := Reachable("/bin/sh"); err != nil {
		t.Errorf("a dynamically linked program: %v", err)
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "raw.c")
	os.WriteFile(src, []byte(`void _start(void) {
	long ts[2];
	__asm__ volatile ("syscall" : : "a"(228), "D"(0), "S"(ts) : "rcx", "r11", "memory");
	__asm__ volatile ("syscall" : : "a"(60), "D"(0));
}
`), 0o644)
	bin := filepath.Join(dir, "raw")
	if out, err := exec.Command(cc, "-static", "-nostdlib", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("cc -static: %v\n%s", err, out)
	}
	err = Reachable(bin)
	if err == nil || !strings.Contains(err.Error(), "system calls") {
		t.Fatalf("a static program that makes the system call itself: got %v, want it refused", err)
	}
}

// TestNode: a driver's view: the skew set on a node's processes, what
// they saw recorded, a process started later skewed too, and the rate
// measured at the end.
func TestNode(t *testing.T) {
	needMachine(t)
	p := startProbe(t, nil)
	var n Node
	var events []history.Event
	var mu sync.Mutex
	record := func(e history.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	if err := n.Set(nemesis.Skew{Offset: 10 * time.Second, Rate: 2, Clocks: nemesis.BothClocks, Fault: "faults[0]#1"}, []int{p.pid()}, record); err != nil {
		t.Fatal(err)
	}
	n.reading.Wait()
	if len(events) != 1 || events[0].What != history.ClockSeen || events[0].Name != "faults[0]#1" {
		t.Fatalf("events at the start: %+v", events)
	}
	if d, err := time.ParseDuration(events[0].Value); err != nil || d < 10*time.Second || d > 11*time.Second {
		t.Fatalf("the skew seen at the start: %q, want about +10s", events[0].Value)
	}
	later := startProbe(t, nil)
	if err := n.Started([]int{later.pid()}); err != nil {
		t.Fatal(err)
	}
	if s := later.wallSkew(); s < 10*time.Second {
		t.Fatalf("a process started under the fault: its wall clock is %v off, want more than 10s", s)
	}
	time.Sleep(200 * time.Millisecond)
	events = nil
	if err := n.Set(nemesis.Skew{Fault: "faults[0]#1"}, []int{p.pid(), later.pid()}, record); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || !strings.Contains(events[0].Detail, "rate 2.0") || !strings.Contains(events[1].Detail, "never goes back") {
		t.Fatalf("events at the end: %+v, want both processes, the first with its rate, the monotonic clock kept", events)
	}
	near(t, "after the end", p.wallSkew(), 0, 50*time.Millisecond)
	near(t, "the later one after the end", later.wallSkew(), 0, 50*time.Millisecond)
	// The monotonic clock kept its gain and runs at the true rate.
	zero := time.Now()
	a := p.readSpan(zero)
	time.Sleep(100 * time.Millisecond)
	b := p.readSpan(zero)
	if lo, hi, ok := rateWithin(b.mono-a.mono, a, b, 1, 0.1); !ok {
		t.Fatalf("the monotonic clock runs %.2f to %.2f times as fast after the end", lo, hi)
	}
	// A realtime-only fault ends with the vDSO as the kernel made it.
	q := startProbe(t, nil)
	var rt Node
	if err := rt.Set(nemesis.Skew{Offset: time.Minute, Clocks: nemesis.Realtime, Fault: "f"}, []int{q.pid()}, record); err != nil {
		t.Fatal(err)
	}
	if err := rt.Set(nemesis.Skew{Fault: "f"}, []int{q.pid()}, record); err != nil {
		t.Fatal(err)
	}
	assertPristine(t, q.pid())
	if rt.Active() {
		t.Fatal("a realtime fault's end leaves nothing in force")
	}
}
