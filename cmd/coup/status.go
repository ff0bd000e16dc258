package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/coupharness/coup/internal/console"

	"github.com/mattn/go-isatty"
)

// isTerminal reports whether f is a terminal that can redraw a line: not
// a pipe, a file or /dev/null (as in CI logs), nor TERM=dumb.
func isTerminal(f *os.File) bool {
	return os.Getenv("TERM") != "dumb" && isatty.IsTerminal(f.Fd())
}

// status is a catalogue run's overall progress line on a terminal
// ("[3/32] 2 as expected, 1 unexpected · 41s · running bully-…"), kept
// below everything else printed: every write through it clears the line,
// writes, and draws the line again. Off a terminal it only passes writes
// through, so CI logs get the lines and no redrawing.
type status struct {
	mu    sync.Mutex
	out   io.Writer
	on    bool
	drawn bool
	text  func() string // the line, made when drawn
	stop  chan struct{}
	done  chan struct{}
}

// newStatus writes to out; the line is drawn only when on. While it is on,
// it is redrawn every second, so that the time it shows moves.
func newStatus(out io.Writer, on bool, text func() string) *status {
	s := &status{out: out, on: on, text: text, stop: make(chan struct{}), done: make(chan struct{})}
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
func (s *status) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	n, err := s.out.Write(p)
	if bytes.HasSuffix(p, []byte("\n")) {
		s.draw()
	}
	return n, err
}

// printf writes a formatted line above the status line.
func (s *status) printf(format string, args ...any) { fmt.Fprintf(s, format, args...) }

// set runs f, which changes what the line shows, and redraws the line.
// The line's text is made under the same lock, so f may change what it
// reads.
func (s *status) set(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	s.clear()
	s.draw()
}

// close clears the line for good.
func (s *status) close() {
	if s.on {
		close(s.stop)
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	s.on = false
}

func (s *status) clear() {
	if s.drawn {
		fmt.Fprint(s.out, "\r\033[K")
		s.drawn = false
	}
}

func (s *status) draw() {
	if s.on {
		fmt.Fprint(s.out, s.text())
		s.drawn = true
	}
}

// printableLines passes each write through console.Printable, keeping a
// final line break: the harness's progress lines may quote what a node
// wrote, and must not move the cursor or forge a line.
type printableLines struct{ w io.Writer }

func (p printableLines) Write(b []byte) (int, error) {
	line, nl := bytes.CutSuffix(b, []byte("\n"))
	out := console.Printable(string(line))
	if nl {
		out += "\n"
	}
	if _, err := io.WriteString(p.w, out); err != nil {
		return 0, err
	}
	return len(b), nil
}
