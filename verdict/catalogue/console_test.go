package catalogue

import (
	"strings"
	"testing"
	"time"
)

func TestStatusLineText(t *testing.T) {
	plan := []Run{Planned("a", "a.toml", 1, 1), Planned("b", "b.toml", 1, 1), Planned("c", "c.toml", 1, 1)}
	cat := New(time.Now(), plan)
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
