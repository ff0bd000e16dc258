package servers

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/workloads"
)

// A publish's outcome, from what nats.go returned: JetStream's
// acknowledgement by the stream is an add_ok; no responders and an API
// error (the stream refused it) surely did not happen (fail); anything
// else may have (info).
func TestNatsAddAnswer(t *testing.T) {
	refused := &jetstream.APIError{Code: 503, ErrorCode: 10077, Description: "maximum messages exceeded"}
	for _, tt := range []struct {
		name     string
		ack      *jetstream.PubAck
		err      error
		want     string // the answer, or "definite" / "unknown"
		definite bool
	}{
		{"acknowledged", &jetstream.PubAck{Stream: scenario.NatsStream, Sequence: 12}, nil, `{"type":"add_ok"}`, false},
		{"a duplicate, acknowledged", &jetstream.PubAck{Stream: scenario.NatsStream, Sequence: 12, Duplicate: true}, nil, `{"type":"add_ok"}`, false},
		{"by another stream", &jetstream.PubAck{Stream: "other"}, nil, "unknown", false},
		{"no responders", nil, jetstream.ErrNoStreamResponse, "definite", true},
		{"no responders, from the connection", nil, nats.ErrNoResponders, "definite", true},
		{"refused by the stream", nil, fmt.Errorf("nats: %w", refused), "definite", true},
		{"no acknowledgement in time", nil, context.DeadlineExceeded, "unknown", false},
		{"the connection closed", nil, nats.ErrConnectionClosed, "unknown", false},
		{"an acknowledgement that is no JSON", nil, jetstream.ErrInvalidJSAck, "unknown", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, err := natsAddAnswer(tt.ack, tt.err)
			switch {
			case err == nil && string(body) != tt.want:
				t.Errorf("answered %s, want %s", body, tt.want)
			case err != nil && tt.want != "definite" && tt.want != "unknown":
				t.Errorf("error %v, want %s", err, tt.want)
			case err != nil && errors.Is(err, errDefinite) != tt.definite:
				t.Errorf("error %v: definite %v, want %v", err, errors.Is(err, errDefinite), tt.definite)
			}
		})
	}
}

// The read's answer: the elements in increasing order, then what is no
// element as its text; as the history records it.
func TestNatsSetAnswer(t *testing.T) {
	got := workloads.SetReadValue(natsSetAnswer([][]byte{[]byte("12"), []byte("3"), []byte("hello"), []byte("7")}))
	if want := `[3,7,12,"hello"]`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := workloads.SetReadValue(natsSetAnswer(nil)); got != "[]" {
		t.Errorf("an empty stream read %s, want []", got)
	}
}

// A session's episode publishes under its prefix, so that its final
// read reads its own elements only.
func TestNatsSubject(t *testing.T) {
	for prefix, want := range map[string]string{"": "coup.set", "e3-": "coup.e3-set"} {
		if got := newNatsSet(nil, prefix).subject(); got != want {
			t.Errorf("prefix %q: subject %q, want %q", prefix, got, want)
		}
	}
}
