package nodes

import (
	"strings"
	"testing"
	"time"
)

func TestPositiveDuration(t *testing.T) {
	for _, tt := range []struct {
		values map[string]any
		want   time.Duration
		err    string
	}{
		{map[string]any{}, 5 * time.Millisecond, ""},
		{map[string]any{"eta": "20ms"}, 20 * time.Millisecond, ""},
		{map[string]any{"eta": "0s"}, 0, "params.eta: must be more than zero, got 0s"},
		{map[string]any{"eta": "-1ms"}, 0, "params.eta: negative duration"},
		{map[string]any{"eta": "soon"}, 0, "params.eta: bad duration"},
	} {
		got, err := NewParams(tt.values).PositiveDuration("eta", 5*time.Millisecond)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("%v: got %v, %v; want %v", tt.values, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%v: got error %v, want %q", tt.values, err, tt.err)
		}
	}
}
