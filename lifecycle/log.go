package lifecycle

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/coupharness/coup/internal/console"
)

// Log is a real-clock driver's harness.log and its lines on coup run's
// console, on the history's clock: a line written once the run's zero is
// set is stamped with the time since the zero, the time the history, the
// checks and the report give the same moment, so that a fault the console
// shows at 1.501s is the nemesis event at 1.501s in history.jsonl. A line
// written before the zero, while the nodes start, has no time on that
// clock yet: in harness.log it is stamped start+ the time since the log
// began, on the console "[ start ]". The simulator's log is stamped with
// its virtual time, the history's too, and needs none of this.
//
// It is safe for concurrent use: the zero is set under its lock, while a
// node's reader may be logging what the node wrote before init. A nil
// Log writes nothing.
type Log struct {
	mu      sync.Mutex
	file    io.Writer // harness.log (nil: none)
	console io.Writer // the console (nil: none)
	begin   time.Time // when the log began: the driver's start
	zero    time.Time // the run's zero; zero until set
}

// NewLog returns a log that writes to file (harness.log) and, for
// progress lines, to the console; either may be nil. Its start+ times
// count from now.
func NewLog(file, console io.Writer) *Log {
	return &Log{file: file, console: console, begin: time.Now()}
}

// NewLog returns the log of a run over its files: harness.log when there
// is a store, and the console (nil: none).
func (f *Files) NewLog(console io.Writer) *Log {
	if f.Log == nil {
		return NewLog(nil, console)
	}
	return NewLog(f.Log, console)
}

// SetZero marks the run's zero, the origin of the history's times: lines
// written from now on are stamped with the time since zero. It returns
// how long the start took, from NewLog to zero.
func (l *Log) SetZero(zero time.Time) time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.zero = zero
	return zero.Sub(l.begin)
}

// Logf writes a line to harness.log, stamped now.
func (l *Log) Logf(format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.write(l.now(), format, args)
}

// Progress writes a line to harness.log and the console, stamped now.
func (l *Log) Progress(format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	at := l.now()
	l.write(at, format, args)
	l.show(at, format, args)
}

// ProgressAt writes a line to harness.log and the console, stamped at,
// a time on the history's clock: the time of the event the line is
// about, as recorded (lifecycle.Driver's Progress).
func (l *Log) ProgressAt(at time.Duration, format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := stamp{at: at, set: !l.zero.IsZero()}
	if !s.set {
		s.at = time.Since(l.begin)
	}
	l.write(s, format, args)
	l.show(s, format, args)
}

// stamp is a line's time: on the history's clock once the zero is set,
// else since the log began.
type stamp struct {
	at  time.Duration
	set bool // the zero is set: at is on the history's clock
}

func (l *Log) now() stamp {
	if l.zero.IsZero() {
		return stamp{at: time.Since(l.begin)}
	}
	return stamp{at: time.Since(l.zero), set: true}
}

func (l *Log) write(s stamp, format string, args []any) {
	if l.file == nil {
		return
	}
	fmt.Fprintf(l.file, "%s %s\n", s.log(), fmt.Sprintf(format, args...))
}

// show writes the line to the console in one write, made printable: a
// line may quote what a node wrote.
func (l *Log) show(s stamp, format string, args []any) {
	if l.console == nil {
		return
	}
	_, _ = io.WriteString(l.console, "  "+s.console()+" "+console.Printable(fmt.Sprintf(format, args...))+"\n")
}

// log is the stamp as harness.log writes it: seconds to the microsecond,
// as the simulator's log does, or start+ before the zero.
func (s stamp) log() string {
	if !s.set {
		return fmt.Sprintf("start+%.6fs", float64(s.at)/1e9)
	}
	return fmt.Sprintf("%12.6fs", float64(s.at)/1e9)
}

// console is the stamp on the console: seconds to the millisecond,
// rounded as the checks' explanations round a history time, or
// "[ start ]" before the zero.
func (s stamp) console() string {
	if !s.set {
		return "[ start ]"
	}
	return fmt.Sprintf("[%6.3fs]", float64(s.at)/1e9)
}
