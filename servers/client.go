package servers

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/coupharness/coup/workloads"
)

// opClient carries one client operation to a server over the server's
// own protocol, and answers as a Maelstrom node would: read_ok with the
// value, write_ok, cas_ok, or an error with Maelstrom's code (20: no such
// key, 22: the compare of a cas failed, both definite); acquire_ok with
// the grant's fencing token ("token") and its lease ("value"), release_ok.
// An error it returns means the answer is unknown: the operation may or
// may not have taken effect, and the history records info; errDefinite
// wraps one that surely did not (the connection was refused).
type opClient interface {
	Do(ctx context.Context, node string, op workloads.Op) ([]byte, error)
}

// errDefinite marks an error after which the operation surely did not
// happen.
var errDefinite = errors.New("definite")

// answer is a Maelstrom answer body of a type, with a value when not nil.
func answer(typ string, value json.RawMessage) []byte {
	m := map[string]any{"type": typ}
	if value != nil {
		m["value"] = value
	}
	b, _ := json.Marshal(m)
	return b
}

// answerError is a Maelstrom error answer: definite, with its code.
func answerError(code int, text string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "code": code, "text": text})
	return b
}

// kvFields are the lin-kv request's fields (workloads' kvRead, kvWrite,
// kvCas), read back from the operation.
type kvFields struct {
	Key   int `json:"key"`
	Value int `json:"value"`
	From  int `json:"from"`
	To    int `json:"to"`
}

// fieldsOf reads an operation's fields back (nil for a lock's).
func fieldsOf(op workloads.Op) (kvFields, error) {
	var f kvFields
	raw, err := json.Marshal(op.Fields)
	if err != nil {
		return f, err
	}
	return f, json.Unmarshal(raw, &f)
}
