package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A log may hold anything: the tail shown on the console is its last few
// lines, with control characters and invalid bytes replaced and long
// lines cut.
func TestLogTailIsSafe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n1.log")
	var b strings.Builder
	for i := range 20 {
		b.WriteString("line ")
		b.WriteByte(byte('a' + i))
		b.WriteString("\n")
	}
	b.WriteString("\x1b[2Jclear screen \xff\xfe bad bytes\r\n")
	b.WriteString(strings.Repeat("x", 1000) + "\n\n\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := LogTail(path)
	if strings.Contains(got, "\x1b") || strings.Contains(got, "\r") || strings.Contains(got, "\xff") {
		t.Errorf("the tail keeps control characters or bad bytes: %q", got)
	}
	if n := strings.Count(got, "\n    | "); n != TailLines {
		t.Errorf("%d lines shown, want %d: %q", n, TailLines, got)
	}
	if !strings.Contains(got, "line r") || strings.Contains(got, "line q") || !strings.Contains(got, "x…") {
		t.Errorf("want the last lines, the long one cut: %q", got)
	}
	empty := filepath.Join(t.TempDir(), "n2.log")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := LogTail(empty); !strings.Contains(got, "is empty") {
		t.Errorf("an empty log: %q", got)
	}
	if got := LogTail(filepath.Join(t.TempDir(), "none.log")); !strings.Contains(got, "none.log") {
		t.Errorf("a log that is not there: %q", got)
	}
}
