package wire

import (
	"bytes"
	"errors"
	"strconv"

	"coup/internal/jsonscan"
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
	s := jsonscan.Scanner{B: b}
	s.WS()
	if !s.Eat('{') {
		return e, "", false
	}
	seenBody := false
	s.WS()
	if !s.Eat('}') {
		for {
			s.WS()
			key, plain := s.Str()
			if !plain {
				return e, "", false
			}
			s.WS()
			if !s.Eat(':') {
				return e, "", false
			}
			s.WS()
			switch string(key) {
			case "src", "dest", "sum":
				v, plain := s.Str()
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
				n, ok := s.Int()
				if !ok {
					return e, "", false
				}
				e.ID = n
			case "body":
				start := s.I
				t, ok := body(&s)
				if !ok {
					return e, "", false
				}
				e.Body, typ, seenBody = b[start:s.I], t, true
			default:
				if foldsToField(key) || !s.Value() {
					return e, "", false
				}
			}
			s.WS()
			if s.Eat('}') {
				break
			}
			if !s.Eat(',') {
				return e, "", false
			}
		}
	}
	s.WS()
	if s.I != len(b) || !seenBody {
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

// body skips the body value and returns its type as ParseHead would find
// it. It reports false when it cannot tell exactly: a type that is not a
// plain string, a msg_id or in_reply_to that is not a plain integer, a
// key that folds to one of those, or a body that is not valid JSON.
func body(s *jsonscan.Scanner) (string, bool) {
	if s.I >= len(s.B) || s.B[s.I] != '{' {
		// Not an object: ParseHead fails (null aside, which Scan refuses).
		return "", s.Value()
	}
	s.I++
	typ := ""
	s.WS()
	if s.Eat('}') {
		return "", true
	}
	for {
		s.WS()
		key, plain := s.Str()
		if !plain {
			return "", false
		}
		s.WS()
		if !s.Eat(':') {
			return "", false
		}
		s.WS()
		switch string(key) {
		case "type":
			if s.Lit("null") {
				break
			}
			v, plain := s.Str()
			if !plain {
				return "", false
			}
			typ = string(v)
		case "msg_id", "in_reply_to":
			if s.Lit("null") {
				break
			}
			t, ok := s.Number()
			if !ok {
				return "", false
			}
			if _, err := strconv.ParseInt(string(t), 10, strconv.IntSize); err != nil {
				return "", false
			}
		default:
			if bytes.EqualFold(key, []byte("type")) || bytes.EqualFold(key, []byte("msg_id")) ||
				bytes.EqualFold(key, []byte("in_reply_to")) || !s.ValueDepth(1) {
				return "", false
			}
		}
		s.WS()
		if s.Eat('}') {
			return typ, true
		}
		if !s.Eat(',') {
			return "", false
		}
	}
}
