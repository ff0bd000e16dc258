package console

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"
)

// Status is a long command's overall progress line on a terminal
// ("[3/32] 2 as expected, 1 unexpected · 41s · running bully-…"), kept
// below everything else printed: every write through it clears the line,
// writes, and draws the line again. Off a terminal it only passes writes
// through, so CI logs get the lines and no redrawing.
type Status struct {
	mu    sync.Mutex
	out   io.Writer
	on    bool
	drawn bool
	text  func() string // the line, made when drawn
	stop  chan struct{}
	done  chan struct{}
}

// NewStatus writes to out; the line is drawn only when on. While it is on,
// it is redrawn every second, so that the time it shows moves.
func NewStatus(out io.Writer, on bool, text func() string) *Status {
	s := &Status{out: out, on: on, text: text, stop: make(chan struct{}), done: make(chan struct{})}
	if !on {
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				s.mu.Lock()
				s.clear()
				s.draw()
				s.mu.Unlock()
			}
		}
	}()
	return s
}

// Write writes p above the status line.
func (s *Status) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	n, err := s.out.Write(p)
	if bytes.HasSuffix(p, []byte("\n")) {
		s.draw()
	}
	return n, err
}

// Printf writes a formatted line above the status line.
func (s *Status) Printf(format string, args ...any) { fmt.Fprintf(s, format, args...) }

// Set runs f, which changes what the line shows, and redraws the line.
// The line's text is made under the same lock, so f may change what it
// reads.
func (s *Status) Set(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	s.clear()
	s.draw()
}

// Close clears the line for good.
func (s *Status) Close() {
	if s.on {
		close(s.stop)
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	s.on = false
}

func (s *Status) clear() {
	if s.drawn {
		fmt.Fprint(s.out, "\r\033[K")
		s.drawn = false
	}
}

func (s *Status) draw() {
	if s.on {
		fmt.Fprint(s.out, s.text())
		s.drawn = true
	}
}

// PrintableWriter passes each write through Printable, keeping a
// final line break: the harness's progress lines may quote what a node
// wrote, and must not move the cursor or forge a line.
type PrintableWriter struct{ W io.Writer }

func (p PrintableWriter) Write(b []byte) (int, error) {
	line, nl := bytes.CutSuffix(b, []byte("\n"))
	out := Printable(string(line))
	if nl {
		out += "\n"
	}
	if _, err := io.WriteString(p.W, out); err != nil {
		return 0, err
	}
	return len(b), nil
}
