package history

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// LineReader reads newline-delimited lines: a node's output, or a history
// file. A line longer than max is not kept: it is read to its end and
// thrown away, and only its length is returned, so that whoever wrote it
// cannot make the reader hold more than max bytes of one line however
// much they write without a newline.
type LineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewLineReader reads lines of at most max bytes from r.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its newline (valid until the next
// call) and the number of bytes it took from the stream, newline
// included. For a line longer than max, line is nil and long is true. At
// the end of the stream a last line without a newline is returned as a
// line; after it, err is io.EOF (or the read error).
func (l *LineReader) Next() (line []byte, n int, long bool, err error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		n += len(chunk)
		if !long {
			if len(l.buf)+len(chunk) > l.max+1 { // +1: the newline
				long, l.buf = true, l.buf[:0]
			} else if len(l.buf) == 0 && err == nil {
				return chunk[:len(chunk)-1], n, false, nil // the whole line in the buffer
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if long {
				return nil, n, true, nil
			}
			return l.buf[:len(l.buf)-1], n, false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case n > 0:
			// The stream ended without a newline: what came is a last
			// line; the error comes at the next call.
			if long {
				return nil, n, true, nil
			}
			return l.buf, n, false, nil
		default:
			return nil, 0, false, err
		}
	}
}

// HasLine reports whether a whole line is already buffered: Next will
// return it without reading.
func (l *LineReader) HasLine() bool {
	b, _ := l.r.Peek(l.r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}
