package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadFile reads a history file.
func ReadFile(path string) (*History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// MaxLine is the longest history line Read parses; a longer one is
// skipped, like an unparsable one. A coup recorder bounds what a node can
// put into one event far below it.
const MaxLine = 16 << 20

// Read reads a history from r. Lines that do not parse, or are longer than
// MaxLine, are recorded in Bad and skipped; a history without a meta event
// is an error.
func Read(r io.Reader) (*History, error) {
	h := &History{compact: true}
	lines := NewLineReader(r, MaxLine)
	var dec decoder
	line := 0
	for {
		b, n, long, err := lines.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("read history: %w", err)
		}
		line++
		if long {
			h.Bad = append(h.Bad, BadLine{Line: line, Err: fmt.Sprintf("line of %d bytes, longer than the %d a history line may have", n, MaxLine)})
			continue
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		var e Event
		if err := dec.event(b, &e); err != nil {
			h.Bad = append(h.Bad, BadLine{Line: line, Err: err.Error()})
			continue
		}
		if e.Time < 0 || e.Time > MaxTime {
			h.Bad = append(h.Bad, BadLine{Line: line, Err: fmt.Sprintf("time %d is outside [0, %d], the times a run can have", e.Time, int64(MaxTime))})
			continue
		}
		h.Add(e)
	}
	if first, ok := h.first(); !ok || first.Kind != KindMeta {
		return nil, fmt.Errorf("not a coup history: the first line is not a meta event")
	}
	return h, nil
}
