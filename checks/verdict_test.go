package checks

import (
	"encoding/json"
	"testing"
)

func TestCompose(t *testing.T) {
	tests := []struct {
		in   []Validity
		want Validity
	}{
		{nil, True},
		{[]Validity{True}, True},
		{[]Validity{True, True}, True},
		{[]Validity{Unknown}, Unknown},
		{[]Validity{True, Unknown, True}, Unknown},
		{[]Validity{False}, False},
		{[]Validity{Unknown, False}, False},
		{[]Validity{False, Unknown}, False},
		{[]Validity{True, False, True}, False},
	}
	for _, tt := range tests {
		if got := Compose(tt.in...); got != tt.want {
			t.Errorf("Compose(%v): got %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValidityZeroIsUnknown(t *testing.T) {
	var v Validity
	if v != Unknown {
		t.Errorf("zero Validity: got %v, want unknown", v)
	}
}

func TestValidityJSON(t *testing.T) {
	tests := []struct {
		v    Validity
		json string
	}{
		{True, `true`},
		{False, `false`},
		{Unknown, `"unknown"`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.v)
		if err != nil {
			t.Fatalf("Marshal(%v): %v", tt.v, err)
		}
		if string(b) != tt.json {
			t.Errorf("Marshal(%v): got %s, want %s", tt.v, b, tt.json)
		}
		got := Validity(99)
		if err := json.Unmarshal([]byte(tt.json), &got); err != nil {
			t.Fatalf("Unmarshal(%s): %v", tt.json, err)
		}
		if got != tt.v {
			t.Errorf("Unmarshal(%s): got %v, want %v", tt.json, got, tt.v)
		}
	}
	for _, bad := range []string{`"true"`, `1`, `"maybe"`, `{}`} {
		var v Validity
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("Unmarshal(%s): got %v, want an error", bad, v)
		}
	}
	if _, err := json.Marshal(Validity(7)); err == nil {
		t.Errorf("Marshal(Validity(7)): want an error")
	}
}

func FuzzValidityJSON(f *testing.F) {
	for _, s := range []string{`true`, `false`, `"unknown"`, `null`, ` true `, `"x"`, `tru`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v Validity
		if err := v.UnmarshalJSON(b); err != nil {
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("Marshal(%v) after Unmarshal(%q): %v", v, b, err)
		}
		var back Validity
		if err := json.Unmarshal(out, &back); err != nil || back != v {
			t.Fatalf("round trip of %v: got %v, %v", v, back, err)
		}
	})
}
