package explore

import (
	"math"
	"strings"
	"testing"
)

// Wilson intervals and the seeds to survive, against figures worked out
// by hand (and checked with a statistics package).
func TestFindability(t *testing.T) {
	tests := []struct {
		found, seeds       int
		lo, hi             float64
		estimate, cautious int
	}{
		{8, 1000, 0.0040592, 0.0157063, 373, 737},
		{1, 10, 0.0178762, 0.4041500, 29, 167},
		{269, 1000, 0.2424382, 0.2973298, 10, 11},
		{0, 1000, 0, 0.0038268, 0, 0},
		{1000, 1000, 0.9961732, 1, 1, 1},
	}
	for _, tt := range tests {
		f := Findability{Found: tt.found, Seeds: tt.seeds}
		lo, hi := f.Interval()
		if math.Abs(lo-tt.lo) > 1e-6 || math.Abs(hi-tt.hi) > 1e-6 {
			t.Errorf("%d of %d: interval [%.7f, %.7f], want [%.7f, %.7f]", tt.found, tt.seeds, lo, hi, tt.lo, tt.hi)
		}
		if est, cautious := f.SurviveSeeds(); est != tt.estimate || cautious != tt.cautious {
			t.Errorf("%d of %d: survive %d (%d cautious), want %d (%d)", tt.found, tt.seeds, est, cautious, tt.estimate, tt.cautious)
		}
	}
}

// Surviving Survive(p) seeds is what 95% confidence takes: one seed fewer
// leaves more than a 5% chance of missing a failure still there.
func TestSurvive(t *testing.T) {
	for _, p := range []float64{0.001, 0.008, 0.05, 0.3, 0.9} {
		m := Survive(p)
		if miss := math.Pow(1-p, float64(m)); miss > 0.05 {
			t.Errorf("p=%g: %d seeds miss it with probability %.4f", p, m, miss)
		}
		if miss := math.Pow(1-p, float64(m-1)); miss <= 0.05 {
			t.Errorf("p=%g: %d seeds would do", p, m-1)
		}
		if rule := 3 / p; math.Abs(float64(m)-rule) > 0.2*rule+1 {
			t.Errorf("p=%g: %d seeds, far from the rule of three's %.0f", p, m, rule)
		}
	}
}

func TestFindabilityString(t *testing.T) {
	for _, tt := range []struct {
		f    Findability
		want string
	}{
		{Findability{8, 1000}, "8 of 1000 seeds: per-seed probability 0.8% (95% interval 0.41%–1.57%); a fix must pass 373 seeds in a row for 95% confidence that it is gone (737 at the interval's low end)"},
		{Findability{0, 1000}, "0 of 1000 seeds: per-seed probability below 0.38% (95% confidence)"},
	} {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
	if s := (Findability{269, 1000}).String(); !strings.Contains(s, "26.9%") {
		t.Error(s)
	}
}
