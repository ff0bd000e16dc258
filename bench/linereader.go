package bench

import (
	"bytes"
	"errors"
	"io"
	"os"
	"time"
)

// maxProbeLine bounds a line the probe reads; its own lines are under 100
// bytes, and the harness's init is small.
const maxProbeLine = 1 << 16

// errLongLine is a line longer than maxProbeLine.
var errLongLine = errors.New("line too long")

// lineReader reads lines from a pipe without a bufio.Reader, so that a
// read that times out loses nothing (bufio hands back and drops a partial
// line on error), and so that the caller can flush its writes just before
// the reader would block.
type lineReader struct {
	f    *os.File
	buf  []byte
	r, w int
	// deadline is the read deadline in force on f (zero: none).
	deadline time.Time
}

func newLineReader(f *os.File) *lineReader {
	return &lineReader{f: f, buf: make([]byte, 64<<10)}
}

// next returns the next line, without its newline; the slice is valid
// until the following call. Before it blocks on the pipe it calls
// beforeBlock (when not nil). With a non-zero deadline, a read that
// reaches it returns os.ErrDeadlineExceeded, and the data read so far
// stays for the next call; f must then be pollable (see pollableStdin).
func (l *lineReader) next(deadline time.Time, beforeBlock func()) ([]byte, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.r:l.w], '\n'); i >= 0 {
			line := l.buf[l.r : l.r+i]
			l.r += i + 1
			return line, nil
		}
		if l.r > 0 {
			l.w = copy(l.buf, l.buf[l.r:l.w])
			l.r = 0
		}
		if l.w == len(l.buf) {
			if len(l.buf) >= maxProbeLine {
				return nil, errLongLine
			}
			l.buf = append(l.buf, make([]byte, len(l.buf))...)
		}
		if beforeBlock != nil {
			beforeBlock()
		}
		if !deadline.Equal(l.deadline) {
			if err := l.f.SetReadDeadline(deadline); err != nil {
				return nil, err
			}
			l.deadline = deadline
		}
		n, err := l.f.Read(l.buf[l.w:])
		l.w += n
		if n == 0 && err == nil {
			err = io.ErrNoProgress
		}
		if err != nil && n == 0 {
			return nil, err
		}
	}
}
