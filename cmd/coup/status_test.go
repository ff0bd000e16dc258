package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/verdict/catalogue"
)

// On a terminal the progress line stays below what is printed: cleared
// before each write, drawn again after each complete line, gone at the
// end. Off a terminal, writes pass through untouched.
func TestStatusLine(t *testing.T) {
	var b bytes.Buffer
	n := 0
	s := newStatus(&b, true, func() string { n++; return "[1/2] line" })
	s.printf("first\n")
	s.printf("partial")
	s.printf(" rest\n")
	s.close()
	got := b.String()
	want := "first\n[1/2] line\r\x1b[Kpartial rest\n[1/2] line\r\x1b[K"
	if !strings.HasSuffix(got, want) || strings.Count(got, "[1/2] line") != strings.Count(got, "\r\x1b[K") {
		t.Errorf("terminal output %q, want it to end %q with every line drawn cleared", got, want)
	}

	b.Reset()
	s = newStatus(&b, false, func() string { t.Error("the line was made off a terminal"); return "" })
	s.printf("first\n")
	s.set(func() {})
	s.close()
	if b.String() != "first\n" {
		t.Errorf("off a terminal: %q, want only the lines", b.String())
	}
}

func TestStatusLineText(t *testing.T) {
	plan := []catalogue.Run{catalogue.Planned("a", "a.toml", 1, 1), catalogue.Planned("b", "b.toml", 1, 1), catalogue.Planned("c", "c.toml", 1, 1)}
	cat := catalogue.New(time.Now(), plan)
	r := plan[0]
	r.Outcome, r.ExitCode = "unexpected", 1
	cat.Record(0, r, time.Now())
	got := statusLine(cat, "bully\x1b[2K")
	if !strings.HasPrefix(got, "[1/3] 0 as expected, 1 unexpected · ") || !strings.HasSuffix(got, `running bully\x1b[2K`) {
		t.Errorf("status line %q", got)
	}
	long := statusLine(cat, strings.Repeat("x", 200))
	if n := len([]rune(long)); n > 79 {
		t.Errorf("status line of %d characters, want at most 79", n)
	}
}

// The harness's progress lines are made printable, keeping their line
// break.
func TestPrintableLines(t *testing.T) {
	var b bytes.Buffer
	p := printableLines{&b}
	p.Write([]byte("  [ 0.1s] node n1 wrote \x1b[2K\rx: valid=true\n"))
	if got, want := b.String(), "  [ 0.1s] node n1 wrote \\x1b[2K\\rx: valid=true\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
