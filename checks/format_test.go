package checks

import "testing"

func TestFmtSpan(t *testing.T) {
	tests := []struct {
		from, to int64
		until    string
		want     string
	}{
		{1203e6, 1250e6, "", "from 1.203s to 1.250s (47ms)"},
		{307_100_000, 307_430_000, "", "at 0.307s, for 330µs"},
		{100e6, 100e6, "the end", "from 0.100s to the end (0s)"},
	}
	for _, tt := range tests {
		if got := fmtSpan(tt.from, tt.to, tt.until); got != tt.want {
			t.Errorf("fmtSpan(%d, %d, %q) = %q, want %q", tt.from, tt.to, tt.until, got, tt.want)
		}
	}
}
