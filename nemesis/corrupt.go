package nemesis

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
)

// FlipBit returns a copy of body with one random bit flipped. It never makes
// a newline byte, so the line protocol keeps its lines; the JSON may break.
func FlipBit(body []byte, rng *rand.Rand) []byte {
	out := append([]byte(nil), body...)
	if len(out) == 0 {
		return out
	}
	i := rng.IntN(len(out))
	bit := rng.IntN(8)
	if out[i]^(1<<bit) == '\n' {
		bit = (bit + 1) % 8 // only one bit of a byte can make a newline
	}
	out[i] ^= 1 << bit
	return out
}

// MutateField returns a copy of a JSON object body with the value of one
// random top-level field other than "type" changed, so that the JSON stays
// valid and of the same shape: a number changes, a string has a character
// replaced, a boolean flips, an object or array has one of its values
// changed. Every other byte is kept. It reports false when the body has no
// field it can change.
func MutateField(body []byte, rng *rand.Rand) ([]byte, bool) {
	spans, ok := members(body)
	if !ok || !isObject(body) {
		return nil, false
	}
	var eligible []span
	for _, s := range spans {
		if s.key != "type" && mutable(body[s.start:s.end]) {
			eligible = append(eligible, s)
		}
	}
	if len(eligible) == 0 {
		return nil, false
	}
	return splice(body, eligible[rng.IntN(len(eligible))], rng)
}

// AlterField returns a copy of a JSON object body with the value of the
// named top-level field changed as MutateField would. It reports false when
// the body has no such field or its value cannot change (null).
func AlterField(body []byte, field string, rng *rand.Rand) ([]byte, bool) {
	spans, ok := members(body)
	if !ok || !isObject(body) {
		return nil, false
	}
	for _, s := range spans {
		if s.key == field {
			return splice(body, s, rng)
		}
	}
	return nil, false
}

func isObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// span is where a member's value lies in an object's bytes.
type span struct {
	key        string
	start, end int
}

// members finds the members of a JSON object (or the elements of an array,
// with empty keys) and where their values lie.
func members(b []byte) ([]span, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, false
	}
	delim, ok := tok.(json.Delim)
	if !ok || (delim != '{' && delim != '[') {
		return nil, false
	}
	var out []span
	for dec.More() {
		key := ""
		if delim == '{' {
			k, err := dec.Token()
			if err != nil {
				return nil, false
			}
			key, _ = k.(string)
		}
		from := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		at := bytes.Index(b[from:], raw)
		if at < 0 {
			return nil, false
		}
		out = append(out, span{key: key, start: from + at, end: from + at + len(raw)})
	}
	return out, true
}

// splice replaces one member's value with a changed one.
func splice(body []byte, s span, rng *rand.Rand) ([]byte, bool) {
	v, ok := mutateValue(body[s.start:s.end], rng)
	if !ok {
		return nil, false
	}
	out := make([]byte, 0, len(body)+len(v))
	out = append(out, body[:s.start]...)
	out = append(out, v...)
	return append(out, body[s.end:]...), true
}

// mutable reports whether mutateValue can change v.
func mutable(v []byte) bool {
	switch {
	case len(v) == 0 || v[0] == 'n':
		return false
	case v[0] == '{' || v[0] == '[':
		spans, ok := members(v)
		if !ok {
			return false
		}
		for _, s := range spans {
			if mutable(v[s.start:s.end]) {
				return true
			}
		}
		return false
	}
	return true
}

const mutationAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// mutateValue returns a different JSON value of the same kind.
func mutateValue(v []byte, rng *rand.Rand) ([]byte, bool) {
	if len(v) == 0 {
		return nil, false
	}
	switch v[0] {
	case 't':
		return []byte("false"), true
	case 'f':
		return []byte("true"), true
	case 'n':
		return nil, false
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, false
		}
		r := []rune(s)
		if len(r) == 0 {
			r = []rune{'x'}
		} else {
			i := rng.IntN(len(r))
			c := rune(mutationAlphabet[rng.IntN(len(mutationAlphabet))])
			if c == r[i] {
				c = rune(mutationAlphabet[(strings.IndexRune(mutationAlphabet, c)+1)%len(mutationAlphabet)])
			}
			r[i] = c
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(string(r)) // a string always encodes
		return bytes.TrimRight(buf.Bytes(), "\n"), true
	case '{', '[':
		spans, ok := members(v)
		if !ok {
			return nil, false
		}
		var eligible []span
		for _, s := range spans {
			if mutable(v[s.start:s.end]) {
				eligible = append(eligible, s)
			}
		}
		if len(eligible) == 0 {
			return nil, false
		}
		return splice(v, eligible[rng.IntN(len(eligible))], rng)
	}
	// A number.
	delta := int64(1 + rng.IntN(9))
	if rng.IntN(2) == 0 {
		delta = -delta
	}
	if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		if (delta > 0 && i > 1<<62) || (delta < 0 && i < -(1<<62)) {
			delta = -delta
		}
		return strconv.AppendInt(nil, i+delta, 10), true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return nil, false
	}
	g := f + float64(delta)
	if g == f { // too large for the change to show
		g = -f
		if f == 0 {
			g = 1
		}
	}
	return strconv.AppendFloat(nil, g, 'g', -1, 64), true
}

// Change describes in a few words how altered differs from body, for the
// history: the top-level field whose value changed (`field "payload": "a"
// → "b"`) while the JSON stayed valid, or else the bit that flipped (`bit 2 of byte 17: 'a' →
// 'e'`). It returns "" when the two are equal.
func Change(body, altered []byte) string {
	i := 0
	for i < len(body) && i < len(altered) && body[i] == altered[i] {
		i++
	}
	if i == len(body) && i == len(altered) {
		return ""
	}
	was, ok1 := members(body)
	now, ok2 := members(altered)
	if ok1 && ok2 && len(was) == len(now) && isObject(body) && json.Valid(altered) {
		for k, s := range was {
			t := now[k]
			if s.key == t.key && (s.start <= i && i <= s.end) {
				return "field " + strconv.Quote(s.key) + ": " + clip(body[s.start:s.end]) + " → " + clip(altered[t.start:t.end])
			}
		}
	}
	if len(body) == len(altered) && bytes.Equal(body[i+1:], altered[i+1:]) {
		if x := body[i] ^ altered[i]; x&(x-1) == 0 {
			bit := 0
			for x>>bit != 1 {
				bit++
			}
			return "bit " + strconv.Itoa(bit) + " of byte " + strconv.Itoa(i) + ": " +
				strconv.QuoteRune(rune(body[i])) + " → " + strconv.QuoteRune(rune(altered[i]))
		}
	}
	j := 0
	for j < len(body)-i && j < len(altered)-i && body[len(body)-1-j] == altered[len(altered)-1-j] {
		j++
	}
	return "bytes " + strconv.Itoa(i) + "–" + strconv.Itoa(len(body)-j) + ": " + clip(body[i:len(body)-j]) + " → " + clip(altered[i:len(altered)-j])
}

// clip shows at most 60 bytes of a value.
func clip(b []byte) string {
	if len(b) == 0 {
		return "(nothing)"
	}
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}
