package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Error is a bad scenario: the file, where in it, the field and what is
// wrong. Line and Col are 0 when the problem has no place (the file cannot
// be read).
type Error struct {
	File  string
	Line  int
	Col   int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads, decodes and validates a scenario file.
func Load(path string) (*Scenario, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read: %v", errors.Unwrap(err))}
	}
	return Parse(path, string(src))
}

// Parse decodes and validates a scenario from its text; path is used for
// errors and the default name.
func Parse(path, src string) (*Scenario, error) {
	s := &Scenario{File: path, loc: newLocator(src)}
	md, err := toml.Decode(src, s)
	if err != nil {
		return nil, s.decodeError(err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		key := s.indexed(undecoded[0])
		return nil, s.errorf(key, "unknown key (see docs/scenarios.md for the keys a scenario may have)")
	}
	if !md.IsDefined("seed") {
		s.Seed = 1
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

var lastKeyRE = regexp.MustCompile(`line (\d+) \(last key "([^"]*)"\): (.*)$`)

// decodeError turns BurntSushi's errors into an *Error with a position.
func (s *Scenario) decodeError(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &Error{File: s.File, Line: pe.Position.Line, Col: pe.Position.Col, Field: pe.LastKey, Msg: pe.Message}
	}
	msg := strings.TrimPrefix(err.Error(), "toml: ")
	if m := lastKeyRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		e := &Error{File: s.File, Line: line, Col: 1, Field: m[2], Msg: m[3]}
		if pos, ok := s.loc.find(m[2]); ok && !strings.Contains(m[2], ".") {
			e.Line, e.Col = pos.Line, pos.Col
		}
		return e
	}
	return &Error{File: s.File, Msg: msg}
}

// indexed finds the written path of an undecoded key, adding the index of
// the array-of-tables entry it is in ("faults.tagret" -> "faults[1].tagret").
func (s *Scenario) indexed(k toml.Key) string {
	plain := strings.Join(k, ".")
	if _, ok := s.loc.keys[plain]; ok {
		return plain
	}
	for i := 1; i < len(k); i++ {
		head, tail := strings.Join(k[:i], "."), strings.Join(k[i:], ".")
		for n := 0; ; n++ {
			entry := head + "[" + strconv.Itoa(n) + "]"
			if _, ok := s.loc.keys[entry]; !ok {
				break
			}
			if _, ok := s.loc.keys[entry+"."+tail]; ok {
				return entry + "." + tail
			}
		}
	}
	return plain
}

// errorf makes an *Error for the field at path, positioned where the field
// (or its closest written parent) is in the file.
func (s *Scenario) errorf(path, format string, args ...any) *Error {
	e := &Error{File: s.File, Field: path, Msg: fmt.Sprintf(format, args...)}
	if pos, ok := s.loc.find(path); ok {
		e.Line, e.Col = pos.Line, pos.Col
	} else {
		e.Line, e.Col = 1, 1
	}
	return e
}
