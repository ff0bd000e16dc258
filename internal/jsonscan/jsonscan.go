// Package jsonscan reads JSON without reflection and without copying, for
// the few hot paths where encoding/json costs too much: a node's message
// envelope and a history's lines. A Scanner validates what it skips, and
// takes a string's bytes as they are only when it is plain (no escape, no
// control character, valid UTF-8); for anything else it reports false, so
// that its caller can leave the input to encoding/json, whose answer is
// then the answer.
package jsonscan

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Scanner validates and skips JSON values in B from I.
type Scanner struct {
	B []byte
	I int
}

// WS skips white space.
func (s *Scanner) WS() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Eat skips c if it comes next.
func (s *Scanner) Eat(c byte) bool {
	if s.I < len(s.B) && s.B[s.I] == c {
		s.I++
		return true
	}
	return false
}

// Str reads a string and returns its bytes when it is plain: no escape,
// no control character and valid UTF-8, so that its bytes are its value.
// It returns false for anything else, a valid string with escapes
// included: the caller then leaves the line to encoding/json.
func (s *Scanner) Str() ([]byte, bool) {
	if !s.Eat('"') {
		return nil, false
	}
	start := s.I
	ascii := true
	for s.I < len(s.B) {
		c := s.B[s.I]
		switch {
		case c == '"':
			v := s.B[start:s.I]
			s.I++
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		s.I++
	}
	return nil, false
}

// SkipStr skips a valid string, escapes and all.
func (s *Scanner) SkipStr() bool {
	if !s.Eat('"') {
		return false
	}
	for s.I < len(s.B) {
		c := s.B[s.I]
		switch {
		case c == '"':
			s.I++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.I++
			if s.I >= len(s.B) {
				return false
			}
			switch s.B[s.I] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.I++
			case 'u':
				if s.I+4 >= len(s.B) {
					return false
				}
				for _, h := range s.B[s.I+1 : s.I+5] {
					if !isHex(h) {
						return false
					}
				}
				s.I += 5
			default:
				return false
			}
		default:
			s.I++
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Number skips a valid JSON number and returns its text.
func (s *Scanner) Number() ([]byte, bool) {
	start := s.I
	s.Eat('-')
	switch {
	case s.Eat('0'):
	case s.I < len(s.B) && s.B[s.I] >= '1' && s.B[s.I] <= '9':
		s.digits()
	default:
		return nil, false
	}
	if s.Eat('.') {
		if !s.digits() {
			return nil, false
		}
	}
	if s.I < len(s.B) && (s.B[s.I] == 'e' || s.B[s.I] == 'E') {
		s.I++
		if !s.Eat('+') {
			s.Eat('-')
		}
		if !s.digits() {
			return nil, false
		}
	}
	return s.B[start:s.I], true
}

func (s *Scanner) digits() bool {
	start := s.I
	for s.I < len(s.B) && s.B[s.I] >= '0' && s.B[s.I] <= '9' {
		s.I++
	}
	return s.I > start
}

// Int reads a number that is a plain integer fitting an int64.
func (s *Scanner) Int() (int64, bool) {
	t, ok := s.Number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(t), 10, 64)
	return n, err == nil
}

// Lit skips word (true, false, null) if it comes next.
func (s *Scanner) Lit(word string) bool {
	if bytes.HasPrefix(s.B[s.I:], []byte(word)) {
		s.I += len(word)
		return true
	}
	return false
}

// Value skips any valid JSON value.
func (s *Scanner) Value() bool {
	return s.ValueDepth(0)
}

// MaxDepth is the deepest nesting a Scanner follows.
const MaxDepth = 1000 // deeper: left to encoding/json, whose own limit is 10000

// ValueDepth skips a valid value nested depth deep.
func (s *Scanner) ValueDepth(depth int) bool {
	if depth > MaxDepth || s.I >= len(s.B) {
		return false
	}
	switch c := s.B[s.I]; {
	case c == '"':
		return s.SkipStr()
	case c == '{':
		s.I++
		s.WS()
		if s.Eat('}') {
			return true
		}
		for {
			s.WS()
			if !s.SkipStr() {
				return false
			}
			s.WS()
			if !s.Eat(':') {
				return false
			}
			s.WS()
			if !s.ValueDepth(depth + 1) {
				return false
			}
			s.WS()
			if s.Eat('}') {
				return true
			}
			if !s.Eat(',') {
				return false
			}
		}
	case c == '[':
		s.I++
		s.WS()
		if s.Eat(']') {
			return true
		}
		for {
			s.WS()
			if !s.ValueDepth(depth + 1) {
				return false
			}
			s.WS()
			if s.Eat(']') {
				return true
			}
			if !s.Eat(',') {
				return false
			}
		}
	case c == 't':
		return s.Lit("true")
	case c == 'f':
		return s.Lit("false")
	case c == 'n':
		return s.Lit("null")
	default:
		_, ok := s.Number()
		return ok
	}
}
