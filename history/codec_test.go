package history

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// full is an event with every field set, found by reflection, so that a
// field added to Event and forgotten by the encoder or the decoder fails
// the tests below.
func full(t *testing.T) Event {
	var e Event
	v := reflect.ValueOf(&e).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x" + v.Type().Field(i).Name)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(7 + i))
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.Struct {
				f.Set(reflect.ValueOf([]Evidence{{From: "n1.log", Line: 3, Text: "leader <1>"}, {From: "GET /x", Text: "{}", Cut: true}}))
				break
			}
			f.Set(reflect.ValueOf([]string{"n1", "n2"}))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]int64{"messages.sent": 3}))
		case reflect.Pointer:
			switch f.Type().Elem().Kind() {
			case reflect.Int64:
				n := int64(0)
				f.Set(reflect.ValueOf(&n))
			case reflect.Struct:
				f.Set(reflect.ValueOf(&Meta{Scenario: "s", Algorithm: "a", Nodes: []string{"n1"}, IDs: []int{1}}))
			default:
				t.Fatalf("field %s: a pointer the test does not know", v.Type().Field(i).Name)
			}
		default:
			t.Fatalf("field %s of kind %s: the test does not know it", v.Type().Field(i).Name, f.Kind())
		}
	}
	return e
}

// AppendJSON writes what encoding/json writes, for every field, for plain
// and escaped strings alike.
func TestAppendJSONIsEncodingJSON(t *testing.T) {
	for _, e := range []Event{
		full(t),
		{Index: 1, Kind: KindMsg, What: MsgSend, Msg: 9, Src: "n1", Dest: "n2", MType: "ping"},
		{Kind: KindReport, Node: "n1", What: "metric", Value: "<é>\"\\\n\t\u2028\xff"},
		{Kind: KindEnd},
	} {
		got, err := AppendJSON(nil, &e)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(&e)
		if string(got) != string(want)+"\n" {
			t.Errorf("AppendJSON:\n%s\nencoding/json:\n%s", got, want)
		}
	}
}

// The decoder reads every field of what the recorder writes, fast.
func TestDecoderReadsEveryField(t *testing.T) {
	e := full(t)
	line, _ := AppendJSON(nil, &e)
	line = bytes.TrimSuffix(line, []byte("\n"))
	var got Event
	var d decoder
	if !d.fast(line, &got) {
		t.Fatalf("the fast decoder left a recorder's line to encoding/json: %s", line)
	}
	var want Event
	if err := json.Unmarshal(line, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
}

func sameDecode(t *testing.T, line []byte) {
	t.Helper()
	var d decoder
	var got, want Event
	err := d.event(line, &got)
	werr := json.Unmarshal(line, &want)
	if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
		t.Fatalf("%q: decoder error %v, encoding/json %v", line, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decoded %+v, encoding/json %+v", line, got, want)
	}
}

func TestDecoderAgreesWithEncodingJSON(t *testing.T) {
	for _, l := range []string{
		`{"i":3,"t":9,"kind":"msg","what":"send","msg":4,"src":"n1","dest":"n2","mtype":"x"}`,
		`{"i":3,"t":9,"kind":"report","node":"n1","what":"leader","value":"n1","term":0}`,
		`{"i":3,"t":9,"kind":"report","node":"n1","term":null,"nodes":null,"meta":null}`,
		`{"i":3,"t":9,"kind":"nemesis","nodes":[],"phase":"start"}`,
		`{"i":3,"t":9,"kind":"nemesis","nodes":["a",null]}`,
		`{"i":"3"}`, `{"i":1.0}`, `{"i":1e2}`, `{"term":-4}`, `{"incarnation":99999999999999999999}`,
		`{"kind":"x","KIND":"y"}`, `{"node":"a","node":"b"}`,
		`{"meta":{"scenario":"a"},"meta":{"algorithm":"b"}}`,
		`{"counts":{"a":1},"counts":{"b":2}}`, `{"counts":{"a":1.5}}`,
		`{"value":"a\u003cb"}`, `{"value":"\xff"}`, `{"unknown":[1,{"x":null}],"i":2}`,
		`{"i":2} x`, `{"i":2,}`, `[]`, `{}`, ``, `{"meta":{"ids":["x"]}}`,
	} {
		sameDecode(t, []byte(l))
	}
}

// FuzzDecoder: the decoder and encoding/json read any line the same.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte(`{"i":3,"t":9,"kind":"msg","what":"send","msg":4,"src":"n1","dest":"n2","mtype":"x"}`))
	f.Add([]byte(`{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"a","nodes":["n1"],"ids":[1]}}`))
	f.Add([]byte(`{"i":5,"t":6,"kind":"end","counts":{"messages.sent":3,"ops.ok":1}}`))
	f.Add([]byte(`{"i":5,"t":6,"kind":"nemesis","what":"partition","phase":"start","nodes":["n1","n2"],"name":"faults[0]#1"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		sameDecode(t, line)
	})
}

// FuzzAppendJSON: any event encodes as encoding/json encodes it.
func FuzzAppendJSON(f *testing.F) {
	f.Add("n1", "leader", "n<1>", int64(4), "x\xff\u2028")
	f.Fuzz(func(t *testing.T, node, what, value string, n int64, body string) {
		e := Event{Index: n, Time: n / 2, Kind: Kind(what), Node: node, What: what, Value: value, Msg: n, Body: body, Nodes: strings.Fields(value)}
		got, _ := AppendJSON(nil, &e)
		want, _ := json.Marshal(&e)
		if string(got) != string(want)+"\n" {
			t.Fatalf("AppendJSON %s, encoding/json %s", got, want)
		}
	})
}

// keyBit knows every key of an event, each with its own bit.
func TestKeyBits(t *testing.T) {
	seen := uint32(0)
	typ := reflect.TypeOf(Event{})
	for i := range typ.NumField() {
		k := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
		b := keyBit(k)
		if b == 0 || seen&b != 0 || !slices.Contains(eventKeys, k) {
			t.Errorf("key %q: bit %x (seen %x), in eventKeys %v", k, b, seen, slices.Contains(eventKeys, k))
		}
		seen |= b
	}
	if len(eventKeys) != typ.NumField() {
		t.Errorf("%d keys listed, Event has %d fields", len(eventKeys), typ.NumField())
	}
}
