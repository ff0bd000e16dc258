package console

import (
	"bytes"
	"strings"
	"testing"
)

// On a terminal the progress line stays below what is printed: cleared
// before each write, drawn again after each complete line, gone at the
// end. Off a terminal, writes pass through untouched.
func TestStatusLine(t *testing.T) {
	var b bytes.Buffer
	n := 0
	s := NewStatus(&b, true, func() string { n++; return "[1/2] line" })
	s.Printf("first\n")
	s.Printf("partial")
	s.Printf(" rest\n")
	s.Close()
	got := b.String()
	want := "first\n[1/2] line\r\x1b[Kpartial rest\n[1/2] line\r\x1b[K"
	if !strings.HasSuffix(got, want) || strings.Count(got, "[1/2] line") != strings.Count(got, "\r\x1b[K") {
		t.Errorf("terminal output %q, want it to end %q with every line drawn cleared", got, want)
	}

	b.Reset()
	s = NewStatus(&b, false, func() string { t.Error("the line was made off a terminal"); return "" })
	s.Printf("first\n")
	s.Set(func() {})
	s.Close()
	if b.String() != "first\n" {
		t.Errorf("off a terminal: %q, want only the lines", b.String())
	}
}

// The harness's progress lines are made printable, keeping their line
// break.
func TestPrintableLines(t *testing.T) {
	var b bytes.Buffer
	p := PrintableWriter{&b}
	p.Write([]byte("  [ 0.1s] node n1 wrote \x1b[2K\rx: valid=true\n"))
	if got, want := b.String(), "  [ 0.1s] node n1 wrote \\x1b[2K\\rx: valid=true\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
