package console

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
)

// TailLines is how many lines of a process's log LogTail shows.
const TailLines = 5

// LogTail says where a process's log is and, when it is not empty, shows
// its last lines, cut short and with control characters replaced, since a
// node or a server may write anything there. It is the tail of a start
// error: "; the end of its log, PATH:\n    | line\n    | line".
func LogTail(path string) string {
	tail, err := LastLines(path)
	switch {
	case err != nil:
		return fmt.Sprintf(" (log: %s)", path)
	case len(tail) == 0:
		return fmt.Sprintf(" (its log, %s, is empty)", path)
	}
	return fmt.Sprintf("; the end of its log, %s:\n    | %s", path, strings.Join(tail, "\n    | "))
}

// LastLines returns the last TailLines lines of a process's log that are
// not blank, each cut short and with control characters replaced (see
// Cut), from its last 8 KiB: nil for an empty log, an error when it
// cannot be read.
func LastLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const most = 8 << 10
	if st, err := f.Stat(); err == nil && st.Size() > most {
		_, _ = f.Seek(st.Size()-most, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, most))
	var tail []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			tail = append(tail, Cut(l, 300))
		}
	}
	if len(tail) > TailLines {
		tail = tail[len(tail)-TailLines:]
	}
	return tail, nil
}

// Cut returns b as text fit for a console: invalid UTF-8 and control
// characters replaced, cut to at most n runes.
func Cut(b []byte, n int) string {
	var sb strings.Builder
	count := 0
	for _, r := range strings.ToValidUTF8(string(b), "\uFFFD") {
		if count == n {
			sb.WriteString("…")
			break
		}
		if unicode.IsControl(r) || (!unicode.IsPrint(r) && r != ' ') {
			r = '\uFFFD'
		}
		sb.WriteRune(r)
		count++
	}
	return sb.String()
}
