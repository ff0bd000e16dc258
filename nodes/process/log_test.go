package process

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// A node's log is one JSON object per line, with the keys coup's node logs
// have always had: time, level in lower case, message, and the fields; a
// field of the node's own called "msg" (a message id) stays a field.
func TestLogLines(t *testing.T) {
	var b bytes.Buffer
	log := NewLog(&b, "bully").With("node", "n1")
	log.Warn("rejected an unparsable line", "error", errors.New("bad json"), "msg", int64(7))
	log.Debug("from memberlist")

	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), b.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, lines[0])
	}
	want := map[string]any{"level": "warn", "message": "rejected an unparsable line", "algo": "bully", "node": "n1", "error": "bad json", "msg": 7.0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v in %s", k, got[k], v, lines[0])
		}
	}
	ts, _ := got["time"].(string)
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		t.Errorf("time %q: %v", ts, err)
	}
	if len(got) != len(want)+1 {
		t.Errorf("keys %v, want those of %v and time", got, want)
	}
	if !strings.Contains(lines[1], `"level":"debug"`) {
		t.Errorf("the debug line is not at level debug: %s", lines[1])
	}
}
