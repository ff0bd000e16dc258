package bench

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestIntField(t *testing.T) {
	for _, c := range []struct {
		line, key string
		want      int64
		ok        bool
	}{
		{`{"src":"n1","dest":"n2","body":{"type":"ping","msg_id":42}}`, `"msg_id":`, 42, true},
		{`{"id":7,"src":"n2","dest":"n1","body":{"type":"echo","in_reply_to":0}}`, `"in_reply_to":`, 0, true},
		{`{"id":7,"src":"n2","dest":"n1","body":{"type":"echo","in_reply_to":123456789}}`, `"in_reply_to":`, 123456789, true},
		{`{"body":{"type":"hello"}}`, `"msg_id":`, 0, false},
		{`{"body":{"msg_id":"x"}}`, `"msg_id":`, 0, false},
		{`{"body":{"msg_id":-3}}`, `"msg_id":`, 0, false},
	} {
		got, ok := intField([]byte(c.line), c.key)
		if got != c.want || ok != c.ok {
			t.Errorf("intField(%s, %s) = %d, %v; want %d, %v", c.line, c.key, got, ok, c.want, c.ok)
		}
	}
}

func TestProbeConfigRoundTrip(t *testing.T) {
	for _, c := range []probeConfig{
		{Mode: Pipelined, Window: 64, Warmup: 100 * time.Millisecond, Time: 500 * time.Millisecond, Report: "/tmp/r"},
		{Mode: OneAtATime, Window: 1, Warmup: 0, Time: time.Second, Lossy: true, Report: "/tmp/r"},
		{Mode: Steady, Window: 1, Rate: 2500, Warmup: time.Millisecond, Time: time.Second, Lossy: true, Report: "/x y/r"},
	} {
		got, err := parseProbeConfig(c.args())
		if err != nil {
			t.Fatalf("parse %q: %v", c.args(), err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("args %q parsed as %+v, want %+v", c.args(), got, c)
		}
	}
}

func TestProbeConfigErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "fast", "--report", "r"}, "--mode"},
		{[]string{"--window", "0", "--report", "r"}, "--window"},
		{[]string{"--mode", "steady", "--report", "r"}, "--rate"},
		{[]string{"--time", "0s", "--report", "r"}, "--time"},
		{[]string{}, "--report"},
		{[]string{"--nope"}, "nope"},
		{[]string{"--report", "r", "extra"}, "extra"},
	} {
		_, err := parseProbeConfig(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parse %q: error %v, want one naming %s", c.args, err, c.want)
		}
	}
}

// A read that reaches its deadline loses nothing of a half-written line.
func TestLineReaderKeepsPartialLineAcrossDeadline(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	lr := newLineReader(r)
	if _, err := w.WriteString("first\nsec"); err != nil {
		t.Fatal(err)
	}
	blocked := 0
	line, err := lr.next(time.Now().Add(time.Second), func() { blocked++ })
	if err != nil || string(line) != "first" {
		t.Fatalf("got %q, %v; want first", line, err)
	}
	if _, err := lr.next(time.Now().Add(20*time.Millisecond), func() { blocked++ }); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read with half a line and a deadline returned %v, want a deadline error", err)
	}
	if _, err := w.WriteString("ond\n"); err != nil {
		t.Fatal(err)
	}
	line, err = lr.next(time.Time{}, nil)
	if err != nil || string(line) != "second" {
		t.Fatalf("got %q, %v; want second", line, err)
	}
	if blocked == 0 {
		t.Error("beforeBlock was never called before a read")
	}
}

func TestLineReaderGrowsAndBounds(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	long := strings.Repeat("x", 100<<10) + "\n"
	go func() {
		w.WriteString(long)
		w.Close()
	}()
	lr := newLineReader(r)
	if _, err := lr.next(time.Time{}, nil); !errors.Is(err, errLongLine) {
		t.Errorf("a line of 100 KiB: %v, want errLongLine", err)
	}
}

func TestRTOBacksOffAndResets(t *testing.T) {
	var r rto
	if got := r.timeout(); got != int64(100*time.Millisecond) {
		t.Errorf("before any round trip: %d, want 100ms", got)
	}
	r.observe(int64(time.Millisecond))
	if got := r.timeout(); got != minRTO {
		t.Errorf("after a 1ms round trip: %s, want the floor %s", time.Duration(got), time.Duration(minRTO))
	}
	r.observe(int64(40 * time.Millisecond))
	base := r.timeout()
	if base <= minRTO {
		t.Errorf("after a 40ms round trip the timeout stayed at %s", time.Duration(base))
	}
	r.backOff()
	r.backOff()
	if got := r.timeout(); got != 4*base {
		t.Errorf("after two back-offs: %s, want %s", time.Duration(got), time.Duration(4*base))
	}
	for range 2 * maxBackoff {
		r.backOff()
	}
	if got := r.timeout(); got != base<<maxBackoff {
		t.Errorf("back-off is not capped: %s", time.Duration(got))
	}
	r.observe(int64(40 * time.Millisecond))
	if got := r.timeout(); got >= 2*base {
		t.Errorf("an answer did not end the back-off: %s", time.Duration(got))
	}
}
