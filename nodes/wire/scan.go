package wire

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/coupharness/coup/internal/jsonscan"
)

// Scan parses one line as Parse does and also returns the body's type (""
// when ParseHead would fail or find none), without reflection and without
// copying: the envelope's Body aliases line. It takes a fast path for the
// lines nodes write (plain keys, plain strings, an integer id); anything
// else (an escaped key or string, a key spelt in another case, a number
// that is not a plain integer) goes to Parse and ParseHead, so that the
// result is always theirs.
func Scan(line []byte) (Envelope, string, error) {
	raw, ok := scanFast(line)
	if ok {
		e := Envelope{ID: raw.ID, Src: string(raw.Src), Dest: string(raw.Dest), Body: raw.Body, Sum: string(raw.Sum)}
		typ := string(raw.Type)
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
	typ := ""
	if h, err := ParseHead(e.Body); err == nil {
		typ = h.Type
	}
	return e, typ, nil
}

// Raw is a line as ScanRaw finds it: every field aliases the line.
type Raw struct {
	ID                   int64
	Src, Dest, Sum, Body []byte
	Type                 []byte // the body's type, as Scan gives it
}

// ScanRaw is Scan's fast path alone, for a caller that would rather not
// make strings of what it only looks up: it reports false for any line
// that Scan would take to encoding/json or refuse, and the caller then
// calls Scan.
func ScanRaw(line []byte) (Raw, bool) {
	raw, ok := scanFast(line)
	if !ok || len(raw.Dest) == 0 || len(raw.Body) == 0 || string(raw.Body) == "null" {
		return Raw{}, false
	}
	return raw, true
}

// scanFast parses a line made of one object whose keys are plain, and
// reports false for anything it does not take exactly as encoding/json
// would, or for any line that is not valid JSON (Parse then says why).
func scanFast(b []byte) (e Raw, ok bool) {
	s := jsonscan.Scanner{B: b}
	s.WS()
	if !s.Eat('{') {
		return e, false
	}
	seenBody := false
	s.WS()
	if !s.Eat('}') {
		for {
			s.WS()
			key, plain := s.Str()
			if !plain {
				return e, false
			}
			s.WS()
			if !s.Eat(':') {
				return e, false
			}
			s.WS()
			switch string(key) {
			case "src", "dest", "sum":
				v, plain := s.Str()
				if !plain {
					return e, false
				}
				switch key[0] {
				case 's':
					if key[1] == 'r' {
						e.Src = v
					} else {
						e.Sum = v
					}
				default:
					e.Dest = v
				}
			case "id":
				n, ok := s.Int()
				if !ok {
					return e, false
				}
				e.ID = n
			case "body":
				start := s.I
				t, ok := body(&s)
				if !ok {
					return e, false
				}
				e.Body, e.Type, seenBody = b[start:s.I], t, true
			default:
				if foldsToField(key) || !s.Value() {
					return e, false
				}
			}
			s.WS()
			if s.Eat('}') {
				break
			}
			if !s.Eat(',') {
				return e, false
			}
		}
	}
	s.WS()
	if s.I != len(b) || !seenBody {
		return e, false
	}
	return e, true
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
func body(s *jsonscan.Scanner) ([]byte, bool) {
	if s.I >= len(s.B) || s.B[s.I] != '{' {
		// Not an object: ParseHead fails (null aside, which Scan refuses).
		return nil, s.Value()
	}
	s.I++
	var typ []byte
	s.WS()
	if s.Eat('}') {
		return nil, true
	}
	for {
		s.WS()
		key, plain := s.Str()
		if !plain {
			return nil, false
		}
		s.WS()
		if !s.Eat(':') {
			return nil, false
		}
		s.WS()
		switch string(key) {
		case "type":
			if s.Lit("null") {
				break
			}
			v, plain := s.Str()
			if !plain {
				return nil, false
			}
			typ = v
		case "msg_id", "in_reply_to":
			if s.Lit("null") {
				break
			}
			t, ok := s.Number()
			if !ok {
				return nil, false
			}
			if _, err := strconv.ParseInt(string(t), 10, strconv.IntSize); err != nil {
				return nil, false
			}
		default:
			if bytes.EqualFold(key, []byte("type")) || bytes.EqualFold(key, []byte("msg_id")) ||
				bytes.EqualFold(key, []byte("in_reply_to")) || !s.ValueDepth(1) {
				return nil, false
			}
		}
		s.WS()
		if s.Eat('}') {
			return typ, true
		}
		if !s.Eat(',') {
			return nil, false
		}
	}
}
