package nodes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// Msg is the body of a message between nodes. On the wire it is a JSON
// object whose "type" field is Type() and whose other fields are the
// value's exported fields.
//
// Message types are plain structs with a value receiver for Type, so that a
// decoded message can be matched with a type switch on the value.
type Msg interface {
	Type() string
}

// Encode returns the wire form of a message body: its JSON object with the
// "type" field first.
func Encode(m Msg) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.Type(), err)
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("encode %s: a message must be a JSON object", m.Type())
	}
	typ, _ := json.Marshal(m.Type())
	var out bytes.Buffer
	out.Grow(len(b) + len(typ) + 10)
	out.WriteString(`{"type":`)
	out.Write(typ)
	if len(b) > 2 {
		out.WriteByte(',')
	}
	out.Write(b[1:])
	return out.Bytes(), nil
}

// Codec decodes the message bodies of one algorithm.
type Codec struct {
	types map[string]reflect.Type
}

// NewCodec returns a codec for the given message types (zero values will do).
func NewCodec(prototypes ...Msg) *Codec {
	c := &Codec{types: make(map[string]reflect.Type, len(prototypes))}
	for _, p := range prototypes {
		t := reflect.TypeOf(p)
		if t.Kind() == reflect.Pointer {
			panic(fmt.Sprintf("nodes: message type %s must be registered as a value", t))
		}
		c.types[p.Type()] = t
	}
	return c
}

// Decode parses a message body. An unknown type or a body that does not fit
// its type is an error.
func (c *Codec) Decode(body []byte) (Msg, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, fmt.Errorf("unmarshal message: %w", err)
	}
	t, ok := c.types[head.Type]
	if !ok {
		return nil, fmt.Errorf("unknown message type %q", head.Type)
	}
	v := reflect.New(t)
	if err := json.Unmarshal(body, v.Interface()); err != nil {
		return nil, fmt.Errorf("unmarshal %s: %w", head.Type, err)
	}
	return v.Elem().Interface().(Msg), nil
}

// Types lists the message types the codec knows.
func (c *Codec) Types() []string {
	out := make([]string, 0, len(c.types))
	for k := range c.types {
		out = append(out, k)
	}
	return out
}
