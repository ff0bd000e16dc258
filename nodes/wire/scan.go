package wire

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf8"
)

// Scan parses one line as Parse does and also returns the body's type (""
// when ParseHead would fail or find none), without reflection and without
// copying: the envelope's Body aliases line. It takes a fast path for the
// lines nodes write (plain keys, plain strings, an integer id); anything
// else (an escaped key or string, a key spelt in another case, a number
// that is not a plain integer) goes to Parse and ParseHead, so that the
// result is always theirs.
func Scan(line []byte) (Envelope, string, error) {
	e, typ, ok := scanFast(line)
	if ok {
		if e.Dest == "" {
			return e, typ, errors.New("envelope has no dest")
		}
		if len(e.Body) == 0 || string(e.Body) == "null" {
			return e, typ, errors.New("envelope has no body")
		}
		return e, typ, nil
	}
	e, err := Parse(line)
	if err != nil {
		return e, "", err
	}
	if h, err := ParseHead(e.Body); err == nil {
		typ = h.Type
	}
	return e, typ, nil
}

// scanFast parses a line made of one object whose keys are plain, and
// reports false for anything it does not take exactly as encoding/json
// would, or for any line that is not valid JSON (Parse then says why).
func scanFast(b []byte) (e Envelope, typ string, ok bool) {
	s := scanner{b: b}
	s.ws()
	if !s.eat('{') {
		return e, "", false
	}
	seenBody := false
	s.ws()
	if !s.eat('}') {
		for {
			s.ws()
			key, plain := s.str()
			if !plain {
				return e, "", false
			}
			s.ws()
			if !s.eat(':') {
				return e, "", false
			}
			s.ws()
			switch string(key) {
			case "src", "dest", "sum":
				v, plain := s.str()
				if !plain {
					return e, "", false
				}
				switch key[0] {
				case 's':
					if key[1] == 'r' {
						e.Src = string(v)
					} else {
						e.Sum = string(v)
					}
				default:
					e.Dest = string(v)
				}
			case "id":
				n, ok := s.int()
				if !ok {
					return e, "", false
				}
				e.ID = n
			case "body":
				start := s.i
				t, ok := s.body()
				if !ok {
					return e, "", false
				}
				e.Body, typ, seenBody = b[start:s.i], t, true
			default:
				if foldsToField(key) || !s.value() {
					return e, "", false
				}
			}
			s.ws()
			if s.eat('}') {
				break
			}
			if !s.eat(',') {
				return e, "", false
			}
		}
	}
	s.ws()
	if s.i != len(b) || !seenBody {
		return e, "", false
	}
	return e, typ, true
}

// foldsToField reports whether a key that is not one of the envelope's is
// one of them in another case, which encoding/json would take for it.
func foldsToField(key []byte) bool {
	for _, f := range [...]string{"id", "src", "dest", "body", "sum"} {
		if bytes.EqualFold(key, []byte(f)) {
			return true
		}
	}
	return false
}

// scanner validates and skips JSON values in b from i.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string and returns its bytes when it is plain: no escape,
// no control character and valid UTF-8, so that its bytes are its value.
// It returns false for anything else, a valid string with escapes
// included: the caller then leaves the line to encoding/json.
func (s *scanner) str() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

// skipStr skips a valid string, escapes and all.
func (s *scanner) skipStr() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if s.i+4 >= len(s.b) {
					return false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !isHex(h) {
						return false
					}
				}
				s.i += 5
			default:
				return false
			}
		default:
			s.i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number skips a valid JSON number and returns its text.
func (s *scanner) number() ([]byte, bool) {
	start := s.i
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return nil, false
	}
	if s.eat('.') {
		if !s.digits() {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if !s.eat('+') {
			s.eat('-')
		}
		if !s.digits() {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// int reads a number that is a plain integer fitting an int64.
func (s *scanner) int() (int64, bool) {
	t, ok := s.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(t), 10, 64)
	return n, err == nil
}

func (s *scanner) lit(word string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		s.i += len(word)
		return true
	}
	return false
}

// value skips any valid JSON value.
func (s *scanner) value() bool {
	return s.valueDepth(0)
}

const maxDepth = 1000 // deeper: left to encoding/json, whose own limit is 10000

func (s *scanner) valueDepth(depth int) bool {
	if depth > maxDepth || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.skipStr()
	case c == '{':
		s.i++
		s.ws()
		if s.eat('}') {
			return true
		}
		for {
			s.ws()
			if !s.skipStr() {
				return false
			}
			s.ws()
			if !s.eat(':') {
				return false
			}
			s.ws()
			if !s.valueDepth(depth + 1) {
				return false
			}
			s.ws()
			if s.eat('}') {
				return true
			}
			if !s.eat(',') {
				return false
			}
		}
	case c == '[':
		s.i++
		s.ws()
		if s.eat(']') {
			return true
		}
		for {
			s.ws()
			if !s.valueDepth(depth + 1) {
				return false
			}
			s.ws()
			if s.eat(']') {
				return true
			}
			if !s.eat(',') {
				return false
			}
		}
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	default:
		_, ok := s.number()
		return ok
	}
}

// body skips the body value and returns its type as ParseHead would find
// it. It reports false when it cannot tell exactly: a type that is not a
// plain string, a msg_id or in_reply_to that is not a plain integer, a
// key that folds to one of those, or a body that is not valid JSON.
func (s *scanner) body() (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		// Not an object: ParseHead fails (null aside, which Scan refuses).
		return "", s.value()
	}
	s.i++
	typ := ""
	s.ws()
	if s.eat('}') {
		return "", true
	}
	for {
		s.ws()
		key, plain := s.str()
		if !plain {
			return "", false
		}
		s.ws()
		if !s.eat(':') {
			return "", false
		}
		s.ws()
		switch string(key) {
		case "type":
			if s.lit("null") {
				break
			}
			v, plain := s.str()
			if !plain {
				return "", false
			}
			typ = string(v)
		case "msg_id", "in_reply_to":
			if s.lit("null") {
				break
			}
			t, ok := s.number()
			if !ok {
				return "", false
			}
			if _, err := strconv.ParseInt(string(t), 10, strconv.IntSize); err != nil {
				return "", false
			}
		default:
			if bytes.EqualFold(key, []byte("type")) || bytes.EqualFold(key, []byte("msg_id")) ||
				bytes.EqualFold(key, []byte("in_reply_to")) || !s.valueDepth(1) {
				return "", false
			}
		}
		s.ws()
		if s.eat('}') {
			return typ, true
		}
		if !s.eat(',') {
			return "", false
		}
	}
}
