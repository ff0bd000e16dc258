package workloads

import (
	"encoding/json"
	"fmt"

	"github.com/coupharness/coup/nodes/wire"
)

// RequestBody is the body of op's request, with msg_id id: the
// election and lock workloads' {"type","msg_id","value"} when op.Fields
// is nil, else type and msg_id followed by the members of op.Fields.
//
// It panics when op.Fields does not marshal to a JSON object: a workload
// that asks for such a request is broken.
func RequestBody(op Op, id int) []byte {
	if op.Fields == nil {
		b, _ := json.Marshal(wire.RequestBody{Type: op.F, MsgID: id, Value: op.Value}) // strings and an int always marshal
		return b
	}
	fields, err := json.Marshal(op.Fields)
	if err != nil {
		panic(fmt.Sprintf("workloads: the fields of a %s request: %v", op.F, err))
	}
	body, err := wire.Request(op.F, id, fields)
	if err != nil {
		panic(fmt.Sprintf("workloads: %v", err))
	}
	return body
}

// AnswerValue is the value the history records for an ok answer when the
// operation names no Result: the answer's "value" field, a string as it
// is, any other JSON value as its text, "" when there is none or the body
// is not a JSON object.
func AnswerValue(body []byte) string {
	var a struct {
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(body, &a) != nil || len(a.Value) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(a.Value, &s) == nil {
		return s
	}
	return string(a.Value)
}
