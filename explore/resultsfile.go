package explore

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// readResults reads a results file of JSON lines, as sweeps and
// campaigns write them: a header of kind header on the first line, body
// lines, and an end line (kind "end") after which nothing may come. Each
// line goes to take with its kind; what take refuses, like a line that is
// not what its place requires, is an error naming the file and the line.
// A last line cut short (a shard killed while writing) is ignored. what
// names the command whose --out file it is, for the first line's error;
// maxLine bounds a line's length.
func readResults(path, header, what string, maxLine int, take func(kind string, b []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadResults, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	line := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrBadResults, path, line, fmt.Sprintf(format, args...))
	}
	var pending error
	ended := false
	for sc.Scan() {
		line++
		if pending != nil {
			return pending // a bad line that was not the last
		}
		b := sc.Bytes()
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(b, &kind); err != nil {
			pending = bad("not a JSON object: %v", err)
			continue
		}
		switch {
		case line == 1 && kind.Kind != header:
			return bad("the first line is no %s header (kind %q): not a results file of %s", header, kind.Kind, what)
		case kind.Kind == header && line != 1:
			return bad("a second header")
		case ended:
			return bad("a line after the end line")
		}
		ended = kind.Kind == "end"
		if err := take(kind.Kind, b); err != nil {
			return bad("%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadResults, path, err)
	}
	if line == 0 {
		return fmt.Errorf("%w: %s: empty", ErrBadResults, path)
	}
	return nil
}
