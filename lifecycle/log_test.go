package lifecycle

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// Before the run's zero a line is marked as the start's; after it, a line
// about an event carries the event's time on the history's clock, to the
// millisecond on the console (as the checks write times) and to the
// microsecond in harness.log; what a node may have put in a line is made
// printable on the console.
func TestLogStamps(t *testing.T) {
	var file, console strings.Builder
	l := NewLog(&file, &console)
	l.Progress("starting %d nodes", 3)
	l.Logf("n1: ignoring output before init_ok: %q", "x")
	took := l.SetZero(time.Now())
	if took < 0 {
		t.Errorf("the start took %s", took)
	}
	l.ProgressAt(1500421140, "nemesis: %s", "partition start")
	l.ProgressAt(12*time.Second+999600*time.Microsecond, "line\x1b[2Kforged")
	l.SetZero(time.Now().Add(-time.Hour))
	l.Logf("late")

	logLines := strings.Split(strings.TrimSuffix(file.String(), "\n"), "\n")
	wantLog := []string{"start+", "start+", "    1.500421s nemesis: partition start", "   12.999600s line\x1b[2Kforged", ""}
	if len(logLines) != len(wantLog) {
		t.Fatalf("harness.log has %d lines, want %d:\n%s", len(logLines), len(wantLog), file.String())
	}
	for i, want := range wantLog[:4] {
		if !strings.HasPrefix(logLines[i], want) {
			t.Errorf("harness.log line %d: %q, want it to start %q", i+1, logLines[i], want)
		}
	}
	f := strings.Fields(logLines[4])
	if secs, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "s"), 64); len(f) != 2 || f[1] != "late" || err != nil || secs < 3600 || len(f[0]) != len("3600.000000s") {
		t.Errorf("harness.log line 5: %q, want an hour and a bit since the zero", logLines[4])
	}
	wantConsole := "  [ start ] starting 3 nodes\n  [ 1.500s] nemesis: partition start\n  [13.000s] line\\x1b[2Kforged\n"
	if console.String() != wantConsole {
		t.Errorf("console:\n%q\nwant\n%q", console.String(), wantConsole)
	}
}

// A nil Log writes nothing, and the start it measured took nothing.
func TestNilLog(t *testing.T) {
	var l *Log
	l.Logf("x")
	l.Progress("x")
	l.ProgressAt(time.Second, "x")
	if took := l.SetZero(time.Now()); took != 0 {
		t.Errorf("a nil log's start took %s", took)
	}
}
