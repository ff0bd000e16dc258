package raftkv

import (
	"encoding/json"
	"fmt"

	"github.com/coupharness/coup"
	"github.com/coupharness/coup/nodes"
)

// Maelstrom's error code for a key that does not exist (definite).
const codeKeyDoesNotExist = 20

// op is a lin-kv write or cas as a raft entry: who proposed it, so that
// the proposer answers its client once the entry is applied, and what it
// does.
type op struct {
	Node string `json:"node"`
	ID   int64  `json:"id"`
	F    string `json:"f"` // "write" or "cas"
	Key  int    `json:"key"`
	// Value is a write's; From and To a cas's.
	Value int `json:"value,omitempty"`
	From  int `json:"from,omitempty"`
	To    int `json:"to,omitempty"`
}

// request is the fields of a lin-kv request body.
type request struct {
	Key   *int `json:"key"`
	Value *int `json:"value"`
	From  *int `json:"from"`
	To    *int `json:"to"`
}

// parseRequest reads a lin-kv request: read, write or cas.
func parseRequest(r coup.Request) (request, error) {
	var q request
	if err := json.Unmarshal(r.Body, &q); err != nil {
		return q, fmt.Errorf("bad %s request: %w", r.Op, err)
	}
	switch {
	case r.Op != "read" && r.Op != "write" && r.Op != "cas":
		return q, fmt.Errorf("unknown operation %q", r.Op)
	case q.Key == nil:
		return q, fmt.Errorf("a %s needs a key", r.Op)
	case r.Op == "write" && q.Value == nil:
		return q, fmt.Errorf("a write needs a value")
	case r.Op == "cas" && (q.From == nil || q.To == nil):
		return q, fmt.Errorf("a cas needs from and to")
	}
	return q, nil
}

// store is the replicated state: every node applies the same entries in
// the same order.
type store map[int]int

// apply carries out a committed op, and says how it went: nil, or the
// error its proposer answers with.
func (s store) apply(o op) *coup.Error {
	switch o.F {
	case "write":
		s[o.Key] = o.Value
	case "cas":
		v, ok := s[o.Key]
		switch {
		case !ok:
			return &coup.Error{Code: codeKeyDoesNotExist, Text: "no such key", Definite: true}
		case v != o.From:
			return &coup.Error{Code: nodes.CodePreconditionFailed, Text: fmt.Sprintf("key %d holds %d, not %d", o.Key, v, o.From), Definite: true}
		}
		s[o.Key] = o.To
	}
	return nil
}

// readValue is a read's answer: the value, or the definite error for a
// key never written.
type readValue struct {
	Value int `json:"value"`
}
