package nodes

import (
	"testing"
	"time"
)

type ping struct {
	N    int    `json:"n"`
	From string `json:"from,omitempty"`
}
type empty struct{}

func (ping) Type() string  { return "ping" }
func (empty) Type() string { return "empty" }

func TestEncodeDecode(t *testing.T) {
	c := NewCodec(ping{}, empty{})
	for _, m := range []Msg{ping{N: 3, From: "n1"}, empty{}} {
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Decode(b)
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if got != m {
			t.Errorf("decoded %#v from %s, want %#v", got, b, m)
		}
	}
	if b, _ := Encode(empty{}); string(b) != `{"type":"empty"}` {
		t.Errorf("empty message encodes as %s", b)
	}
	for _, bad := range []string{`{"type":"pong"}`, `{"type":"ping","n":"x"}`, `not json`} {
		if _, err := c.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) succeeded", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	c := NewCodec(ping{}, empty{})
	f.Add([]byte(`{"type":"ping","n":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := c.Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if m2, err := c.Decode(again); err != nil || m2 != m {
			t.Errorf("%s decoded to %#v, re-encoded as %s, decoded to %#v (%v)", b, m, again, m2, err)
		}
	})
}

func TestParams(t *testing.T) {
	p := NewParams(map[string]any{"t": "150ms", "n": int64(3), "f": 0.5, "b": true, "bad": "x", "unused": 1})
	if d, err := p.Duration("t", 0); err != nil || d != 150*time.Millisecond {
		t.Errorf("Duration = %v, %v", d, err)
	}
	if n, err := p.Int("n", 0); err != nil || n != 3 {
		t.Errorf("Int = %v, %v", n, err)
	}
	if f, err := p.Float("f", 0); err != nil || f != 0.5 {
		t.Errorf("Float = %v, %v", f, err)
	}
	if b, err := p.Bool("b", false); err != nil || !b {
		t.Errorf("Bool = %v, %v", b, err)
	}
	if d, err := p.Duration("missing", time.Second); err != nil || d != time.Second {
		t.Errorf("default Duration = %v, %v", d, err)
	}
	if _, err := p.Duration("bad", 0); err == nil || err.(*ParamError).Key != "bad" {
		t.Errorf("bad duration: %v", err)
	}
	if err := p.Unused(); err == nil || err.(*ParamError).Key != "unused" {
		t.Errorf("Unused() = %v, want unused", err)
	}
}
