package history

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// LineReader returns every line as written, skips the over-long ones with
// their length, and counts every byte it took, however the reads are cut.
func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	input := "a\n\nbc\n" + long + "\n" + strings.Repeat("y", 10) + "\nlast"
	type got struct {
		line string
		n    int
		long bool
	}
	want := []got{{"a", 2, false}, {"", 1, false}, {"bc", 3, false}, {"", 101, true}, {"yyyyyyyyyy", 11, false}, {"last", 4, false}}
	for name, r := range map[string]io.Reader{
		"whole":       strings.NewReader(input),
		"byte a time": iotest.OneByteReader(strings.NewReader(input)),
	} {
		t.Run(name, func(t *testing.T) {
			lr := NewLineReader(r, 10)
			var out []got
			total := 0
			for {
				line, n, long, err := lr.Next()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatal(err)
					}
					break
				}
				total += n
				out = append(out, got{string(line), n, long})
			}
			if len(out) != len(want) {
				t.Fatalf("got %+v, want %+v", out, want)
			}
			for i := range want {
				if out[i] != want[i] {
					t.Errorf("line %d: got %+v, want %+v", i, out[i], want[i])
				}
			}
			if total != len(input) {
				t.Errorf("took %d bytes, want %d", total, len(input))
			}
		})
	}
}

// A line longer than the reader's buffer but within max is kept whole.
func TestLineReaderLongerThanBuffer(t *testing.T) {
	big := bytes.Repeat([]byte("z"), 200<<10)
	lr := NewLineReader(bytes.NewReader(append(append([]byte(nil), big...), '\n')), 1<<20)
	line, n, long, err := lr.Next()
	if err != nil || long || n != len(big)+1 || !bytes.Equal(line, big) {
		t.Fatalf("got %d bytes (long %v, n %d, err %v), want the %d-byte line", len(line), long, n, err, len(big))
	}
}
