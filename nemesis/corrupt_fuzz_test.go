package nemesis

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"testing"
)

// FuzzFlipBit: one bit of one byte changes, the length stays, and no
// newline appears, so the line protocol keeps its lines.
func FuzzFlipBit(f *testing.F) {
	f.Add([]byte(`{"type":"x","n":1}`), uint64(3))
	f.Add([]byte("\x0b\x0e"), uint64(9)) // bytes one bit away from a newline
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		out := FlipBit(b, seeded(seed))
		if len(out) != len(b) {
			t.Fatalf("length %d, want %d", len(out), len(b))
		}
		diff := 0
		for i := range b {
			diff += bits.OnesCount8(b[i] ^ out[i])
		}
		if len(b) > 0 && diff != 1 {
			t.Fatalf("%d bits differ, want 1", diff)
		}
		if bytes.Count(out, []byte("\n")) > bytes.Count(b, []byte("\n")) {
			t.Fatalf("a newline appeared: %q", out)
		}
	})
}

// FuzzAlterField: a named field of a valid object is altered into valid
// JSON that differs, and the other fields are kept byte for byte.
func FuzzAlterField(f *testing.F) {
	f.Add([]byte(`{"type":"x","payload":"abc","n":2}`), "payload", uint64(1))
	f.Add([]byte(`{"type":"x","a":[1,{"b":true}]}`), "a", uint64(2))
	f.Fuzz(func(t *testing.T, b []byte, field string, seed uint64) {
		out, ok := AlterField(b, field, seeded(seed))
		if !ok {
			return
		}
		if json.Valid(b) && !json.Valid(out) {
			t.Fatalf("valid %q altered into invalid %q", b, out)
		}
		if bytes.Equal(out, b) {
			t.Fatalf("%q unchanged", b)
		}
		if json.Valid(b) {
			var was, now map[string]json.RawMessage
			if json.Unmarshal(b, &was) == nil && json.Unmarshal(out, &now) == nil {
				for k, v := range was {
					if k != field && !bytes.Equal(v, now[k]) {
						t.Fatalf("field %q changed from %s to %s", k, v, now[k])
					}
				}
			}
		}
	})
}

// FuzzChange: the description of any alteration is short, and empty only
// when nothing changed.
func FuzzChange(f *testing.F) {
	f.Add([]byte(`{"type":"x","p":"a"}`), []byte(`{"type":"x","p":"b"}`))
	f.Add([]byte("abc"), []byte("abd"))
	f.Add([]byte(""), []byte("x"))
	f.Fuzz(func(t *testing.T, body, altered []byte) {
		d := Change(body, altered)
		if (d == "") != bytes.Equal(body, altered) {
			t.Fatalf("Change(%q, %q) = %q", body, altered, d)
		}
		if len(d) > 400 {
			t.Fatalf("a description of %d bytes: %q", len(d), d)
		}
	})
}
