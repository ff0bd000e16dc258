package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Error is a bad scenario: the file, where in it, the field and what is
// wrong. Line and Col are 0 when the problem has no place (the file cannot
// be read, or the value came from the command line).
type Error struct {
	File  string
	Line  int
	Col   int
	Field string
	Msg   string
	// Flag is set when the bad value came from the command line: the
	// override as written ("--set nodes=0").
	Flag string
}

func (e *Error) Error() string {
	if e.Flag != "" {
		return fmt.Sprintf("%s: %s (scenario %s)", e.Flag, e.Msg, e.File)
	}
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

// Load reads, decodes and validates a scenario file, with the overrides
// of the command line applied over the file's keys, in order.
func Load(path string, sets ...Override) (*Scenario, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read: %v", errors.Unwrap(err))}
	}
	return Parse(path, string(src), sets...)
}

// Parse decodes and validates a scenario from its text, with the
// overrides applied over the file's keys, in order; path is used for
// errors and the default name.
func Parse(path, src string, sets ...Override) (*Scenario, error) {
	return parse(path, src, false, sets)
}

// parse is Parse, for a scenario of a built-in algorithm or a command, or
// (machine) of a machine of the caller's own (ParseMachine).
func parse(path, src string, machine bool, sets []Override) (*Scenario, error) {
	s := &Scenario{File: path, loc: newLocator(src), machine: machine}
	md, err := toml.Decode(src, s)
	if err != nil {
		return nil, s.decodeError(err, src)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		key := s.indexed(undecoded[0])
		msg := "unknown key"
		if sug := suggestKey(strings.Join(undecoded[0], ".")); sug != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", indexedSuggestion(key, sug))
		}
		return nil, s.errorf(key, "%s; docs/scenarios.md lists the keys a scenario may have", msg)
	}
	seedSet := md.IsDefined("seed")
	for i := range sets {
		if sets[i].parts == nil {
			return nil, fmt.Errorf("%s: not made by ParseSet or NewOverride", sets[i].Flag)
		}
		if err := s.apply(&sets[i]); err != nil {
			return nil, err
		}
		s.sets = append(s.sets, sets[i])
		seedSet = seedSet || sets[i].Key == "seed"
	}
	if !seedSet {
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

// decodeError turns BurntSushi's errors into an *Error with a position:
// a value of the wrong type, found by typeError, or a syntax error.
func (s *Scenario) decodeError(err error, src string) error {
	if e := s.typeError(src); e != nil {
		return e
	}
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &Error{File: s.File, Line: pe.Position.Line, Col: pe.Position.Col, Field: pe.LastKey, Msg: pe.Message}
	}
	msg := strings.TrimPrefix(err.Error(), "toml: ")
	if m := lastKeyRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		e := &Error{File: s.File, Line: line, Col: 1, Field: m[2], Msg: m[3]}
		if k, ok := schema()[m[2]]; ok && k.typ == reflect.TypeOf([]string(nil)) && strings.HasPrefix(m[3], "incompatible types") {
			e.Msg = `must be a list of strings, like ["a", "b"] (` + m[3] + ")"
		}
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
	plain := k.String()
	if _, ok := s.loc.keys[plain]; ok {
		return plain
	}
	for i := 1; i < len(k); i++ {
		head, tail := k[:i].String(), k[i:].String()
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
// When the command line set the field, the error names the flag instead;
// when it set others, the message says so, since they may be the cause.
func (s *Scenario) errorf(path, format string, args ...any) *Error {
	e := &Error{File: s.File, Field: path, Msg: fmt.Sprintf(format, args...)}
	if o := s.overrideAt(path); o != nil {
		e.Flag = o.Flag
		return e
	}
	if len(s.sets) > 0 {
		e.Msg += " (with " + s.flags() + ")"
	}
	if pos, ok := s.loc.find(path); ok {
		e.Line, e.Col = pos.Line, pos.Col
	} else {
		e.Line, e.Col = 1, 1
	}
	return e
}
