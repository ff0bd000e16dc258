package wire

import (
	"bytes"
	"testing"
)

func TestAppendKeepsBodyBytes(t *testing.T) {
	// Whitespace and key order in a body survive the trip, so the sum does.
	body := []byte(`{ "type" : "x",  "b":1,"a":2 }`)
	e := Envelope{ID: 12, Src: "n1", Dest: "n2", Body: body, Sum: Sum(body)}
	line := e.Append(nil)
	got, err := Parse(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Body, body) || !got.Verify() || got.ID != 12 || got.Src != "n1" || got.Dest != "n2" {
		t.Errorf("round trip gave %+v", got)
	}
	if LeadingID(line) != 12 {
		t.Errorf("LeadingID(%q) = %d, want 12", line, LeadingID(line))
	}
}

func TestVerify(t *testing.T) {
	body := []byte(`{"type":"x","v":1}`)
	tests := []struct {
		name string
		e    Envelope
		want bool
	}{
		{"matching", Envelope{Body: body, Sum: Sum(body)}, true},
		{"no sum", Envelope{Body: body}, false},
		{"field changed", Envelope{Body: []byte(`{"type":"x","v":2}`), Sum: Sum(body)}, false},
		{"bad sum", Envelope{Body: body, Sum: "zz"}, false},
	}
	for _, tt := range tests {
		if got := tt.e.Verify(); got != tt.want {
			t.Errorf("%s: Verify() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLeadingID(t *testing.T) {
	for line, want := range map[string]int64{
		`{"id":7,"src":"n1"`:         7,
		`{"id":,"src":"n1"`:          0,
		`{"src":"n1","id":7`:         0,
		``:                           0,
		`{"id":99999999999999999999`: 0,
	} {
		if got := LeadingID([]byte(line)); got != want {
			t.Errorf("LeadingID(%q) = %d, want %d", line, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"id":1,"src":"n1","dest":"n2","body":{"type":"x"},"sum":"00000000"}`))
	f.Add([]byte(`{"src":"n1","dest":"coup","body":{"type":"report","what":"leader","value":"n1"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := Parse(line)
		if err != nil {
			return
		}
		// What parses re-encodes to a line that parses to the same.
		again, err := Parse(bytes.TrimSuffix(e.Append(nil), []byte("\n")))
		if err != nil {
			t.Fatalf("re-encoded %q does not parse: %v", e.Append(nil), err)
		}
		if again.Src != e.Src || again.Dest != e.Dest || !bytes.Equal(again.Body, e.Body) || again.Sum != e.Sum {
			t.Errorf("round trip changed %+v into %+v", e, again)
		}
		_ = LeadingID(line)
	})
}
