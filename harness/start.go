package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/coupharness/coup/internal/console"
)

// handshake is what an incarnation's reader saw before init_ok, so that a
// node that fails to start can be told why in one message.
type handshake struct {
	mu    sync.Mutex
	lines int    // lines read before an init_ok
	first string // the first of them, cut short
	// exit says how the process ended, once its output has ended; it is
	// set before the reader's done channel is closed.
	exit string
}

// note records a line that came before init_ok.
func (hs *handshake) note(line []byte) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.lines == 0 {
		hs.first = console.Cut(line, 200)
	}
	hs.lines++
}

// before says what the node wrote before it failed, or "" if nothing.
func (hs *handshake) before() string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.lines == 0 {
		return ""
	}
	return fmt.Sprintf("; of the %s it wrote on stdout none was an init_ok (the first: %s); see docs/protocol.md for the handshake", lines(hs.lines), hs.first)
}

// silent reports whether the node wrote nothing on stdout.
func (hs *handshake) silent() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.lines == 0
}

// startError is why a node could not be started: the program could not be
// run at all.
func startError(node string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s could not be started: %s: %w", node, pe.Path, pe.Err)
	}
	return fmt.Errorf("%s could not be started: %w", node, err)
}

// exitedError is why a node that exited before answering init failed: how
// it exited, and the end of its log, where the cause usually is.
func exitedError(node, log string, hs *handshake) error {
	hs.mu.Lock()
	exit := hs.exit
	hs.mu.Unlock()
	return fmt.Errorf("%s exited before answering init (%s)%s%s", node, exit, hs.before(), console.LogTail(log))
}

// silentError is why a node that did not answer init in time failed. A node
// that wrote nothing at all most often answered into a buffer it never
// flushed.
func silentError(node, log string, limit time.Duration, hs *handshake) error {
	if hs.silent() {
		return fmt.Errorf("%s did not answer init within %s and wrote nothing on stdout: if it did answer, its output may be buffered; flush stdout after every line (Python: print(..., flush=True); C: fflush(stdout); Java: System.out.flush()), or raise init_timeout if it is only slow to start%s",
			node, limit, console.LogTail(log))
	}
	return fmt.Errorf("%s did not answer init within %s%s%s", node, limit, hs.before(), console.LogTail(log))
}

// lines returns "1 line", "2 lines".
func lines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

// nameList lists node names for a sentence: "n2", "n2 and n3", "n2, n3 and
// n4"; beyond five the rest are counted.
func nameList(names []string) string {
	if len(names) > 5 {
		names = append(names[:4:4], fmt.Sprintf("%d others", len(names)-4))
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
