package workloads_test

import (
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes/wire"
	"github.com/coupharness/coup/workloads"
)

func TestOutcome(t *testing.T) {
	code := func(c int) *int { return &c }
	tests := []struct {
		name      string
		head      wire.ReplyHead
		body      string
		result    func([]byte) string
		absent    string
		typ, want string
	}{
		{"ok with a string value", wire.ReplyHead{Type: "elect_ok"}, `{"type":"elect_ok","value":"n3"}`, nil, "", history.OpOK, "n3"},
		{"ok with a number", wire.ReplyHead{Type: "read_ok"}, `{"type":"read_ok","value":4}`, nil, "", history.OpOK, "4"},
		{"ok through the operation's result", wire.ReplyHead{Type: "read_ok"}, `{"type":"read_ok","value":4}`, func(b []byte) string { return workloads.KVValue(2, workloads.KVReadValue(b)) }, "", history.OpOK, "[2,4]"},
		{"key does not exist", wire.ReplyHead{Type: "error", Code: code(20), Text: "no such key"}, "", nil, "", history.OpFail, "no such key"},
		{"precondition failed", wire.ReplyHead{Type: "error", Code: code(22)}, "", nil, "", history.OpFail, "error 22"},
		{"temporarily unavailable", wire.ReplyHead{Type: "error", Code: code(11), Text: "not the leader"}, "", nil, "", history.OpFail, "not the leader"},
		{"a timeout error is indefinite", wire.ReplyHead{Type: "error", Code: code(0), Text: "timed out"}, "", nil, "", history.OpInfo, "timed out"},
		{"a crash is indefinite", wire.ReplyHead{Type: "error", Code: code(13)}, "", nil, "", history.OpInfo, "error 13"},
		{"a code of one's own, definite", wire.ReplyHead{Type: "error", Code: code(1001), Definite: true}, "", nil, "", history.OpFail, "error 1001"},
		{"a code of one's own", wire.ReplyHead{Type: "error", Code: code(1001), Text: "?"}, "", nil, "", history.OpInfo, "?"},
		{"a final read of a key with no value", wire.ReplyHead{Type: "error", Code: code(20), Text: "no such key"}, "", nil, "[2,null]", history.OpOK, "[2,null]"},
		{"a final read's other errors", wire.ReplyHead{Type: "error", Code: code(11), Text: "not the leader"}, "", nil, "[2,null]", history.OpFail, "not the leader"},
		{"a final read answered", wire.ReplyHead{Type: "read_ok"}, `{"type":"read_ok","value":4}`, func(b []byte) string { return workloads.KVValue(2, workloads.KVReadValue(b)) }, "[2,null]", history.OpOK, "[2,4]"},
	}
	for _, tt := range tests {
		typ, value := workloads.Outcome(tt.head, []byte(tt.body), tt.result, tt.absent)
		if typ != tt.typ || value != tt.want {
			t.Errorf("%s: got %s %q, want %s %q", tt.name, typ, value, tt.typ, tt.want)
		}
	}
}
