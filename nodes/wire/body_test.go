package wire

import (
	"strings"
	"testing"
)

func TestRequestAndReplyBodies(t *testing.T) {
	tests := []struct {
		name    string
		got     func() ([]byte, error)
		want    string
		wantErr string
	}{
		{"a request without fields", func() ([]byte, error) { return Request("elect", 3, nil) }, `{"type":"elect","msg_id":3}`, ""},
		{"a request with fields, in their order", func() ([]byte, error) { return Request("cas", 7, []byte(`{"key":1, "from":2,"to":3}`)) }, `{"type":"cas","msg_id":7,"key":1, "from":2,"to":3}`, ""},
		{"empty fields", func() ([]byte, error) { return Request("read", 1, []byte(` {} `)) }, `{"type":"read","msg_id":1}`, ""},
		{"fields that are not an object", func() ([]byte, error) { return Request("read", 1, []byte(`[1]`)) }, "", "not a JSON object"},
		{"fields that set msg_id", func() ([]byte, error) { return Request("read", 1, []byte(`{"msg_id":2}`)) }, "", `sets "msg_id"`},
		{"an answer with fields", func() ([]byte, error) {
			return Reply("read_ok", 4, struct {
				Value int `json:"value"`
			}{5})
		}, `{"type":"read_ok","in_reply_to":4,"value":5}`, ""},
		{"an answer without fields", func() ([]byte, error) { return Reply("write_ok", 4, nil) }, `{"type":"write_ok","in_reply_to":4}`, ""},
		{"an answer that sets its type", func() ([]byte, error) { return Reply("x_ok", 4, map[string]string{"type": "y"}) }, "", `sets "type"`},
		{"an answer that is no object", func() ([]byte, error) { return Reply("x_ok", 4, 5) }, "", "not a JSON object"},
	}
	for _, tt := range tests {
		got, err := tt.got()
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: got %s, %v; want an error with %q", tt.name, got, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || string(got) != tt.want):
			t.Errorf("%s: got %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}
