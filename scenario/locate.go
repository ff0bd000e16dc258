package scenario

import (
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// position is a place in a scenario file, 1-based.
type position struct{ Line, Col int }

// locator finds where a key path such as "faults[1].target" or
// "network.latency" is written in a TOML file. BurntSushi/toml reports
// positions for syntax errors only, so coup finds keys itself: it walks the
// lines, follows [table] and [[array]] headers (counting array entries),
// and matches "key = value" lines, skipping the insides of multi-line
// strings and arrays. Inline tables are matched by key name on their line.
type locator struct {
	keys  map[string]position // full path -> position of the key
	lines []string            // the file's lines, for the column of a value
}

func newLocator(src string) *locator {
	lines := strings.Split(src, "\n")
	l := &locator{keys: map[string]position{}, lines: lines}
	arrays := map[string]int{} // array-of-tables path -> entries so far
	table := ""                // current table path, with indices
	var inString string        // the open multi-line string delimiter, if any
	depth := 0                 // open brackets of a multi-line value
	for i, raw := range lines {
		line := raw
		if inString != "" {
			if idx := strings.Index(line, inString); idx >= 0 {
				line = line[idx+3:]
				inString = ""
			} else {
				continue
			}
			if depth == 0 {
				continue
			}
		}
		if depth > 0 {
			depth, inString = scanValue(line, depth)
			continue
		}
		trimmed := strings.TrimLeft(line, " \t")
		col := len(line) - len(trimmed) + 1
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		if strings.HasPrefix(trimmed, "[[") {
			name := headerName(trimmed[2:], "]]")
			n := arrays[name]
			arrays[name] = n + 1
			table = name + "[" + strconv.Itoa(n) + "]"
			l.add(table, i+1, col)
			l.add(name, i+1, col)
			continue
		}
		if trimmed[0] == '[' {
			table = headerName(trimmed[1:], "]")
			l.add(table, i+1, col)
			continue
		}
		key, rest, ok := splitKey(trimmed)
		if !ok {
			continue
		}
		path := key
		if table != "" {
			path = table + "." + key
		}
		l.add(path, i+1, col)
		// Keys of an inline table on the same line.
		if strings.HasPrefix(strings.TrimSpace(rest), "{") {
			l.inline(path, rest, i+1, col+len(trimmed)-len(rest))
		}
		depth, inString = scanValue(rest, 0)
	}
	return l
}

func (l *locator) add(path string, line, col int) {
	if _, ok := l.keys[path]; !ok {
		l.keys[path] = position{line, col}
	}
}

// inline records the keys of an inline table written on one line.
func (l *locator) inline(path, rest string, line, col int) {
	body := rest
	for {
		i := strings.IndexAny(body, "{,")
		if i < 0 {
			return
		}
		body = body[i+1:]
		t := strings.TrimLeft(body, " \t")
		key, after, ok := splitKey(t)
		if !ok {
			continue
		}
		l.add(path+"."+key, line, col+len(rest)-len(t))
		body = after
	}
}

// find returns the position of path, or of its closest written ancestor
// ("faults[1].at" falls back to "faults[1]", then "faults").
func (l *locator) find(path string) (position, bool) {
	for p := path; p != ""; p = parent(p) {
		if pos, ok := l.keys[p]; ok {
			return pos, true
		}
	}
	return position{}, false
}

func parent(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

func headerName(s, close string) string {
	if i := strings.Index(s, close); i >= 0 {
		s = s[:i]
	}
	return toml.Key(splitDotted(s)).String()
}

// splitKey splits `key = value` (the key possibly dotted or quoted) and
// returns the normalised key and the text after '='.
func splitKey(s string) (key, rest string, ok bool) {
	eq := -1
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '=':
			eq = i
		}
		if eq >= 0 {
			break
		}
	}
	if eq <= 0 {
		return "", "", false
	}
	key = strings.TrimSpace(s[:eq])
	if key == "" {
		return "", "", false
	}
	return toml.Key(splitDotted(key)).String(), s[eq+1:], true
}

// splitDotted splits a dotted key into its parts, unquoted: the dots
// inside a quoted part are its own (`"zoo.cfg"` is one part).
func splitDotted(s string) []string {
	var parts []string
	start := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '"' && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			parts = append(parts, unquote(strings.TrimSpace(s[start:i])))
			start = i + 1
		}
	}
	return append(parts, unquote(strings.TrimSpace(s[start:])))
}

// unquote reads a quoted key part: a basic string with its escapes, or a
// literal string as it is.
func unquote(s string) string {
	if len(s) < 2 || s[len(s)-1] != s[0] {
		return s
	}
	switch s[0] {
	case '\'':
		return s[1 : len(s)-1]
	case '"':
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		return s[1 : len(s)-1]
	}
	return s
}

// scanValue follows brackets and strings through a piece of a value and
// returns the bracket depth still open and the multi-line string delimiter
// left open, if any.
func scanValue(s string, depth int) (int, string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '#':
			return depth, ""
		case '[', '{':
			depth++
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '"', '\'':
			delim := strings.Repeat(string(c), 3)
			if strings.HasPrefix(s[i:], delim) {
				end := strings.Index(s[i+3:], delim)
				if end < 0 {
					return depth, delim
				}
				i += 3 + end + 2
				continue
			}
			for j := i + 1; j < len(s); j++ {
				if c == '"' && s[j] == '\\' {
					j++
					continue
				}
				if s[j] == c {
					i = j
					break
				}
			}
		}
	}
	return depth, ""
}
