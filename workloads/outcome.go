package workloads

import (
	"fmt"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes/wire"
)

// Outcome is how the history records an answer to a client (real or
// simulated): ok with the value result gives (the answer's "value" when
// result is nil), or, for an error, fail when the error is definite and
// info otherwise, with the error's text (or its code, without a text).
// An error 20 (key-does-not-exist) is ok with absent when absent is not
// empty (Op.Absent).
func Outcome(head wire.ReplyHead, body []byte, result func([]byte) string, absent string) (typ, value string) {
	if head.Type != "error" {
		if result == nil {
			result = AnswerValue
		}
		return history.OpOK, result(body)
	}
	if absent != "" && head.Code != nil && *head.Code == CodeKeyDoesNotExist {
		return history.OpOK, absent
	}
	typ, value = history.OpInfo, head.Text
	if head.Definite || (head.Code != nil && DefiniteCode(*head.Code)) {
		typ = history.OpFail
	}
	if value == "" && head.Code != nil {
		value = fmt.Sprintf("error %d", *head.Code)
	}
	return typ, value
}

// CodeKeyDoesNotExist is Maelstrom's error 20: a read of a key that has
// no value.
const CodeKeyDoesNotExist = 20

// DefiniteCode reports whether a Maelstrom error code means the operation
// surely did not happen.
func DefiniteCode(code int) bool {
	switch code {
	case 1, 10, 11, 12, 14, 20, 21, 22, 30:
		return true
	}
	return false
}
