package wire

import (
	"bytes"
	"testing"
)

// parseBoth is what Parse and ParseHead say of a line: the router's view.
func parseBoth(line []byte) (Envelope, string, error) {
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

func sameScan(t *testing.T, line []byte) {
	t.Helper()
	e, typ, err := Scan(line)
	we, wtyp, werr := parseBoth(line)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: Scan error %v, Parse error %v", line, err, werr)
	}
	if raw, ok := ScanRaw(line); ok {
		if err != nil || raw.ID != e.ID || string(raw.Src) != e.Src || string(raw.Dest) != e.Dest || string(raw.Sum) != e.Sum ||
			!bytes.Equal(raw.Body, e.Body) || string(raw.Type) != typ {
			t.Fatalf("%q: ScanRaw gave %+v, Scan %+v type %q (error %v)", line, raw, e, typ, err)
		}
	}
	if err != nil {
		return
	}
	if e.ID != we.ID || e.Src != we.Src || e.Dest != we.Dest || e.Sum != we.Sum || !bytes.Equal(e.Body, we.Body) || typ != wtyp {
		t.Fatalf("%q: Scan gave %+v type %q, Parse %+v type %q", line, e, typ, we, wtyp)
	}
}

func TestScanAgreesWithParse(t *testing.T) {
	for _, l := range []string{
		`{"id":12,"src":"n1","dest":"n2","body":{"type":"election","id":5,"msg_id":3},"sum":"0a1b2c3d"}`,
		` { "src" : "n1" , "dest":"coup","body":{"type":"report","what":"leader","value":"n1"} } `,
		`{"src":"n1","dest":"n2","body":{"type":"x","nested":{"a":[1,2,{"b":null}],"c":"\u00e9\n"},"t":true,"f":false}}`,
		`{"src":"n1","dest":"n2","body":{"type":"x","msg_id":"7"}}`,    // ParseHead fails: no type
		`{"src":"n1","dest":"n2","body":{"type":7}}`,                   // ditto
		`{"src":"n1","dest":"n2","body":{"Type":"y","type":"x"}}`,      // a key in another case
		`{"SRC":"n1","dest":"n2","body":{}}`,                           // ditto, in the envelope
		`{"src":"n\u0031","dest":"n2","body":{"type":"x"}}`,            // an escaped string
		`{"src":"n1","dest":"n2","body":[1,2]}`,                        // a body that is not an object
		`{"src":"n1","dest":"n2","body":null}`,                         // no body
		`{"src":"n1","dest":"","body":{}}`,                             // no dest
		`{"src":"n1","dest":"n2","body":{"type":"x"}} trailing`,        // not one value
		`{"src":"n1","dest":"n2","body":{"type":"x",}}`,                // bad JSON in the body
		`{"id":1.5,"src":"n1","dest":"n2","body":{}}`,                  // an id that is no integer
		`{"id":99999999999999999999,"src":"n1","dest":"n2","body":{}}`, // too big
		`{"src":"n1","dest":"n2","body":{"type":"x"},"src":"n3"}`,      // twice: the last wins
		`{"src":"n1","dest":"n2","body":{"type":"x","msg_id":1e2}}`,    // not an int
		`{"src":"\xff","dest":"n2","body":{}}`,                         // invalid UTF-8
		`{"src":"n1","dest":"n2","body":{"type":"x"},"extra":[1,{"k":"v"}]}`,
		`{"src":"n1","dest":"n2","body":{"type":"x","v":-0.5e-3}}`,
		`{"src":"n1","dest":"n2","body":{"type":"x","v":01}}`,
		``, `{`, `{}`, `[]`, `null`,
	} {
		sameScan(t, []byte(l))
	}
}

// FuzzScan: the fast scanner and encoding/json always agree.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"id":1,"src":"n1","dest":"n2","body":{"type":"x","msg_id":2},"sum":"00000000"}`))
	f.Add([]byte(`{"src":"n1","dest":"coup","body":{"type":"report","what":"leader","value":"n1","term":3}}`))
	f.Add([]byte(`{"src":"n1","dest":"c1","body":{"type":"elect_ok","in_reply_to":4,"value":"n\"5"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		sameScan(t, line)
	})
}
