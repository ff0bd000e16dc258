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
// (an empty one included) is an error.
func Read(r io.Reader) (*History, error) {
	// Two stages, so that both cores work: this goroutine reads and
	// decodes lines into batches, another adds them to the history.
	h := &History{compact: true}
	batches, free := make(chan *readBatch, 4), make(chan *readBatch, 4)
	for range cap(free) {
		free <- &readBatch{}
	}
	added := make(chan struct{})
	go func() {
		defer close(added)
		for batch := range batches {
			for i := range batch.items {
				if it := &batch.items[i]; it.bad != nil {
					h.Bad = append(h.Bad, *it.bad)
				} else {
					h.Add(it.e)
				}
			}
			free <- batch
		}
	}()
	err := decodeLines(r, batches, free)
	close(batches)
	<-added
	if err != nil {
		return nil, err
	}
	first, ok := h.first()
	switch {
	case !ok && len(h.Bad) == 0:
		// coup records the meta event before anything else, whether the
		// run starts or not: only a run killed at once leaves nothing.
		return nil, fmt.Errorf("an empty history: not even its meta event was recorded (was coup killed as the run began?)")
	case !ok || first.Kind != KindMeta:
		return nil, fmt.Errorf("not a coup history: the first line is not a meta event")
	}
	return h, nil
}

// readBatch is a run of decoded lines: each an event, or a bad line.
type readBatch struct {
	items []readItem
}

type readItem struct {
	e   Event
	bad *BadLine
}

const readBatchSize = 1024

// decodeLines reads and decodes r's lines into batches taken from free.
func decodeLines(r io.Reader, batches, free chan *readBatch) error {
	lines := NewLineReader(r, MaxLine)
	var dec decoder
	batch := <-free
	batch.items = batch.items[:0]
	// next returns the next item of the batch, handing a full batch on
	// first; it is decoded in place.
	next := func() *readItem {
		if len(batch.items) == readBatchSize {
			batches <- batch
			batch = <-free
			batch.items = batch.items[:0]
		}
		batch.items = append(batch.items, readItem{})
		return &batch.items[len(batch.items)-1]
	}
	line := 0
	for {
		b, n, long, err := lines.Next()
		if err != nil {
			if len(batch.items) > 0 {
				batches <- batch
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read history: %w", err)
		}
		line++
		if long {
			*next() = readItem{bad: &BadLine{Line: line, Err: fmt.Sprintf("line of %d bytes, longer than the %d a history line may have", n, MaxLine)}}
			continue
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		it := next()
		if err := dec.event(b, &it.e); err != nil {
			*it = readItem{bad: &BadLine{Line: line, Err: err.Error()}}
		} else if t := it.e.Time; t < 0 || t > MaxTime {
			*it = readItem{bad: &BadLine{Line: line, Err: fmt.Sprintf("time %d is outside [0, %d], the times a run can have", t, int64(MaxTime))}}
		}
	}
}
