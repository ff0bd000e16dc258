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
		// Whole microseconds below a millisecond; nanoseconds below that.
		{307_400_000, 308_258_479, "", "from 0.307s to 0.308s (858µs)"},
		{307_100_000, 307_100_450, "", "at 0.307s, for 450ns"},
	}
	for _, tt := range tests {
		if got := fmtSpan(tt.from, tt.to, tt.until); got != tt.want {
			t.Errorf("fmtSpan(%d, %d, %q) = %q, want %q", tt.from, tt.to, tt.until, got, tt.want)
		}
	}
}
