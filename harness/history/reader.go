package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// History is a history read back, with the meta event split out.
type History struct {
	Meta   Meta
	Events []Event
	// Bad lists the lines that could not be parsed (for example the last,
	// half-written line of a killed run). They are skipped, not fatal.
	Bad []BadLine
	// Ended is true when the history has an end event: the run finished.
	Ended bool
}

// BadLine is a history line that could not be parsed.
type BadLine struct {
	Line int    `json:"line"`
	Err  string `json:"error"`
}

// End returns the time of the last event.
func (h *History) End() int64 {
	if len(h.Events) == 0 {
		return 0
	}
	return h.Events[len(h.Events)-1].Time
}

// FromEvents builds a History from recorded events (the first must be meta).
func FromEvents(events []Event) (*History, error) {
	h := &History{}
	for i := range events {
		h.add(events[i])
	}
	if h.Meta.Algorithm == "" && h.Meta.Scenario == "" {
		return nil, fmt.Errorf("history has no meta event")
	}
	return h, nil
}

// MaxTime is the latest time, in nanoseconds since a run began, that a
// history may hold (about 146 years): an event after it is not read, and a
// bound beyond it is taken as MaxTime, so that a time plus a bound never
// overflows.
const MaxTime = 1 << 62

func (h *History) add(e Event) {
	switch e.Kind {
	case KindMeta:
		if e.Meta != nil {
			h.Meta = *e.Meta
			h.Meta.saturate()
		}
	case KindEnd:
		h.Ended = true
	}
	h.Events = append(h.Events, e)
}

// saturate keeps every time and bound of the meta event in [0, MaxTime].
func (m *Meta) saturate() {
	for _, t := range []*int64{&m.Termination, &m.GST, &m.Stabilisation, &m.Progress} {
		*t = min(max(*t, 0), MaxTime)
	}
}

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
	h := &History{}
	lines := NewLineReader(r, MaxLine)
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
		if err := json.Unmarshal(b, &e); err != nil {
			h.Bad = append(h.Bad, BadLine{Line: line, Err: err.Error()})
			continue
		}
		if e.Time < 0 || e.Time > MaxTime {
			h.Bad = append(h.Bad, BadLine{Line: line, Err: fmt.Sprintf("time %d is outside [0, %d], the times a run can have", e.Time, int64(MaxTime))})
			continue
		}
		h.add(e)
	}
	if len(h.Events) == 0 || h.Events[0].Kind != KindMeta {
		return nil, fmt.Errorf("not a coup history: the first line is not a meta event")
	}
	return h, nil
}
